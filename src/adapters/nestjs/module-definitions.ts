import { createRequire } from 'node:module';
import {
  InstrumentationNodeModuleDefinition,
  InstrumentationNodeModuleFile,
  isWrapped,
} from '@opentelemetry/instrumentation';
import { safeLog } from '../../shared/logger';
import type { ClassOriginIndex } from '../../ghost/origins/class-origin';
import type { NestContainerObserver } from './container-observer';
import { wrapModuleDecorator } from './module-decorator';
import { NEST_LIBRARY_PACKAGES } from './packages';
import { LISTEN_GRACE_MS, NEST_PHASES, NestReady, timed, timedHookPhase, type LifecycleHook } from './boot-phases';

/** `@nestjs/core` majors the hooks are written and tested for. */
export const SUPPORTED_NEST_VERSIONS = ['>=10.0.0 <13'];

/** What the module definitions need from the instrumentation. */
export interface NestPatcher {
  readonly observer: NestContainerObserver;
  readonly origins: ClassOriginIndex;
  /** shimmer-style wrap and unwrap (`src/patching/wrap.ts`). */
  wrap(target: object, name: string, wrapper: (original: never) => unknown): void;
  unwrap(target: object, name: string): void;
  /** Writes the ghost report when a Nest application context closes, then ends its beans' tracking. */
  containerClosed(container: object | undefined): void;
  /** Remembers the detected @nestjs/core version for reports and spans. */
  setNestVersion(version: string | undefined): void;
  /** The first application is ready (listening, or its context initialised): the start-up timeline is complete. */
  startupReady?(): void;
  /** An application context finished closing: the shutdown's hooks are on the timeline. */
  shutdownFinished?(): void;
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

type Proto = Record<string, unknown>;

function prototypeOf(exports: unknown, className: string): Proto | undefined {
  const cls = (exports as Record<string, unknown> | undefined)?.[className];
  const proto = typeof cls === 'function' ? (cls as { prototype?: unknown }).prototype : undefined;
  return proto && typeof proto === 'object' ? (proto as Proto) : undefined;
}

/**
 * One patch of a class method in an internal file of `@nestjs/core`. Patches go on the class prototype,
 * never on the module's exports: an ESM namespace (and a require(esm) one) cannot be redefined.
 */
interface FilePatch {
  readonly file: string;
  readonly className: string;
  readonly method: string;
  readonly wrapper: (p: NestPatcher, ready: NestReady) => (original: never) => unknown;
}

/** A method timed as one phase of the start-up timeline (src/adapters/nestjs/boot-phases.ts). */
function phase(file: string, className: string, method: string, name: string): FilePatch {
  return { file, className, method, wrapper: () => (original: Method) => timed(name, original) };
}

/**
 * A `call…Hook` method of the application context: its phase timed, and each bean's hook within it; `seen`, when
 * given, is told of the application first.
 */
function hookPhase(method: string, hook: LifecycleHook, seen?: (p: NestPatcher, app: unknown) => void): FilePatch {
  return {
    file: 'nest-application-context.js',
    className: 'NestApplicationContext',
    method,
    wrapper: (p) => (original: Method) => {
      const timed = timedHookPhase(hook, original);
      if (seen === undefined) return timed;
      return function hookPhase(this: unknown, ...args: unknown[]) {
        seen(p, this);
        return timed.apply(this, args);
      };
    },
  };
}

const FILE_PATCHES: readonly FilePatch[] = [
  {
    file: 'injector/injector.js',
    className: 'Injector',
    method: 'instantiateClass',
    wrapper: (p) => (original) => p.observer.wrapInstantiateClass(original),
  },
  {
    // useValue providers: the application's instanceDecorator (Nest >= 11.1.4) is applied here, not in an injector.
    file: 'injector/module.js',
    className: 'Module',
    method: 'addCustomValue',
    wrapper: (p) => (original) => p.observer.wrapAddCustomValue(original),
  },
  {
    file: 'injector/instance-loader.js',
    className: 'InstanceLoader',
    method: 'createInstancesOfDependencies',
    wrapper: (p) => (original: Method) =>
      p.observer.wrapCreateInstances(timed(NEST_PHASES.instantiate, original) as never),
  },
  {
    file: 'injector/abstract-instance-resolver.js',
    className: 'AbstractInstanceResolver',
    // Every lookup by token ends here: `get` of an application context (`app.get`, `app.select(m).get`) and
    // of a ModuleRef call `find`; their `resolve` calls `resolvePerContext`.
    method: 'find',
    wrapper: (p) => (original) => p.observer.lookups.wrapFind(original),
  },
  {
    file: 'injector/abstract-instance-resolver.js',
    className: 'AbstractInstanceResolver',
    method: 'resolvePerContext',
    wrapper: (p) => (original) => p.observer.lookups.wrapResolve(original),
  },
  {
    file: 'nest-application-context.js',
    className: 'NestApplicationContext',
    // Both app.close() and the signal handlers of enableShutdownHooks() end with callShutdownHook; the
    // signal path never calls close(), and re-raises the signal right after, so 'exit' never fires.
    method: 'callShutdownHook',
    wrapper: (p, ready) => (original: Method) => {
      const hooks = timedHookPhase('onApplicationShutdown', original);
      return async function callShutdownHook(this: unknown, ...args: unknown[]) {
        try {
          return await hooks.apply(this, args);
        } finally {
          p.containerClosed((this as { container?: object } | null)?.container);
          ready.closed();
        }
      };
    },
  },
  // The start-up timeline's phases (docs/startup.md): each is two clock readings on a method Nest calls once
  // per application, and each lifecycle hook of a bean two more.
  phase('nest-factory.js', 'NestFactoryStatic', 'create', NEST_PHASES.create),
  phase('nest-factory.js', 'NestFactoryStatic', 'createApplicationContext', NEST_PHASES.createContext),
  phase('nest-factory.js', 'NestFactoryStatic', 'createMicroservice', NEST_PHASES.createMicroservice),
  phase('scanner.js', 'DependenciesScanner', 'scan', NEST_PHASES.scan),
  {
    // Timed, and where Phase 2 tracks the middleware Nest has just created, before registerRouter binds their `use`.
    file: 'nest-application.js',
    className: 'NestApplication',
    method: 'registerModules',
    wrapper: (p) => (original: Method) =>
      timed(NEST_PHASES.middleware, original, (app, failed) => {
        if (!failed) p.observer.middlewareCreated(app);
      }),
  },
  phase('nest-application.js', 'NestApplication', 'registerRouter', NEST_PHASES.routes),
  phase('nest-application.js', 'NestApplication', 'dispose', NEST_PHASES.dispose),
  {
    file: 'nest-application.js',
    className: 'NestApplication',
    method: 'init',
    wrapper: (_p, ready) => (original: Method) => ready.init(original, LISTEN_GRACE_MS),
  },
  {
    file: 'nest-application.js',
    className: 'NestApplication',
    method: 'listen',
    wrapper: (_p, ready) => (original: Method) => ready.listen(original),
  },
  {
    file: 'nest-application-context.js',
    className: 'NestApplicationContext',
    method: 'init',
    wrapper: (_p, ready) => (original: Method) => ready.init(original),
  },
  phase('nest-application-context.js', 'NestApplicationContext', 'close', NEST_PHASES.close),
  // Also where each application built on a container is seen, whatever its kind (HTTP, microservice, context): the
  // inventory after ready reads what it serves.
  hookPhase('callInitHook', 'onModuleInit', (p, app) => p.observer.applicationInitialising(app)),
  hookPhase('callBootstrapHook', 'onApplicationBootstrap'),
  hookPhase('callDestroyHook', 'onModuleDestroy'),
  hookPhase('callBeforeShutdownHook', 'beforeApplicationShutdown'),
];

function applyPatch(p: NestPatcher, patch: FilePatch, exports: unknown, ready: NestReady): void {
  const proto = prototypeOf(exports, patch.className);
  if (!proto) {
    safeLog('warn', `@nestjs/core ${patch.file} has no ${patch.className}; that part of the ghost detector is off`);
    return;
  }
  // In ESM apps a file hook can fire twice for the same class.
  if (isWrapped(proto[patch.method])) return;
  if (typeof proto[patch.method] !== 'function') {
    safeLog(
      'warn',
      `${patch.className}.${patch.method} not found in @nestjs/core; that part of the ghost detector is off`,
    );
    return;
  }
  p.wrap(proto, patch.method, patch.wrapper(p, ready));
}

function removePatch(p: NestPatcher, patch: FilePatch, exports: unknown): void {
  const proto = prototypeOf(exports, patch.className);
  if (proto && isWrapped(proto[patch.method])) p.unwrap(proto, patch.method);
}

/**
 * A CommonJS application that requires `@nestjs/core` 12 goes through require() of ESM: the hooks see the
 * package root, never its internal files (the ESM loader loads those). Node keeps a `require.cache` entry
 * for the root, so a require relative to it loads the internal files through the CommonJS hooks — and ESM
 * keeps one module instance per URL, so these are the very classes the application uses.
 */
function reachInternals(
  p: NestPatcher,
  ready: NestReady,
  rootExports: unknown,
  patched: ReadonlyMap<FilePatch, unknown[]>,
  record: (patch: FilePatch, exports: unknown) => void,
): void {
  const missing = FILE_PATCHES.filter((patch) => !patched.has(patch));
  if (missing.length === 0) return;
  let rootFile: string | undefined;
  for (const [file, mod] of Object.entries(require.cache)) {
    if (mod && mod.exports === rootExports) {
      rootFile = file;
      break;
    }
  }
  if (!rootFile) return; // not require(esm): the file hooks handle it, or will
  const requireFromNest = createRequire(rootFile);
  for (const patch of missing) {
    try {
      const exports = requireFromNest(`./${patch.file}`);
      // The require above usually fired the file hook; patch directly only if it did not.
      if (!patched.has(patch)) {
        applyPatch(p, patch, exports, ready);
        record(patch, exports);
      }
    } catch (err) {
      safeLog('warn', `could not reach @nestjs/core/${patch.file}: ${(err as Error).message}`);
    }
  }
}

/** The module definitions the instrumentation hands its module hooks. */
export function nestModuleDefinitions(p: NestPatcher): InstrumentationNodeModuleDefinition[] {
  // Every module instance patched, per file, kept across disable(): a process can load two copies of
  // @nestjs/core (a monorepo, or a Nest package resolving another copy than the application's); disable()
  // must undo both and enable() redo both, while OpenTelemetry hands back only the last. applyPatch and
  // removePatch look at the method itself, so going over a copy twice does nothing.
  const patched = new Map<FilePatch, unknown[]>();
  const ready = new NestReady({
    startupReady: () => p.startupReady?.(),
    shutdownFinished: () => p.shutdownFinished?.(),
  });
  const record = (patch: FilePatch, exports: unknown) => {
    const copies = patched.get(patch);
    if (copies === undefined) patched.set(patch, [exports]);
    else if (!copies.includes(exports)) copies.push(exports);
  };
  const files = FILE_PATCHES.map(
    (patch) =>
      new InstrumentationNodeModuleFile(
        `@nestjs/core/${patch.file}`,
        SUPPORTED_NEST_VERSIONS,
        (exports: unknown) => {
          applyPatch(p, patch, exports, ready);
          record(patch, exports);
          return exports;
        },
        (exports: unknown) => {
          removePatch(p, patch, exports);
          return exports;
        },
      ),
  );
  const core = new InstrumentationNodeModuleDefinition(
    '@nestjs/core',
    SUPPORTED_NEST_VERSIONS,
    (exports: unknown, version?: string) => {
      p.setNestVersion(version);
      p.origins.registerExports(exports, 'library');
      // After disable() and enable(): the copies OpenTelemetry does not hand back get their patches again.
      for (const [patch, copies] of patched) for (const fileExports of copies) applyPatch(p, patch, fileExports, ready);
      reachInternals(p, ready, exports, patched, record);
      return exports;
    },
    (exports: unknown) => {
      // Patches made through reachInternals have no file hook to undo them, nor has a second copy's.
      for (const [patch, copies] of patched) for (const fileExports of copies) removePatch(p, patch, fileExports);
      return exports;
    },
    files,
  );
  // Where each @Module() class is defined, as it is decorated (CommonJS @nestjs/common, Nest 10 and 11).
  const moduleDecorator = new InstrumentationNodeModuleDefinition('@nestjs/common', ['*'], undefined, undefined, [
    new InstrumentationNodeModuleFile(
      '@nestjs/common/decorators/modules/module.decorator.js',
      ['*'],
      (exports: unknown) => {
        // A CommonJS exports object only: an ES module namespace (Nest 12) cannot be redefined, and its
        // applications' origins come from the import hooks anyway.
        const d =
          exports !== null && typeof exports === 'object'
            ? Object.getOwnPropertyDescriptor(exports, 'Module')
            : undefined;
        if (typeof d?.value === 'function' && d.writable === true) {
          p.wrap(exports as object, 'Module', (original: never) => wrapModuleDecorator(original, p.origins));
        }
        return exports;
      },
      (exports: unknown) => {
        if (exports !== undefined && exports !== null) p.unwrap(exports as object, 'Module');
        return exports;
      },
    ),
  ]);
  const libraries = NEST_LIBRARY_PACKAGES.map(
    (name) =>
      new InstrumentationNodeModuleDefinition(name, ['*'], (exports: unknown) => {
        p.origins.registerExports(exports, 'library');
        if (name === '@nestjs/passport') p.observer.passport.packageLoaded(exports);
        return exports;
      }),
  );
  return [core, moduleDecorator, ...libraries];
}
