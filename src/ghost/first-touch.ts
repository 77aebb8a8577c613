/**
 * The mechanism behind Phase 2: make the first call of any method of an object observable, without changing
 * the object's identity and without costing anything on later calls.
 *
 * The object is never replaced. Until its first touch each method its prototype chain defines is shadowed by an
 * own, wrapping property of the object; function-valued own properties are swapped for wrappers in place. The
 * first call through any wrapper takes the added properties off again (in reverse order, which V8 undoes by
 * returning to the object's previous hidden class) and puts the original own properties back, so from then on
 * `bean.method()` is an ordinary call on an object indistinguishable, down to its map, from an untracked one.
 * Callers that captured a wrapper earlier (a router stores `instance[method]` at bootstrap) keep it; after the
 * touch it only forwards. See docs/tracking.md for the reasoning and the measurements.
 *
 * Framework-neutral on purpose: nothing here knows about NestJS or OpenTelemetry.
 */
import { EventEmitter } from 'node:events';
import * as stream from 'node:stream';
import { types } from 'node:util';

/** Methods a framework calls on its own during start and shutdown; calling them is not a touch. */
export const DEFAULT_LIFECYCLE_HOOKS: readonly string[] = Object.freeze([
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/** What `installFirstTouch` needs besides the object. */
export interface FirstTouchOptions {
  /** Method names that are never wrapped (framework-called hooks). */
  readonly ignore: ReadonlySet<string>;
  /** Extra prototypes at which the walk up the chain stops, in addition to the built-in ones. */
  readonly stopAt?: ReadonlySet<object>;
  /**
   * Called once, on the first call through any wrapper, after the object has been restored, with
   * `context`. One listener shared by many objects plus a context each costs less heap than a closure each.
   */
  readonly onTouch: (context: unknown) => void;
  /** Handed to `onTouch`. */
  readonly context?: unknown;
}

/** A successfully instrumented object. */
export interface FirstTouchHandle {
  /** How many wrappers were installed (prototype methods plus function-valued own properties). */
  readonly methods: number;
  /** True until the first call. */
  readonly pending: boolean;
}

/** The subset of reflect-metadata's API the wrappers need. Looked up at call time: it may be loaded late or never. */
interface MetadataApi {
  getOwnMetadataKeys(target: object, propertyKey?: string | symbol): unknown[];
  getOwnMetadata(key: unknown, target: object, propertyKey?: string | symbol): unknown;
  hasOwnMetadata(key: unknown, target: object, propertyKey?: string | symbol): boolean;
  defineMetadata(key: unknown, value: unknown, target: object, propertyKey?: string | symbol): void;
}

function metadataApi(): MetadataApi | undefined {
  const r = Reflect as unknown as Partial<MetadataApi> & { getMetadata?: unknown };
  return typeof r.getMetadata === 'function' &&
    typeof r.getOwnMetadataKeys === 'function' &&
    typeof r.getOwnMetadata === 'function' &&
    typeof r.hasOwnMetadata === 'function' &&
    typeof r.defineMetadata === 'function'
    ? (r as MetadataApi)
    : undefined;
}

/**
 * Prototypes whose methods are runtime machinery rather than the bean's own behaviour: a subclass of Map or
 * EventEmitter is tracked through the methods its own class (and user-land ancestors) define, not through
 * `get`, `set`, `on` or `emit`. Native prototypes are recognised by their constructor's source; Node's core
 * classes written in JavaScript are listed.
 */
const CORE_PROTOTYPES: ReadonlySet<object> = new Set<object>(
  ([
    EventEmitter.prototype,
    stream.Stream.prototype,
    stream.Readable.prototype,
    stream.Writable.prototype,
    stream.Duplex.prototype,
    stream.Transform.prototype,
    stream.PassThrough.prototype,
    typeof EventTarget === 'function' ? EventTarget.prototype : undefined,
  ] as Array<object | undefined>).filter((p): p is object => p !== undefined),
);

const fnToString = Function.prototype.toString;

/** Per prototype: a bean module's classes are tracked many times over in tests and multi-app processes. */
const builtinCache = new WeakMap<object, boolean>();

function isBuiltinPrototype(proto: object, extra: ReadonlySet<object> | undefined): boolean {
  if (proto === Object.prototype || CORE_PROTOTYPES.has(proto) || extra?.has(proto) === true) return true;
  let builtin = builtinCache.get(proto);
  if (builtin === undefined) {
    builtin = hasNativeConstructor(proto);
    builtinCache.set(proto, builtin);
  }
  return builtin;
}

function hasNativeConstructor(proto: object): boolean {
  const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value;
  if (typeof ctor !== 'function') return false;
  try {
    return /\{\s*\[native code\]\s*\}\s*$/.test(fnToString.call(ctor));
  } catch {
    return false;
  }
}

/**
 * Whether `fn` can be called with `new`. Methods, arrows and async functions have no own `prototype`;
 * generators have one but are not constructors. Only bound functions need the exact (and, because it throws,
 * slow: microseconds) test.
 */
function isConstructor(fn: Function): boolean {
  if (Object.prototype.hasOwnProperty.call(fn, 'prototype')) return !types.isGeneratorFunction(fn);
  if (!fn.name.startsWith('bound ')) return false;
  try {
    // Only reads fn.prototype, never calls fn.
    Reflect.construct(String, [], fn);
    return true;
  } catch {
    return false;
  }
}

/** Mutable per-instance state shared by all wrappers of one object. */
interface TouchRecord {
  pending: boolean;
  touch(): void;
}

/** Function own properties that `defineProperty` must not copy onto a wrapper (or cannot). */
const FUNCTION_INTRINSICS = new Set<string | symbol>(['length', 'name', 'prototype', 'arguments', 'caller']);

/**
 * Builds the wrapper for one method. The body is the whole steady-state cost of a captured callback: one
 * property read and a forwarding `apply` that returns exactly what the original returned (same promise, same
 * generator object), so `typeof`, `await` and `for await` see no difference.
 */
function makeWrapper(original: Function, rec: TouchRecord, meta: MetadataApi | undefined): Function {
  let wrapper: Function;
  if (isConstructor(original)) {
    // Old-style `function` methods and classes stored as properties can be called with `new`.
    const ctorWrapper = function (this: unknown): unknown {
      if (rec.pending) rec.touch();
      return new.target === undefined
        ? Reflect.apply(original, this, arguments)
        : Reflect.construct(original, arguments, new.target === ctorWrapper ? original : new.target);
    };
    Object.defineProperty(ctorWrapper, 'prototype', { value: (original as { prototype?: unknown }).prototype });
    wrapper = ctorWrapper;
  } else {
    // Method shorthand: like the class methods it stands for, it has no `prototype` and cannot be `new`-ed.
    // The computed key names it natively, which is cheaper than redefining `name` afterwards.
    const name = typeof original.name === 'string' ? original.name : '';
    wrapper = {
      [name](this: unknown): unknown {
        if (rec.pending) rec.touch();
        return Reflect.apply(original, this, arguments);
      },
    }[name]!;
  }
  // `fn.constructor === AsyncFunction`, `Object.prototype.toString` tags and inherited metadata follow the
  // original's [[Prototype]].
  const fnProto = Object.getPrototypeOf(original) as object | null;
  if (Object.getPrototypeOf(wrapper) !== fnProto) Object.setPrototypeOf(wrapper, fnProto);
  for (const key of Reflect.ownKeys(original)) {
    if (key === 'name' || key === 'length') {
      const desc = Object.getOwnPropertyDescriptor(original, key)!;
      const mine = Object.getOwnPropertyDescriptor(wrapper, key);
      const same =
        mine !== undefined &&
        mine.value === desc.value &&
        mine.writable === desc.writable &&
        mine.enumerable === desc.enumerable &&
        mine.configurable === desc.configurable;
      if (!same) Object.defineProperty(wrapper, key, desc);
    } else if (!FUNCTION_INTRINSICS.has(key)) {
      // Some libraries mark handlers with plain properties instead of metadata.
      const desc = Object.getOwnPropertyDescriptor(original, key);
      if (desc !== undefined) Object.defineProperty(wrapper, key, desc);
    }
  }
  if (meta !== undefined) copyOwnMetadata(meta, original, wrapper);
  return wrapper;
}

function copyOwnMetadata(
  meta: MetadataApi,
  from: object,
  to: object,
  propertyKey?: string,
  onlyMissing = false,
): void {
  for (const key of meta.getOwnMetadataKeys(from, propertyKey)) {
    if (onlyMissing && meta.hasOwnMetadata(key, to, propertyKey)) continue;
    meta.defineMetadata(key, meta.getOwnMetadata(key, from, propertyKey), to, propertyKey);
  }
}

/**
 * The state of one instrumented object, and the record its wrappers consult. A class rather than closures:
 * with thousands of beans, per-object closures and their contexts were most of the heap tracking added
 * (bench/tracker/memory.js). Wrappers are kept in flat arrays of exact size for the same reason.
 */
class FirstTouch implements TouchRecord, FirstTouchHandle {
  pending = true;
  readonly methods: number;
  private target: object | undefined;
  private listener: ((context: unknown) => void) | undefined;
  private context: unknown;
  /** Shadowing own properties, in the order they were added: key, original method, wrapper, key, … */
  private added: unknown[] = NONE;
  /** Own function properties swapped in place: key, original descriptor, wrapper, key, … */
  private swapped: unknown[] = NONE;
  /** How many own keys the object had once every wrapper was in place; see `removeAdded`. */
  private keysWhenInstalled = -1;

  constructor(target: object, methods: number, onTouch: (context: unknown) => void, context: unknown) {
    this.target = target;
    this.methods = methods;
    this.listener = onTouch;
    this.context = context;
  }

  /** Throws when a property cannot be defined; `undo` then takes back what was done. */
  install(own: readonly Candidate[], inherited: readonly Candidate[], meta: MetadataApi | undefined): void {
    const target = this.target!;
    if (own.length > 0) this.swapped = new Array<unknown>(own.length * 3).fill(undefined);
    if (inherited.length > 0) this.added = new Array<unknown>(inherited.length * 3).fill(undefined);
    for (let i = 0; i < own.length; i++) {
      const { key, desc } = own[i]!;
      const wrapper = makeWrapper(desc.value, this, meta);
      // Recorded first: if defineProperty throws half-way, undo re-defines the original, which is harmless.
      this.swapped[i * 3] = key;
      this.swapped[i * 3 + 1] = desc;
      this.swapped[i * 3 + 2] = wrapper;
      Object.defineProperty(target, key, { ...desc, value: wrapper });
    }
    for (let i = 0; i < inherited.length; i++) {
      const { key, desc } = inherited[i]!;
      const wrapper = makeWrapper(desc.value, this, meta);
      // Enumerable as the inherited method was, so `for…in` lists the same names; configurable so it can go.
      Object.defineProperty(target, key, { value: wrapper, writable: desc.writable, enumerable: desc.enumerable, configurable: true });
      this.added[i * 3] = key;
      this.added[i * 3 + 1] = desc.value;
      this.added[i * 3 + 2] = wrapper;
    }
    this.keysWhenInstalled = Reflect.ownKeys(target).length;
  }

  /** Takes back a partial install. */
  undo(): void {
    const target = this.target!;
    for (let i = this.added.length - 3; i >= 0; i -= 3) {
      const key = this.added[i] as string | undefined;
      if (key !== undefined && Object.getOwnPropertyDescriptor(target, key)?.value === this.added[i + 2]) {
        safely(() => delete (target as Record<string, unknown>)[key]);
      }
    }
    this.restoreSwapped(target);
    this.release();
  }

  touch(): void {
    if (!this.pending) return;
    this.pending = false;
    const target = this.target!;
    // A failed restore (say the object was frozen after tracking) leaves the wrappers in place: still
    // correct, only not free. It must never surface in the caller's method call.
    safely(() => this.removeAdded(target));
    this.restoreSwapped(target);
    // Metadata someone attached to a wrapper after tracking must still be found on `bean[method]`.
    const m = metadataApi();
    if (m !== undefined) {
      for (let i = 0; i < this.added.length; i += 3) {
        const wrapper = this.added[i + 2] as object;
        const original = this.added[i + 1] as object;
        safely(() => copyOwnMetadata(m, wrapper, original, undefined, true));
      }
      for (let i = 0; i < this.swapped.length; i += 3) {
        const wrapper = this.swapped[i + 2] as object;
        const original = (this.swapped[i + 1] as PropertyDescriptor).value as object;
        safely(() => copyOwnMetadata(m, wrapper, original, undefined, true));
      }
    }
    const listener = this.listener!;
    const context = this.context;
    // Captured wrappers outlive this moment; they should not keep the object's bookkeeping alive.
    this.release();
    try {
      listener(context);
    } catch {
      /* the tracker's bookkeeping must not break the call */
    }
  }

  /**
   * Takes the added wrappers off again. Deleting the most recently added properties in reverse order is the one
   * deletion V8 undoes by going back to the object's previous hidden class, so the bean ends with exactly the
   * map of an untracked instance of its class (a prototype swap would leave it a map of its own, and slower
   * property loads and getters: measured in bench/tracker/shapes.js). If anything was added after the wrappers
   * (a field set in `onModuleInit`), deleting would turn the object into a slow dictionary instead: then each
   * wrapper's slot is pointed at the original method, which keeps the object fast.
   */
  private removeAdded(target: object): void {
    const added = this.added;
    const n = added.length / 3;
    if (n === 0) return;
    const keys = Reflect.ownKeys(target);
    let trailing = keys.length === this.keysWhenInstalled;
    for (let i = 0; trailing && i < n; i++) {
      const key = added[i * 3] as string;
      trailing = keys[keys.length - n + i] === key && Object.getOwnPropertyDescriptor(target, key)?.value === added[i * 3 + 2];
    }
    if (trailing) {
      for (let i = n - 1; i >= 0; i--) delete (target as Record<string, unknown>)[added[i * 3] as string];
      return;
    }
    for (let i = 0; i < n; i++) {
      const key = added[i * 3] as string;
      safely(() => {
        const current = Object.getOwnPropertyDescriptor(target, key);
        if (current !== undefined && current.value === added[i * 3 + 2]) Object.defineProperty(target, key, { value: added[i * 3 + 1] });
      });
    }
  }

  private restoreSwapped(target: object): void {
    const swapped = this.swapped;
    for (let i = swapped.length - 3; i >= 0; i -= 3) {
      const key = swapped[i] as string | undefined;
      if (key === undefined) continue;
      safely(() => {
        const current = Object.getOwnPropertyDescriptor(target, key);
        if (current !== undefined && current.value === swapped[i + 2]) Object.defineProperty(target, key, swapped[i + 1] as PropertyDescriptor);
      });
    }
  }

  private release(): void {
    this.target = undefined;
    this.listener = undefined;
    this.context = undefined;
    this.added = NONE;
    this.swapped = NONE;
  }
}

const NONE: unknown[] = [];

interface Candidate {
  readonly key: string;
  readonly desc: PropertyDescriptor & { value: Function };
}

/**
 * Instruments `target` so that the first call of any of its methods calls `options.onTouch` once.
 * Returns a handle with `methods === 0` (and the object untouched) when there is nothing to wrap.
 * Throws when the object cannot be instrumented; by then every partial change has been undone.
 * The caller is responsible for not instrumenting the same object twice and for skipping Proxies,
 * functions and non-extensible objects.
 */
export function installFirstTouch(target: object, options: FirstTouchOptions): FirstTouchHandle {
  const { ignore, stopAt } = options;
  const seen = new Set<string>();

  const own: Candidate[] = [];
  for (const key of Object.getOwnPropertyNames(target)) {
    seen.add(key);
    if (key === 'constructor' || ignore.has(key)) continue;
    const desc = Object.getOwnPropertyDescriptor(target, key);
    if (desc !== undefined && 'value' in desc && typeof desc.value === 'function') {
      own.push({ key, desc: desc as Candidate['desc'] });
    }
  }

  const inherited: Candidate[] = [];
  for (let p = Object.getPrototypeOf(target) as object | null; p !== null && !isBuiltinPrototype(p, stopAt); p = Object.getPrototypeOf(p)) {
    // Symbol keys are skipped on purpose: iterators and inspection hooks are called by the runtime.
    for (const key of Object.getOwnPropertyNames(p)) {
      if (seen.has(key)) continue; // the closest definition is the one a call reaches
      seen.add(key);
      if (key === 'constructor' || ignore.has(key)) continue;
      const desc = Object.getOwnPropertyDescriptor(p, key);
      if (desc !== undefined && 'value' in desc && typeof desc.value === 'function') {
        inherited.push({ key, desc: desc as Candidate['desc'] });
      }
    }
  }

  const methods = own.length + inherited.length;
  if (methods === 0) return { methods: 0, pending: false };

  const state = new FirstTouch(target, methods, options.onTouch, options.context);
  try {
    state.install(own, inherited, metadataApi());
  } catch (err) {
    state.pending = false;
    state.undo();
    throw err;
  }
  return state;
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    /* best effort */
  }
}
