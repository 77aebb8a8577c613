/**
 * The mechanism behind Phase 2: make the first call of any method of an object observable, without changing
 * the object's identity and without costing anything on later calls.
 *
 * The object itself is never changed. The methods its prototype chain defines are wrapped on its class
 * prototype, one set of wrappers per prototype (a site) shared by every tracked instance of the class; its
 * function-valued own properties are swapped for wrappers in place. A wrapper's call on a pending instance is
 * its touch. When no instance of a class is pending any more, the prototype gets its methods back and a fresh
 * hidden class, so from then on `bean.method()` is an ordinary call on an object indistinguishable, down to
 * its map, from an untracked one. Callers that captured a wrapper earlier (a router stores `instance[method]`
 * at bootstrap) keep it; after the touch it only forwards. See docs/tracking.md for the reasoning and the
 * measurements of the designs this one replaced.
 *
 * Framework-neutral on purpose: nothing here knows about NestJS or OpenTelemetry.
 */
import { EventEmitter } from 'node:events';
import stream from 'node:stream';
import { types } from 'node:util';

export { DEFAULT_LIFECYCLE_HOOKS } from './lifecycle-hooks';

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
  /**
   * Stops observing without a touch (the application closed): the object and its class are as if it had never
   * been tracked, and `onTouch` is never called. No-op once touched.
   */
  end(): void;
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

/**
 * What a wrapper consults on each call: a field that is `false` once nothing is left to observe (the whole
 * steady-state cost of a captured wrapper) and the call that observes.
 */
interface Gate {
  armed: boolean;
  enter(receiver: unknown, key: string): void;
}

/** Function own properties that `defineProperty` must not copy onto a wrapper (or cannot). */
const FUNCTION_INTRINSICS = new Set<string | symbol>(['length', 'name', 'prototype', 'arguments', 'caller']);

/** Every wrapper made here, to its original: a method found already wrapped is wrapped at its original. */
const originals = new WeakMap<Function, Function>();

/**
 * The method a first-touch wrapper stands for, or `fn` itself. For analyses that must call a tracked bean's
 * method without that call counting as the application's touch.
 */
export function originalOf<T extends Function>(fn: T): T {
  return (originals.get(fn) as T | undefined) ?? fn;
}

/**
 * Builds the wrapper for one method. The body is the whole steady-state cost of a captured callback: one
 * property read and a forwarding `apply` that returns exactly what the original returned (same promise, same
 * generator object), so `typeof`, `await` and `for await` see no difference.
 */
function makeWrapper(original: Function, key: string, gate: Gate, meta: MetadataApi | undefined): Function {
  let wrapper: Function;
  if (isConstructor(original)) {
    // Old-style `function` methods and classes stored as properties can be called with `new`.
    const ctorWrapper = function (this: unknown): unknown {
      if (gate.armed) gate.enter(this, key);
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
        if (gate.armed) gate.enter(this, key);
        return Reflect.apply(original, this, arguments);
      },
    }[name]!;
  }
  // `fn.constructor === AsyncFunction`, `Object.prototype.toString` tags and inherited metadata follow the
  // original's [[Prototype]].
  const fnProto = Object.getPrototypeOf(original) as object | null;
  if (Object.getPrototypeOf(wrapper) !== fnProto) Object.setPrototypeOf(wrapper, fnProto);
  for (const ownKey of Reflect.ownKeys(original)) {
    if (ownKey === 'name' || ownKey === 'length') {
      const desc = Object.getOwnPropertyDescriptor(original, ownKey)!;
      const mine = Object.getOwnPropertyDescriptor(wrapper, ownKey);
      const same =
        mine !== undefined &&
        mine.value === desc.value &&
        mine.writable === desc.writable &&
        mine.enumerable === desc.enumerable &&
        mine.configurable === desc.configurable;
      if (!same) Object.defineProperty(wrapper, ownKey, desc);
    } else if (!FUNCTION_INTRINSICS.has(ownKey)) {
      // Some libraries mark handlers with plain properties instead of metadata.
      const desc = Object.getOwnPropertyDescriptor(original, ownKey);
      if (desc !== undefined) Object.defineProperty(wrapper, ownKey, desc);
    }
  }
  if (meta !== undefined) copyOwnMetadata(meta, original, wrapper);
  originals.set(wrapper, original);
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

/** Metadata someone attached to a wrapper after it was made must still be found on the method it stood for. */
function keepLateMetadata(wrapper: Function, original: Function): void {
  const m = metadataApi();
  if (m !== undefined) safely(() => copyOwnMetadata(m, wrapper, original, undefined, true));
}

/** Objects with a pending first touch through wrappers on their prototype. */
const pendingObjects = new WeakMap<object, FirstTouch>();
const isPrototypeOf = Object.prototype.isPrototypeOf;
/** The wrappers installed on a prototype, by prototype. */
const sites = new WeakMap<object, PrototypeSite>();
/**
 * The wrappers on one prototype: the class prototype of one or more tracked objects. A wrapper observes the
 * objects still pending in `pendingObjects` (other instances of the class, untracked, only pass through); when
 * the last of them has been touched the prototype gets its original methods back.
 */
class PrototypeSite implements Gate {
  armed = false;
  /**
   * The tracked objects of this prototype not yet touched. Held strongly: a site lives as long as its class,
   * so the tracker ends the tracking of an application's beans when the application closes (`end()`), which
   * takes them out. (Weak references cost ~180 bytes per bean, more than a third of all the rest.)
   */
  private member: FirstTouch | undefined;
  /** Members beyond the first (the same class tracked more than once), rare. */
  private more: readonly FirstTouch[] = NO_MEMBERS;
  /**
   * Per wrapped key, four slots: key, the attributes of the prototype's own method it replaced (ADDED when
   * the wrapper shadows an inherited one), wrapper, original. Flat and of exact size: one site per class.
   */
  private entries: unknown[] = NONE;

  constructor(private readonly proto: object) {}

  /** Wraps what is not wrapped yet. Throws when the prototype refuses a property; `release` takes it back. */
  cover(methods: readonly Candidate[], meta: MetadataApi | undefined): void {
    const added: unknown[] = [];
    try {
      for (const { key, desc } of methods) {
        if (this.covers(key)) continue;
        const own = Object.getOwnPropertyDescriptor(this.proto, key);
        const original = originalOf(desc.value);
        const wrapper = makeWrapper(original, key, this, meta);
        // The attributes of the method a lookup reaches; configurable so that it can be taken off again.
        Object.defineProperty(this.proto, key, {
          value: wrapper,
          writable: desc.writable,
          enumerable: desc.enumerable,
          configurable: own === undefined ? true : own.configurable,
        });
        added.push(key, own === undefined ? ADDED : attributesOf(own), wrapper, original);
      }
    } finally {
      this.entries = this.entries.concat(added);
    }
  }

  private covers(key: string): boolean {
    for (let i = 0; i < this.entries.length; i += 4) if (this.entries[i] === key) return true;
    return false;
  }

  hold(member: FirstTouch): void {
    // replaced, not grown: an array grown by push reserves room for 17
    if (this.member === undefined) this.member = member;
    else this.more = [...this.more, member];
    this.armed = true;
  }

  private members(): FirstTouch[] {
    return this.member === undefined ? [...this.more] : [this.member, ...this.more];
  }

  /**
   * One of this prototype's tracked objects was touched (or its install failed). The last one gives the
   * prototype back its methods. Before that, a touched object would keep calling through the wrappers while
   * its siblings stay pending (the same class provided twice, one copy unused): it gets own properties
   * holding the original methods instead, so its calls are direct again, on a hidden class of its own.
   */
  drop(member: FirstTouch, touched: object | undefined): void {
    if (this.member === member) {
      this.member = this.more[0];
      this.more = this.more.length <= 1 ? NO_MEMBERS : this.more.slice(1);
    } else if (this.more.includes(member)) {
      this.more = this.more.length === 1 ? NO_MEMBERS : this.more.filter((m) => m !== member);
    } else {
      return;
    }
    if (this.member === undefined) {
      this.release();
      return;
    }
    if (touched === undefined) return;
    const target = touched;
    for (let i = 0; i < this.entries.length; i += 4) {
      const key = this.entries[i] as string;
      const wrapper = this.entries[i + 2] as Function;
      if (Object.prototype.hasOwnProperty.call(target, key)) continue;
      const desc = Object.getOwnPropertyDescriptor(this.proto, key);
      if (desc?.value !== wrapper) continue;
      const original = this.entries[i + 3] as Function;
      safely(() => Object.defineProperty(target, key, { ...desc, value: original, configurable: true }));
      keepLateMetadata(wrapper, original);
    }
  }

  /**
   * Finds whom a call through one of this prototype's wrappers touches: the receiver when it is pending.
   * Another, untracked instance of the class touches nobody. A call that names no instance of the class —
   * a method passed around unbound, or called through a Proxy of the bean — may be any pending member's:
   * all of them count as touched, since calling a used bean a ghost is the error this report must not make.
   */
  enter(receiver: unknown, key: string): void {
    if (typeof receiver === 'object' && receiver !== null) {
      const member = pendingObjects.get(receiver);
      if (member !== undefined) return member.enter(receiver, key);
      if (!types.isProxy(receiver) && isPrototypeOf.call(this.proto, receiver)) {
        // An object made with Object.create(bean) calls on the bean's behalf (passport does this with
        // strategies); a separate instance of the class touches nobody.
        for (let p = Object.getPrototypeOf(receiver) as object | null; p !== null && p !== this.proto; p = Object.getPrototypeOf(p)) {
          const owner = pendingObjects.get(p);
          if (owner !== undefined) return owner.enter(p, key);
        }
        return;
      }
    }
    for (const member of this.members()) member.enter(receiver, key);
  }

  /** Disarms the wrappers and puts the prototype's methods back, unless someone replaced a wrapper meanwhile. */
  private release(): void {
    this.armed = false;
    sites.delete(this.proto);
    const proto = this.proto as Record<string, unknown>;
    for (let i = this.entries.length - 4; i >= 0; i -= 4) {
      const key = this.entries[i] as string;
      const attributes = this.entries[i + 1] as number;
      const wrapper = this.entries[i + 2] as Function;
      const original = this.entries[i + 3] as Function;
      safely(() => {
        if (Object.getOwnPropertyDescriptor(proto, key)?.value !== wrapper) return;
        if (attributes === ADDED) delete proto[key];
        else Object.defineProperty(proto, key, { value: original, ...descriptorOf(attributes) });
      });
      keepLateMetadata(wrapper, original);
    }
    this.entries = NONE;
    renew(this.proto);
  }
}

/** Attributes of a data property as three bits, so that a site keeps an int per method instead of a descriptor. */
const WRITABLE = 1;
const ENUMERABLE = 2;
const CONFIGURABLE = 4;
/** The wrapper was added on the prototype, shadowing an inherited method. */
const ADDED = -1;

function attributesOf(desc: PropertyDescriptor): number {
  return (desc.writable === true ? WRITABLE : 0) | (desc.enumerable === true ? ENUMERABLE : 0) | (desc.configurable === true ? CONFIGURABLE : 0);
}

function descriptorOf(attributes: number): PropertyDescriptor {
  return { writable: (attributes & WRITABLE) !== 0, enumerable: (attributes & ENUMERABLE) !== 0, configurable: (attributes & CONFIGURABLE) !== 0 };
}

/**
 * Gives a restored prototype a fresh hidden class. Putting a method back is a value change, after which V8
 * holds that property as a mutable field and optimised code can no longer treat the method as a constant
 * (no inlining through it: tracked calls measured 1.2-1.4x untracked, bench/tracker/shapes.js). Deleting a
 * property that is not the last one sends the object to dictionary mode; V8 makes a prototype fast again on
 * its next use, with every property constant as after a class definition.
 */
function renew(proto: object): void {
  const a = Symbol('diag.renew');
  const b = Symbol('diag.renew');
  safely(() => {
    Object.defineProperty(proto, a, { value: 0, configurable: true });
    Object.defineProperty(proto, b, { value: 0, configurable: true });
    delete (proto as Record<symbol, unknown>)[a];
    delete (proto as Record<symbol, unknown>)[b];
  });
}

/**
 * One instrumented object. Its inherited methods are observed by the wrappers of its prototype's site, its
 * own function-valued properties by wrappers swapped in place, gated by this object itself.
 */
class FirstTouch implements Gate, FirstTouchHandle {
  armed = true;
  readonly methods: number;
  private target: object | undefined;
  private site: PrototypeSite | undefined;
  private ignore: ReadonlySet<string> | undefined;
  private listener: ((context: unknown) => void) | undefined;
  private context: unknown;
  /** Own function properties swapped in place: key, original descriptor, wrapper, key, … */
  private swapped: unknown[] = NONE;

  constructor(target: object, methods: number, options: FirstTouchOptions) {
    this.target = target;
    this.methods = methods;
    this.ignore = options.ignore;
    this.listener = options.onTouch;
    this.context = options.context;
  }

  get pending(): boolean {
    return this.armed;
  }

  /** Throws when a property cannot be defined; `end` then takes back what was done. */
  install(own: readonly Candidate[], inherited: readonly Candidate[], meta: MetadataApi | undefined): void {
    const target = this.target!;
    if (inherited.length > 0) {
      const proto = Object.getPrototypeOf(target) as object;
      let site = sites.get(proto);
      if (site === undefined) {
        site = new PrototypeSite(proto);
        sites.set(proto, site);
      }
      // Held before covering: a failure half-way is undone by the same `drop` as a touch.
      site.hold(this);
      this.site = site;
      pendingObjects.set(target, this);
      site.cover(inherited, meta);
    }
    if (own.length > 0) this.swapped = new Array<unknown>(own.length * 3).fill(undefined);
    for (let i = 0; i < own.length; i++) {
      const { key, desc } = own[i]!;
      const wrapper = makeWrapper(desc.value, key, this, meta);
      // Recorded first: if defineProperty throws half-way, end re-defines the original, which is harmless.
      this.swapped[i * 3] = key;
      this.swapped[i * 3 + 1] = desc;
      this.swapped[i * 3 + 2] = wrapper;
      Object.defineProperty(target, key, { ...desc, value: wrapper });
    }
  }

  /** Also takes back a partial install. */
  end(): void {
    if (!this.armed) return;
    this.armed = false;
    this.restoreSwapped(this.target!);
    this.leaveSite(false);
    this.release();
  }

  /** A wrapper's call on `receiver` through `key`. Calls of framework hooks inherited from the site do not count. */
  enter(_receiver: unknown, key: string): void {
    if (this.ignore?.has(key) === true) return;
    this.touch();
  }

  touch(): void {
    if (!this.armed) return;
    this.armed = false;
    const target = this.target!;
    // A failed restore (say the object was frozen after tracking) leaves the wrappers in place: still
    // correct, only not free. It must never surface in the caller's method call.
    this.restoreSwapped(target);
    this.leaveSite(true);
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

  /** `touched`: a first touch, not the undoing of a failed install. */
  private leaveSite(touched: boolean): void {
    const site = this.site;
    if (site === undefined) return;
    this.site = undefined;
    const target = this.target!;
    pendingObjects.delete(target);
    safely(() => site.drop(this, touched ? target : undefined));
  }

  private restoreSwapped(target: object): void {
    const swapped = this.swapped;
    for (let i = swapped.length - 3; i >= 0; i -= 3) {
      const key = swapped[i] as string | undefined;
      if (key === undefined) continue;
      const wrapper = swapped[i + 2] as Function;
      const before = swapped[i + 1] as PropertyDescriptor & { value: Function };
      safely(() => {
        const current = Object.getOwnPropertyDescriptor(target, key);
        if (current !== undefined && current.value === wrapper) Object.defineProperty(target, key, before);
      });
      keepLateMetadata(wrapper, before.value);
    }
  }

  private release(): void {
    this.target = undefined;
    this.ignore = undefined;
    this.listener = undefined;
    this.context = undefined;
    this.swapped = NONE;
  }
}

const NONE: unknown[] = [];
const NO_MEMBERS: readonly FirstTouch[] = [];

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
  if (pendingObjects.has(target)) throw new Error('already instrumented by another tracker');
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
  if (methods === 0) return { methods: 0, pending: false, end: () => undefined };

  const state = new FirstTouch(target, methods, options);
  try {
    state.install(own, inherited, metadataApi());
  } catch (err) {
    state.end();
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
