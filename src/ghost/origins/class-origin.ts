import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { types } from 'node:util';
import { safeLog } from '../../shared/logger';
import type * as DeclaredClassModule from './declared-class';

/*
 * Where a class was declared (source maps, a bundle's text) is asked after ready only: required then, the
 * declarations' and the source maps' modules are no part of a start (26 KB, issue #46).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const declared = (): typeof DeclaredClassModule => require('./declared-class') as typeof DeclaredClassModule;

/**
 * Where a class comes from: the application's own code, a package under node_modules, or Node itself.
 * Adapters need this twice: a bean registered by a library module is a framework bean, and a class extending
 * a library class (`PassportStrategy(Strategy)`, a terminus `HealthIndicator`) is collected by the framework
 * through its base, so it is an entry point.
 *
 * JavaScript keeps no link from a function to its file, so the index learns origins from what the module
 * loaders hold: every CommonJS module's exports (which includes CommonJS packages imported from ESM, and the
 * root of an ESM package a CommonJS app requires), plus namespaces that hooks hand in — the instrumented
 * packages', and every package an ESM application imports (esm-libraries.ts). What it never saw is `unknown`, and callers treat unknown as "not proven
 * external": a missed library base only leaves a candidate on a LOW-confidence list.
 */
export type ClassOrigin = 'app' | 'library' | 'builtin' | 'unknown';

/**
 * How long one turn of the scan of `require.cache` runs after ready ({@link ClassOriginIndex.scanRequireCache}):
 * a readiness probe's request that reached the process meanwhile waits this much at most for that part of the
 * analysis (a small tsyringe application's scan took 5-11 ms of one turn, its first answer behind it).
 */
export const SCAN_TURN_BUDGET_MS = 4;

const NODE_MODULES = `${path.sep}node_modules${path.sep}`;

/** Whether `file` (a path) lies in a node_modules folder: the rule that makes a module a library's. */
export function isLibraryFile(file: string): boolean {
  return file.includes(NODE_MODULES);
}

// Builtin modules whose exported classes users subclass; requiring them is cheap (they are part of core).
const BUILTIN_MODULES = [
  'events',
  'stream',
  'net',
  'http',
  'https',
  'tls',
  'dgram',
  'child_process',
  'worker_threads',
  'async_hooks',
  'fs',
  'readline',
  'zlib',
  'crypto',
  'url',
  'util',
  'buffer',
  'string_decoder',
  'perf_hooks',
];

type AnyFunction = (...args: unknown[]) => unknown;

function isFunction(value: unknown): value is AnyFunction {
  return typeof value === 'function';
}

/**
 * Own data properties only, unless told otherwise: in `require.cache` a getter may load or compute something,
 * and reading must not change the app. A module namespace handed in by a hook is safe to read through.
 *
 * Start-up cost matters here: a real application holds thousands of modules, some exporting thousands of keys
 * (mime tables, the TypeScript compiler). One descriptor at a time for enumerable keys is several times cheaper
 * than `Object.getOwnPropertyDescriptors` of the whole object (bench/startup, "large dependency tree").
 */
function forEachExportedFunction(exports: unknown, visit: (fn: AnyFunction) => void, readGetters = false): void {
  if (isFunction(exports)) visit(exports);
  if (exports === null || (typeof exports !== 'object' && typeof exports !== 'function')) return;
  let keys: string[];
  try {
    keys = isFunction(exports) ? Object.getOwnPropertyNames(exports) : Object.keys(exports);
  } catch {
    return;
  }
  for (const key of keys) {
    let d: PropertyDescriptor | undefined;
    try {
      d = Object.getOwnPropertyDescriptor(exports, key);
    } catch {
      continue; // a Proxy's trap may throw
    }
    if (d === undefined) continue;
    if ('value' in d) {
      if (isFunction(d.value)) visit(d.value);
    } else if (readGetters && d.get) {
      try {
        const value: unknown = (exports as Record<string, unknown>)[key];
        if (isFunction(value)) visit(value);
      } catch {
        /* a binding not yet initialised (circular import) */
      }
    }
  }
}

/** Modules that cannot export a function: skipped without reading their (sometimes very large) exports. */
function exportsNoFunctions(file: string): boolean {
  return file.endsWith('.json') || file.endsWith('.node');
}

export class ClassOriginIndex {
  private readonly origins = new WeakMap<object, ClassOrigin>();
  private scannedModules = new WeakSet<object>();
  /** `require.cache`'s files as a budgeted scan found them, and how far it got (see `scanRequireCache`). */
  private scanQueue: string[] | undefined;
  private scanAt = 0;
  private globalsIndexed = false;
  /** Builtin modules whose classes are not indexed yet (see indexBuiltins). */
  private readonly builtinsPending = new Set<string>(BUILTIN_MODULES);
  /** Length of `process.moduleLoadList` when the pending builtins were last looked for in it. */
  private moduleLoadListSeen = -1;
  /** Where application classes were defined (absolute), for reports and SARIF. */
  private readonly files = new WeakMap<object, string>();
  /** Namespaces seen while modules load, indexed at the first question instead of on the import path. */
  private pending: Array<{ namespace: unknown; file?: string }> = [];

  /** Records every function exported by a namespace or exports object that a hook saw. */
  registerExports(exports: unknown, origin: Exclude<ClassOrigin, 'unknown'>): void {
    forEachExportedFunction(exports, (fn) => this.record(fn, origin), true);
  }

  /**
   * Like `registerExports(namespace, 'library')`, but deferred to the first `originOf` or `libraryAncestor`:
   * called once per module the application imports, so it must cost nothing there.
   */
  registerLibraryLater(namespace: unknown): void {
    this.pending.push({ namespace });
  }

  /** Like {@link registerLibraryLater}, for a module of the application itself, defined in `file`. */
  registerAppLater(namespace: unknown, file: string): void {
    this.pending.push({ namespace, file });
  }

  /**
   * Records where `fn` was defined, when a hook saw its definition (a class decorator reading its caller):
   * a library's when the file lies in a node_modules folder, the application's otherwise. Like every record,
   * never turns a library class into an application one.
   */
  recordDefinition(fn: unknown, file: string): void {
    if (!isFunction(fn)) return;
    const filePath = file.startsWith('file:') ? fileURLToPath(file) : file;
    const origin: ClassOrigin = isLibraryFile(filePath) ? 'library' : 'app';
    this.record(fn, origin, origin === 'app' ? filePath : undefined);
  }

  /** Whether the index can answer for `fn` without scanning `require.cache` (see {@link scanRequireCache}). */
  knows(fn: unknown): boolean {
    return this.originOf(fn) !== 'unknown';
  }

  /**
   * The file an application class was defined in, when known, as the reports name it (relative to the
   * application's root: declared-class.ts's applicationPath): its original source when a source map says what it was compiled from.
   */
  fileOf(fn: unknown): string | undefined {
    const file = this.sourceFileOf(fn);
    return file === undefined ? undefined : declared().applicationPath(file);
  }

  /**
   * The absolute file an application class was defined in: the TypeScript the user edits when the compiled file's
   * map names it (tsc's `sourceMap`, SWC; a bundle's through the class's own text), else the file it was loaded
   * from. Read after ready only, each map once (source-map.ts).
   */
  sourceFileOf(fn: unknown): string | undefined {
    if (!isFunction(fn)) return undefined;
    this.indexPending();
    let file = this.files.get(fn);
    // A bundle's classes are exported by no module: its source map, when it has one, says where each was declared
    // (and a minified file's, under a mangled name). A plain build's file has its own map, one source per file.
    const classes = declared();
    if (file === undefined || classes.looksMangled(fn.name)) {
      const compiled = file ?? classes.mainScript();
      const found = compiled === undefined ? undefined : classes.declaredClass(fn, compiled);
      if (found !== undefined) file = found.source;
    }
    if (file === undefined) return undefined;
    return classes.reportedFileOf(file);
  }

  /**
   * Re-reads `require.cache` for modules loaded since the last call. Cheap to repeat: each module object is
   * visited once. With `budgetMs`, stops once that much time has gone and returns false: the next call goes on
   * where this one stopped (the analysis after ready scans a turn at a time, so that a request is not kept
   * waiting behind 3,600 modules; see the NestJS adapter's analysis slices). Without, it finishes and returns true.
   */
  scanRequireCache(budgetMs = Infinity): boolean {
    let cache: NodeJS.Dict<NodeJS.Module>;
    try {
      cache = require.cache;
    } catch {
      return true;
    }
    const until = budgetMs === Infinity ? Infinity : performance.now() + budgetMs;
    // A scan left half-way goes on first; an unbudgeted call then looks again, for what loaded since.
    for (let fresh = this.scanQueue === undefined; ; fresh = true) {
      if (fresh) {
        this.scanQueue = Object.keys(cache);
        this.scanAt = 0;
      }
      const queue = this.scanQueue!;
      while (this.scanAt < queue.length) {
        const file = queue[this.scanAt++]!;
        this.scanModule(file, cache[file]);
        // The clock every 64 modules: reading it costs more than most modules do. Not after the last module: a
        // scan that is done says so, rather than asking for one more turn that finds nothing to do.
        if ((this.scanAt & 63) === 0 && this.scanAt < queue.length && performance.now() >= until) return false;
      }
      this.scanQueue = undefined;
      if (fresh || budgetMs !== Infinity) return true;
    }
  }

  private scanModule(file: string, mod: NodeJS.Module | undefined): void {
    if (!mod || this.scannedModules.has(mod)) return;
    this.scannedModules.add(mod);
    if (exportsNoFunctions(file)) return;
    // Exports that are a Proxy (a lazy loader's) list their keys through traps, the module's own code. The
    // namespaces hooks hand in are Proxies too, import-in-the-middle's, and are read: their traps are the loader's.
    if (types.isProxy(mod.exports)) return;
    const origin: ClassOrigin = isLibraryFile(file) ? 'library' : 'app';
    forEachExportedFunction(mod.exports, (fn) => this.record(fn, origin, origin === 'app' ? file : undefined));
  }

  /** The origin of one function, as far as the index knows. */
  originOf(fn: unknown): ClassOrigin {
    if (!isFunction(fn)) return 'unknown';
    this.indexPending();
    return this.origins.get(fn) ?? 'unknown';
  }

  /**
   * The first ancestor of `cls` (its base class, the base's base...) that comes from a library, or undefined.
   * Builtins (Object, Map, EventEmitter...) do not count: extending them says nothing about the framework.
   */
  libraryAncestor(cls: unknown): AnyFunction | undefined {
    if (!isFunction(cls)) return undefined;
    this.indexPending();
    let current: unknown = Object.getPrototypeOf(cls);
    for (let depth = 0; isFunction(current) && current !== Function.prototype && depth < 64; depth++) {
      if (this.origins.get(current) === 'library') return current;
      current = Object.getPrototypeOf(current);
    }
    return undefined;
  }

  private record(fn: AnyFunction, origin: ClassOrigin, file?: string): void {
    const known = this.origins.get(fn);
    // A class re-exported by application code stays a library class; builtins are never overridden.
    if (known === 'builtin' || known === 'library') return;
    this.origins.set(fn, origin);
    // The first module seen to export a class is usually where it is defined (a re-export comes later).
    if (file !== undefined && !this.files.has(fn)) this.files.set(fn, file);
  }

  private indexPending(): void {
    this.indexBuiltins();
    if (this.pending.length === 0) return;
    const pending = this.pending;
    this.pending = [];
    for (const { namespace, file } of pending) {
      if (file === undefined) this.registerExports(namespace, 'library');
      else forEachExportedFunction(namespace, (fn) => this.record(fn, 'app', file), true);
    }
  }

  /**
   * Builtin modules the process has loaded: requiring one it has not (tls, dgram, worker_threads...) would
   * cost start-up milliseconds for classes nothing can be holding yet. Those are indexed once they are loaded.
   */
  private indexBuiltins(): void {
    if (!this.globalsIndexed) {
      this.globalsIndexed = true;
      for (const name of Object.getOwnPropertyNames(globalThis)) {
        let value: unknown;
        try {
          const d = Object.getOwnPropertyDescriptor(globalThis, name);
          value = d && 'value' in d ? d.value : undefined;
        } catch {
          continue;
        }
        if (isFunction(value)) this.origins.set(value, 'builtin');
      }
    }
    if (this.builtinsPending.size === 0) return;
    const loaded = (process as { moduleLoadList?: readonly string[] }).moduleLoadList;
    // Looked at again only when the process has loaded something since: this runs on every originOf call.
    if (loaded !== undefined) {
      if (loaded.length === this.moduleLoadListSeen) return;
      this.moduleLoadListSeen = loaded.length;
    }
    for (const name of [...this.builtinsPending]) {
      if (loaded !== undefined && !loaded.includes(`NativeModule ${name}`)) continue;
      this.builtinsPending.delete(name);
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        forEachExportedFunction(require(`node:${name}`), (fn) => this.origins.set(fn, 'builtin'));
      } catch (err) {
        safeLog('debug', `class origin: builtin module ${name} not indexed: ${String(err)}`);
      }
    }
  }
}
