import Module = require('node:module');
import path from 'node:path';
import type { InstrumentationModuleDefinition } from '@opentelemetry/instrumentation';
import {
  BOOT_MARKS,
  loadEnded,
  loadStarted,
  resumeRecordingLoads,
  STEP_KIND,
  stepEnded,
  stepStarted,
  stopRecordingLoads,
} from '../shared/boot-clock';
import { safeLog } from '../shared/logger';
import { importInTheMiddle } from './import-in-the-middle';
import { packageVersionAt } from './package-version';
import { isSupportedVersion, type UnsupportedPackage } from './versions';

/*
 * Runs the adapters' module definitions (OpenTelemetry's InstrumentationNodeModuleDefinition/File, so the
 * adapters keep the format every instrumentation uses) when their packages load.
 *
 * Why not InstrumentationBase: its require-in-the-middle hook sits on every require() of the process, and for
 * each one resolves the module a second time and, for every file inside a package, resolves the package's main
 * entry again to tell it from an internal file. On a NestJS app of 1,500 modules that is ~100 ms of start-up
 * (issue #15), paid for the handful of files the adapters patch. Here CommonJS is seen once per module, after
 * Node has loaded it (`Module.prototype.load`, which receives the resolved filename), and a file costs a
 * `lastIndexOf` and a map lookup unless it belongs to a hooked package. ESM goes through import-in-the-middle,
 * as with InstrumentationBase, and costs nothing unless the application registered its loader hook.
 *
 * The same patch times every load until the process is ready (the start-up timeline's packages): two
 * `performance.now()` readings and three array writes around Node's own `load` (src/shared/boot-clock.ts),
 * grouped into packages only when the timeline is read.
 */

interface CjsModule {
  exports: unknown;
}

type Load = (this: CjsModule, filename: string) => unknown;
type LoadListener = (module: CjsModule, filename: string) => void;

// An array, replaced on change: the loop below runs on every module load of the process, and iterating a Set
// allocates an iterator each time.
let listeners: readonly LoadListener[] = [];
let installedLoad: Load | undefined;
let originalLoad: Load | undefined;
/** `name@version` of every hooked package already checked against its definitions' ranges, for the process. */
const versionsChecked = new Set<string>();

const unsupported: UnsupportedPackage[] = [];

/**
 * Every hooked package loaded so far in a version none of its definitions supports, for the process: what the
 * reports say beside their empty lists, so that "0 tracked" is never read without its reason.
 */
export function unsupportedPackages(): readonly UnsupportedPackage[] {
  return unsupported;
}

function moduleProto(): { load: Load } {
  return (Module as unknown as { prototype: { load: Load } }).prototype;
}

/** One patch of `Module.prototype.load` for the process, however many instrumentations listen. */
function listen(listener: LoadListener): void {
  if (!listeners.includes(listener)) listeners = [...listeners, listener];
  install();
}

/**
 * Times the module loads of the process from now on (the start-up timeline's packages), before any
 * instrumentation is constructed: the entry point calls it, so that a preload that requires this package
 * before the OpenTelemetry SDK sees the SDK's packages load too. The patch is the one the module hooks use.
 */
export function timeModuleLoads(): void {
  resumeRecordingLoads();
  install();
}

/**
 * Stops timing module loads, and takes the patch off when no instrumentation listens: imported by a process
 * that builds no instrumentation in its first turn (a script reading reports) or builds one with
 * `enabled: false`, the package leaves `Module.prototype.load` as it found it.
 */
export function stopTimingModuleLoads(): void {
  stopRecordingLoads();
  if (listeners.length === 0) uninstall();
}

function install(): void {
  if (installedLoad !== undefined) return;
  const proto = moduleProto();
  const original = proto.load;
  originalLoad = original;
  if (Number.isNaN(BOOT_MARKS.loadsTimedFrom)) BOOT_MARKS.loadsTimedFrom = performance.now();
  installedLoad = function load(this: CjsModule, filename: string) {
    const timed = loadStarted(filename);
    let result: unknown;
    try {
      result = original.call(this, filename);
    } finally {
      if (timed >= 0) loadEnded(timed);
    }
    const current = listeners;
    for (let i = 0; i < current.length; i++) {
      const l = current[i]!;
      // the application's require must get its module whatever a listener does
      try {
        l(this, filename);
      } catch (err) {
        safeLog('warn', `module hook failed on ${path.basename(filename)}: ${(err as Error)?.message ?? String(err)}`);
      }
    }
    return result;
  };
  proto.load = installedLoad;
}

function unlisten(listener: LoadListener): void {
  listeners = listeners.filter((l) => l !== listener);
  if (listeners.length === 0) uninstall();
}

function uninstall(): void {
  if (installedLoad === undefined) return;
  const proto = moduleProto();
  // Someone wrapped it after us: ours stays as a pass-through (with no listener) rather than cutting theirs off.
  if (proto.load !== installedLoad) return;
  proto.load = originalLoad!;
  installedLoad = undefined;
  originalLoad = undefined;
}

const NODE_MODULES = `${path.sep}node_modules${path.sep}`;

/** The package a file belongs to: its name as required (`@scope/name`) and its directory; undefined outside node_modules. */
export function packageOf(filename: string): { name: string; dir: string } | undefined {
  const at = filename.lastIndexOf(NODE_MODULES);
  if (at === -1) return undefined;
  const start = at + NODE_MODULES.length;
  let end = filename.indexOf(path.sep, start);
  if (end !== -1 && filename.charCodeAt(start) === 64 /* @ */) end = filename.indexOf(path.sep, end + 1);
  if (end === -1) return undefined;
  return { name: posix(filename.slice(start, end)), dir: filename.slice(0, end) };
}

function posix(p: string): string {
  return path.sep === '/' ? p : p.split(path.sep).join('/');
}

/** `compute(key)` once per key, failures included (as undefined). */
function memo(
  cache: Map<string, string | undefined>,
  key: string,
  compute: () => string | undefined,
): string | undefined {
  if (cache.has(key)) return cache.get(key);
  let value: string | undefined;
  try {
    value = compute();
  } catch {
    value = undefined;
  }
  cache.set(key, value);
  return value;
}

/** `@scope/name` or `name`, the package part of a hook name such as `@nestjs/core/injector/injector.js`. */
function packageNameOf(hookName: string): string {
  const parts = posix(hookName).split('/');
  return hookName.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/**
 * Module definitions built when first needed: the packages they hook are named up front, and the definitions
 * (with the adapter code they load) are built when a file of one of those packages first loads, or when
 * someone asks for them. A NestJS application never loads the lazy containers' adapters, nor an awilix one
 * NestJS's: built at construction, the four adapters' definitions were 11 M instructions of an awilix app's
 * 1,950 M start-up (`bench:instructions`, issue #46), most of it Node's loader on their modules.
 */
export interface DeferredDefinitions {
  /** Every package the definitions hook (`@nestjs/core`): the first to load builds them all. */
  readonly packages: readonly string[];
  build(): readonly InstrumentationModuleDefinition[];
}

function isDeferred(source: InstrumentationModuleDefinition | DeferredDefinitions): source is DeferredDefinitions {
  return typeof (source as DeferredDefinitions).build === 'function';
}

/**
 * The module definitions of one instrumentation, hooked into the CommonJS loader and import-in-the-middle.
 * `enable()` also runs them on hooked packages already in `require.cache` (an application that imported NestJS
 * before starting the SDK is patched then, not missed); `disable()` runs every unpatch on what was patched.
 */
export class ModuleHooks {
  private readonly byPackage = new Map<string, InstrumentationModuleDefinition[]>();
  /** Definitions not built yet, by each package they hook. */
  private readonly deferred = new Map<string, DeferredDefinitions>();
  /** Every definition built so far, in order. */
  private readonly built: InstrumentationModuleDefinition[] = [];
  /** The files the definitions patch (`@nestjs/core/injector/injector.js`): every other file of a hooked package is passed by. */
  private readonly hookedFiles = new Set<string>();
  /** Every range a package's definitions and their files name: a version outside all of them is said once. */
  private readonly rangesByPackage = new Map<string, string[]>();
  private readonly versions = new Map<string, string | undefined>();
  private readonly mains = new Map<string, string | undefined>();
  private enabled = false;
  private esmHooked = false;
  private loadedScanned = false;

  constructor(sources: ReadonlyArray<InstrumentationModuleDefinition | DeferredDefinitions>) {
    for (const source of sources) {
      if (!isDeferred(source)) this.add(source);
      else for (const name of source.packages) this.deferred.set(name, source);
    }
  }

  /** Every definition, the deferred ones built now (OpenTelemetry's `getModuleDefinitions()`). */
  definitions(): InstrumentationModuleDefinition[] {
    for (const source of new Set(this.deferred.values())) this.build(source);
    return [...this.built];
  }

  private add(def: InstrumentationModuleDefinition): void {
    this.built.push(def);
    const list = this.byPackage.get(def.name);
    if (list === undefined) this.byPackage.set(def.name, [def]);
    else list.push(def);
    for (const file of def.files) this.hookedFiles.add(posix(file.name));
    let ranges = this.rangesByPackage.get(def.name);
    if (ranges === undefined) this.rangesByPackage.set(def.name, (ranges = []));
    for (const range of [def.supportedVersions, ...def.files.map((file) => file.supportedVersions)].flat()) {
      if (!ranges.includes(range)) ranges.push(range);
    }
  }

  /** Builds deferred definitions once; a build that throws leaves that container unhooked, said once. */
  private build(source: DeferredDefinitions): void {
    for (const name of source.packages) if (this.deferred.get(name) === source) this.deferred.delete(name);
    const defs = this.guard(source.packages[0] ?? 'module definitions', () => source.build()) as
      readonly InstrumentationModuleDefinition[] | undefined;
    for (const def of defs ?? []) this.add(def);
  }

  /** The definitions hooking package `name`, built first if they were deferred; undefined for a package not hooked. */
  private definitionsOf(name: string): InstrumentationModuleDefinition[] | undefined {
    const defs = this.byPackage.get(name);
    if (defs !== undefined) return defs;
    const source = this.deferred.get(name);
    if (source === undefined) return undefined;
    this.build(source);
    return this.byPackage.get(name);
  }

  private readonly onLoad: LoadListener = (module, filename) => {
    const pkg = packageOf(filename);
    if (pkg === undefined) return;
    const defs = this.definitionsOf(pkg.name);
    if (defs === undefined) return;
    const name =
      this.mainOf(pkg.name, pkg.dir) === filename
        ? pkg.name
        : `${pkg.name}/${posix(filename.slice(pkg.dir.length + 1))}`;
    if (name !== pkg.name && !this.hookedFiles.has(name)) return;
    // Our own cost on the application's start-up, a step of the timeline (a few files per process).
    const step = stepStarted(STEP_KIND.diag, 'diag.patch', name);
    try {
      const patched = this.run(defs, module.exports, name, this.versionOf(pkg.dir));
      if (patched !== module.exports) module.exports = patched;
    } finally {
      stepEnded(step);
    }
  };

  enable(): void {
    if (this.enabled) return;
    this.enabled = true;
    // After a disable(): what was patched before gets its patches back (the hooks will not see it load again).
    for (const def of this.built) {
      if (def.moduleExports !== undefined && def.patch)
        this.guard(def.name, () => def.patch!(def.moduleExports, def.moduleVersion));
      for (const file of def.files) {
        if (file.moduleExports !== undefined)
          this.guard(file.name, () => file.patch(file.moduleExports, def.moduleVersion));
      }
    }
    listen(this.onLoad);
    this.hookEsm();
    this.patchLoaded();
  }

  disable(): void {
    if (!this.enabled) return;
    this.enabled = false;
    unlisten(this.onLoad);
    for (const def of this.built) {
      if (def.moduleExports !== undefined && def.unpatch)
        this.guard(def.name, () => def.unpatch!(def.moduleExports, def.moduleVersion));
      for (const file of def.files) {
        if (file.moduleExports !== undefined)
          this.guard(file.name, () => file.unpatch(file.moduleExports, def.moduleVersion));
      }
    }
  }

  /** The definitions of one package applied to a module of it: `name` is the package itself or one of its files. */
  private run(
    defs: readonly InstrumentationModuleDefinition[],
    exports: unknown,
    name: string,
    version: string | undefined,
  ): unknown {
    if (!this.enabled) return exports;
    this.checkVersion(defs[0]!.name, version);
    let current = exports;
    for (const def of defs) {
      if (name === def.name) {
        if (!this.supported(def.name, def.supportedVersions, version)) continue;
        def.moduleVersion = version;
        if (!def.patch) continue;
        def.moduleExports = current;
        const input = current;
        current = this.guard(def.name, () => def.patch!(input, version)) ?? input;
        continue;
      }
      for (const file of def.files) {
        if (file.name !== name || !this.supported(file.name, file.supportedVersions, version)) continue;
        def.moduleVersion = version;
        file.moduleExports = current;
        const input = current;
        current = this.guard(file.name, () => file.patch(input, version)) ?? input;
      }
    }
    return current;
  }

  /** A hook must never break the application's require: a patch that throws leaves the module as loaded. */
  private guard(what: string, fn: () => unknown): unknown {
    try {
      return fn();
    } catch (err) {
      safeLog('warn', `patching ${what} failed; that part of the detector is off: ${(err as Error).message}`);
      return undefined;
    }
  }

  /**
   * A version outside every range of its package's definitions gets none of their patches, which would leave the
   * detector quietly blind to that container: said once per package and version, with what is supported.
   */
  private checkVersion(packageName: string, version: string | undefined): void {
    const key = `${packageName}@${version ?? ''}`;
    if (versionsChecked.has(key)) return;
    versionsChecked.add(key);
    const ranges = this.rangesByPackage.get(packageName) ?? [];
    if (this.supported(packageName, ranges, version)) return;
    unsupported.push({ package: packageName, ...(version !== undefined ? { version } : {}), supported: [...ranges] });
    const loaded = version ?? 'of unknown version (no readable package.json)';
    safeLog(
      'warn',
      `${packageName} ${loaded} is outside the versions diag-instrumentation supports (${ranges.join(', ')}): ` +
        'it is left unpatched and the detector sees nothing of it',
    );
  }

  private supported(what: string, ranges: readonly string[], version: string | undefined): boolean {
    try {
      return isSupportedVersion(ranges, version);
    } catch (err) {
      safeLog('warn', `${what}: ${(err as Error).message}`);
      return false;
    }
  }

  private versionOf(dir: string): string | undefined {
    return memo(this.versions, dir, () => packageVersionAt(dir));
  }

  /** The file `require(name)` loads for the copy in `dir` (resolved once per copy): what tells the entry from the rest. */
  private mainOf(name: string, dir: string): string | undefined {
    return memo(this.mains, dir, () => require.resolve(name, { paths: [dir] }));
  }

  /** import-in-the-middle hooks for ESM packages: live only when the application registered the loader hook. */
  private hookEsm(): void {
    if (this.esmHooked || this.byPackage.size + this.deferred.size === 0) return;
    this.esmHooked = true;
    try {
      const iitm = importInTheMiddle();
      const names = [...new Set([...this.byPackage.keys(), ...this.deferred.keys()])];
      new iitm.Hook(names, { internals: true }, (namespace, name, baseDir) => {
        if (baseDir === undefined) return namespace;
        const defs = this.definitionsOf(packageNameOf(name));
        if (defs === undefined) return namespace;
        return this.run(defs, namespace, posix(name), this.versionOf(baseDir));
      });
    } catch (err) {
      safeLog('debug', `ESM packages not hooked: import-in-the-middle not found (${(err as Error).message})`);
    }
  }

  /**
   * Hooked packages the application required before the instrumentation was enabled, in load order. Once per
   * instance: after a disable(), enable() re-patches from what was recorded.
   */
  private patchLoaded(): void {
    if (this.loadedScanned) return;
    this.loadedScanned = true;
    const early = new Set<string>();
    // By the time an SDK constructs the instrumentation, the cache holds a thousand modules or more: keys, not
    // entries (an array per module), and only a hooked package's files are looked up.
    const cache = require.cache;
    for (const filename of Object.keys(cache)) {
      const pkg = packageOf(filename);
      if (pkg === undefined || !(this.byPackage.has(pkg.name) || this.deferred.has(pkg.name))) continue;
      const module = cache[filename];
      if (module === undefined || !module.loaded) continue;
      early.add(pkg.name);
      this.onLoad(module, filename);
    }
    if (early.size > 0)
      safeLog('debug', `loaded before the instrumentation was enabled, patched now: ${[...early].join(', ')}`);
  }
}
