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
import { copyOwnMetadata, metadataApi, type MetadataApi } from '../../shared/reflect-metadata';
import { makeWrapper, type Gate } from './forwarding-wrapper';
import { originalOf, ownOriginals, siteOriginals } from './originals';

export { DEFAULT_LIFECYCLE_HOOKS } from './lifecycle-hooks';

/** What `installFirstTouch` needs besides the object. */
export interface FirstTouchOptions {
  /** Method names that are never wrapped (framework-called hooks). */
  readonly ignore: ReadonlySet<string>;
  /** Extra prototypes at which the walk up the chain stops, in addition to the built-in ones. */
  readonly stopAt?: ReadonlySet<object>;
  /**
   * Called once, on the first call through any wrapper, after the object has been restored, with the
   * handle's `context`, the object and its handle. One options object and one listener shared by many
   * objects, plus a context each, cost less heap than a closure each.
   */
  readonly onTouch: (context: unknown, target: object, handle: FirstTouchHandle) => void;
  /**
   * `method` (the default): each method of the class chain has a first touch of its own, its wrapper taken off
   * the prototype at its first call on any instance of the class, and `onMethodTouch` says which. `bean`: the
   * wrappers go together, at the first call of any method, once no instance of the class is pending.
   */
  readonly depth?: 'bean' | 'method';
  /**
   * Method depth: called once per method of a class, at its first call on any instance of it (tracked or not:
   * the method's code ran), with the context of each object tracked with that class, the key and the time.
   */
  readonly onMethodTouch?: (context: unknown, key: string, at: number) => void;
}

/** A successfully instrumented object. */
export interface FirstTouchHandle {
  /** How many wrappers were installed (prototype methods plus function-valued own properties). */
  readonly methods: number;
  /** True until the first call. */
  readonly pending: boolean;
  /**
   * True when {@link pendingHandle} finds this handle through the object's prototype until the touch, so that a
   * caller needs no map entry of its own to find it again; false when only the object's own properties hold
   * wrappers (or there was nothing to wrap).
   */
  readonly onPrototype: boolean;
  /** Handed to `onTouch` at the touch; the caller may replace it until then (say, to add a name). */
  context: unknown;
  /**
   * The methods of the object's class chain that are watched (its own function properties left out), in the
   * order found; empty when only its own properties were wrapped. Kept as the site's list, made at install.
   */
  methodNames(): readonly string[];
  /** The class prototype its methods were watched on, when they were (for marks such as `@Kept`). */
  classPrototype(): object | undefined;
  /**
   * Stops observing without a touch (the application closed): the object and its class are as if it had never
   * been tracked, and `onTouch` is never called. No-op once touched.
   */
  end(): void;
}

/**
 * Prototypes whose methods are runtime machinery rather than the bean's own behaviour: a subclass of Map or
 * EventEmitter is tracked through the methods its own class (and user-land ancestors) define, not through
 * `get`, `set`, `on` or `emit`. Native prototypes are recognised by their constructor's source; Node's core
 * classes written in JavaScript are listed.
 */
const CORE_PROTOTYPES: ReadonlySet<object> = new Set<object>(
  (
    [
      EventEmitter.prototype,
      stream.Stream.prototype,
      stream.Readable.prototype,
      stream.Writable.prototype,
      stream.Duplex.prototype,
      stream.Transform.prototype,
      stream.PassThrough.prototype,
      typeof EventTarget === 'function' ? EventTarget.prototype : undefined,
    ] as Array<object | undefined>
  ).filter((p): p is object => p !== undefined),
);

const fnToString = Function.prototype.toString;

function isBuiltinPrototype(proto: object, extra: ReadonlySet<object> | undefined): boolean {
  return (
    proto === Object.prototype ||
    CORE_PROTOTYPES.has(proto) ||
    extra?.has(proto) === true ||
    hasNativeConstructor(proto)
  );
}

/**
 * V8 prints every native function as `function Name() { [native code] }`; the source of a class ends with
 * its own body. Only the tail is compared, so a long class costs no more than a short one, and there is no
 * cache: a WeakMap entry per prototype cost more heap per bean than the test costs time.
 */
function hasNativeConstructor(proto: object): boolean {
  const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value;
  if (typeof ctor !== 'function') return false;
  try {
    return fnToString.call(ctor).endsWith('{ [native code] }');
  } catch {
    return false;
  }
}

/** Metadata someone attached to a wrapper after it was made must still be found on the method it stood for. */
function keepLateMetadata(wrapper: Function, original: Function): void {
  const m = metadataApi();
  if (m !== undefined) safely(() => copyOwnMetadata(m, wrapper, original, undefined, true));
}

const getPrototypeOf = Object.getPrototypeOf as (o: object) => object | null;
const isPrototypeOf = Object.prototype.isPrototypeOf;
/** The wrappers installed on a prototype, by prototype. */
const sites = new WeakMap<object, PrototypeSite>();

/**
 * The tracked object `obj` is while its first touch is pending, found through the site of its prototype:
 * a pending object is always a member of the site of its own prototype, so no per-object map is needed.
 */
function pendingMember(obj: object): FirstTouch | undefined {
  const proto = getPrototypeOf(obj);
  return proto === null ? undefined : sites.get(proto)?.memberFor(obj);
}

/**
 * The handle of `obj` while its first touch is pending through wrappers on its prototype, if it was installed
 * with `options`; undefined for an object not tracked (or by someone else), already touched, or observed
 * through its own properties only. Lets a caller skip a map of its own for the objects waiting for their
 * touch, usually most of them.
 */
export function pendingHandle(obj: object, options: FirstTouchOptions): FirstTouchHandle | undefined {
  const member = types.isProxy(obj) ? undefined : pendingMember(obj);
  return member?.installedWith(options) === true ? member : undefined;
}

/**
 * Calls `fn` for each own property of `proto` that holds one of our wrappers: what a site installed (its
 * keys are not kept, the prototype itself is the record), minus what user code replaced meanwhile.
 */
function forEachWrapper(
  proto: object,
  fn: (key: string, desc: PropertyDescriptor, wrapper: Function, original: Function) => void,
): void {
  for (const key of Reflect.ownKeys(proto)) {
    if (typeof key !== 'string') continue;
    const desc = Object.getOwnPropertyDescriptor(proto, key);
    const wrapper: unknown = desc?.value;
    const original = typeof wrapper === 'function' ? siteOriginals.get(wrapper) : undefined;
    if (original !== undefined) fn(key, desc!, wrapper as Function, original);
  }
}

/**
 * The gate of one method's wrapper at method depth: armed until the method's first call on any instance of
 * its class, or, while another instance of the class is still pending, until that one's touch (its first call
 * of any method must still be seen). Like the site's, `armed` is `true` inherited from the prototype and an own
 * `false` written once at release, so that a captured wrapper's test folds into a constant (PrototypeSite.armed).
 * One per method of a class, not per instance.
 */
class MethodGate implements Gate {
  declare armed: boolean;
  /** When the method's first call was seen and told (ms since the epoch); 0 until then. */
  calledAt = 0;

  constructor(
    readonly site: PrototypeSite,
    readonly key: string,
  ) {}

  enter(receiver: unknown, key: string): void {
    this.site.enterMethod(receiver, key, this);
  }
}

Object.defineProperty(MethodGate.prototype, 'armed', {
  value: true,
  writable: false,
  enumerable: false,
  configurable: false,
});

/** Gives `gate` its own `false`, written once: from then on its wrappers only forward. */
function disarm(gate: object): void {
  Object.defineProperty(gate, 'armed', { value: false, writable: false, enumerable: true, configurable: false });
}

/**
 * The wrappers on one prototype: the class prototype of one or more tracked objects. A wrapper observes the
 * site's members (other instances of the class, untracked, only pass through). At bean depth, when the last of
 * them has been touched the prototype gets its original methods back. At method depth each method gets its own
 * back at its first call, as soon as no member is pending any more (in the common case of one instance per
 * class, at that very call).
 */
class PrototypeSite implements Gate {
  /**
   * `true` inherited from the class prototype while the site is armed; `release` gives the site an own
   * `false`, written once. Read by every wrapper on every call, and captured wrappers (route handlers, cron
   * jobs, `bean.m.bind(bean)`) keep calling long after release, so the disarmed read must cost nothing: V8
   * folds a field written once on an object it knows (the wrapper's site is a constant once the wrapper is
   * inlined) into a constant, where a field that changes value stays a load and a compare in the caller's
   * loop. Measured on `bench:shapes` (bound-at-startup): ~+1 ns per call with a plain field, none this way.
   * (Bean depth only: at method depth each wrapper has a MethodGate of its own, which does the same.)
   */
  declare armed: boolean;
  /**
   * The tracked objects of this prototype: at bean depth those not yet touched; at method depth every one not
   * ended, touched ones included (their names are told of each method's first call). Held strongly: a site
   * lives as long as its class, so the tracker ends the tracking of an application's beans when the application
   * closes (`end()`), which takes them out. A touched record no longer holds its object. (Weak references cost
   * ~180 bytes per bean, more than a third of all the rest.)
   */
  private member: FirstTouch | undefined;
  /** Members beyond the first (the same class tracked more than once), rare. */
  private more: readonly FirstTouch[] = NO_MEMBERS;
  /**
   * Keys whose wrapper was added on the prototype, shadowing an inherited method (taken off again by a
   * delete, where a replaced method is put back). Only subclasses have any.
   */
  private added: readonly string[] = NO_KEYS;
  /**
   * Method depth: one gate per wrapped method, in the order found; a class of one method holds its gate here
   * itself, without an array (56 B less of the heap a tracked bean costs, #43). Read through {@link gateList}.
   */
  private gates: readonly MethodGate[] | MethodGate = NO_GATES;

  constructor(
    private readonly proto: object,
    private readonly perMethod: boolean,
  ) {}

  /** Wraps what is not wrapped yet. Throws when the prototype refuses a property; `drop` takes it back. */
  cover(methods: readonly Candidate[], meta: MetadataApi | undefined): void {
    for (let i = 0; i < methods.length; i++) {
      const { key, desc, holder } = methods[i]!;
      const own = holder === this.proto ? desc : Object.getOwnPropertyDescriptor(this.proto, key);
      if (own !== undefined && own.value === desc.value && siteOriginals.has(desc.value)) continue;
      const gate = this.perMethod ? this.gateFor(key) : this;
      const wrapper = makeWrapper(originalOf(desc.value), key, gate, meta, siteOriginals);
      if (own === undefined && !this.added.includes(key)) this.added = [...this.added, key];
      // The attributes of the method a lookup reaches; configurable so that it can be taken off again.
      Object.defineProperty(this.proto, key, {
        value: wrapper,
        writable: desc.writable,
        enumerable: desc.enumerable,
        configurable: own === undefined ? true : own.configurable,
      });
    }
  }

  /**
   * A new gate for `key`, armed and not called yet. A method given back at its first call and wrapped again (an
   * instance that joined the class later, or a re-arm of a touched one while another method of its class was
   * never called) is told again at its next call: a use in this period, which the tracker keeps as the method's
   * last use (the first call was told to the newcomer by `tellCalled` before the cover).
   */
  private gateFor(key: string): MethodGate {
    const gate = new MethodGate(this, key);
    const gates = this.gates;
    if (gates === NO_GATES) {
      this.gates = gate;
      return gate;
    }
    const list = this.gateList();
    let i = 0;
    while (i < list.length && list[i]!.key !== key) i++;
    if (i === list.length) this.gates = [...list, gate];
    else this.gates = list.length === 1 ? gate : list.map((g, j) => (j === i ? gate : g));
    return gate;
  }

  /** The gates as a list (allocated for a class of one method: off the start-up path). */
  private gateList(): readonly MethodGate[] {
    const gates = this.gates;
    return gates instanceof MethodGate ? [gates] : gates;
  }

  get prototype(): object {
    return this.proto;
  }

  /** Method depth: the methods watched on this class, in the order found. */
  methodKeys(): readonly string[] {
    const gates = this.gates;
    if (gates instanceof MethodGate) return [gates.key];
    return gates.length === 0 ? NO_KEYS : gates.map((g) => g.key);
  }

  hold(member: FirstTouch): void {
    if (this.member === undefined) this.member = member;
    else this.more = [...this.more, member];
  }

  /** Method depth: tells a member that joined late of the methods its class had already had called. */
  tellCalled(member: FirstTouch): void {
    const gates = this.gates;
    if (gates instanceof MethodGate) {
      if (gates.calledAt !== 0) member.methodCalled(gates.key, gates.calledAt);
      return;
    }
    for (let i = 0; i < gates.length; i++) {
      const gate = gates[i]!;
      if (gate.calledAt !== 0) member.methodCalled(gate.key, gate.calledAt);
    }
  }

  memberFor(obj: object): FirstTouch | undefined {
    if (this.member?.target === obj) return this.member;
    for (const m of this.more) if (m.target === obj) return m;
    return undefined;
  }

  private members(): FirstTouch[] {
    return this.member === undefined ? [...this.more] : [this.member, ...this.more];
  }

  private hasPending(): boolean {
    if (this.member?.armed === true) return true;
    for (const m of this.more) if (m.armed) return true;
    return false;
  }

  /**
   * One of this prototype's tracked objects was touched, ended, or its install failed (`touched` undefined).
   * At bean depth it leaves, and the last one gives the prototype back its methods. At method depth a touched
   * one stays (its names hear of later first calls), and the methods already called go back once none is
   * pending. Before that, a touched object would keep calling through the wrappers while its siblings stay
   * pending (the same class provided twice, one copy unused): it gets own properties holding the original
   * methods instead (at method depth, those already called), so its calls are direct again, on a hidden class
   * of its own.
   */
  drop(member: FirstTouch, touched: object | undefined): void {
    if (!this.perMethod || touched === undefined) {
      if (this.member === member) {
        this.member = this.more[0];
        this.more = this.more.length <= 1 ? NO_MEMBERS : this.more.slice(1);
      } else if (this.more.includes(member)) {
        this.more = this.more.length === 1 ? NO_MEMBERS : this.more.filter((m) => m !== member);
      } else {
        return;
      }
    }
    if (!this.perMethod) {
      if (this.member === undefined) {
        this.release();
        return;
      }
    } else if (this.member === undefined) {
      // Nobody left to tell: every method goes back, called or not (an application closed).
      this.releaseGates(false);
      return;
    } else if (!this.hasPending()) {
      this.releaseGates(true);
      return;
    }
    if (touched === undefined) return;
    const target = touched;
    const called = this.perMethod
      ? this.gateList()
          .filter((g) => g.calledAt !== 0)
          .map((g) => g.key)
      : undefined;
    forEachWrapper(this.proto, (key, desc, wrapper, original) => {
      if (Object.prototype.hasOwnProperty.call(target, key)) return;
      if (called !== undefined && !called.includes(key)) return;
      safely(() => Object.defineProperty(target, key, { ...desc, value: original, configurable: true }));
      keepLateMetadata(wrapper, original);
    });
  }

  /**
   * Finds whom a call through one of this prototype's wrappers touches: the receiver when it is pending.
   * Another, untracked instance of the class touches nobody. A call that names no instance of the class —
   * a method passed around unbound, or called through a Proxy of the bean — may be any pending member's:
   * all of them count as touched, since calling a used bean a ghost is the error this report must not make.
   */
  enter(receiver: unknown, key: string): void {
    // A Proxy is never looked into: its traps are user code.
    if (typeof receiver === 'object' && receiver !== null && !types.isProxy(receiver)) {
      const member = pendingMember(receiver);
      if (member !== undefined) return member.enter(receiver, key);
      if (isPrototypeOf.call(this.proto, receiver)) {
        // An object made with Object.create(bean) calls on the bean's behalf (passport does this with
        // strategies); a separate instance of the class touches nobody.
        for (let p = getPrototypeOf(receiver); p !== null && p !== this.proto; p = getPrototypeOf(p)) {
          const owner = pendingMember(p);
          if (owner !== undefined) return owner.enter(p, key);
        }
        return;
      }
    }
    for (const member of this.members()) if (member.armed) member.enter(receiver, key);
  }

  /**
   * Method depth: a call through `gate`'s wrapper. The method's first call, on any instance of the class (its
   * code ran, whoever the receiver), is told to every member's names; the call's bean is touched as at bean
   * depth; and the method goes back on the prototype as soon as no member is pending.
   */
  enterMethod(receiver: unknown, key: string, gate: MethodGate): void {
    if (gate.calledAt === 0) {
      const at = (gate.calledAt = Date.now());
      for (const member of this.members()) member.methodCalled(key, at);
    }
    this.enter(receiver, key);
    if (gate.armed && !this.hasPending()) this.releaseGates(true);
  }

  /**
   * Method depth: gives the prototype back the methods already called (`calledOnly`), or all of them, and
   * disarms their gates; the site is done once no gate is armed.
   */
  private releaseGates(calledOnly: boolean): void {
    const proto = this.proto as Record<string, unknown>;
    let armed = 0;
    let released = 0;
    for (const gate of this.gateList()) {
      if (!gate.armed) continue;
      if (calledOnly && gate.calledAt === 0) {
        armed++;
        continue;
      }
      disarm(gate);
      released++;
      const key = gate.key;
      const desc = Object.getOwnPropertyDescriptor(proto, key);
      const original = typeof desc?.value === 'function' ? siteOriginals.get(desc.value as Function) : undefined;
      // Unless someone replaced the wrapper meanwhile.
      if (original === undefined) continue;
      safely(() => {
        if (this.added.includes(key)) delete proto[key];
        else Object.defineProperty(proto, key, { ...desc, value: original });
      });
      keepLateMetadata(desc!.value as Function, original);
    }
    if (armed === 0) {
      disarm(this);
      sites.delete(this.proto);
      this.added = NO_KEYS;
    }
    if (released > 0) renew(this.proto);
  }

  /** Disarms the wrappers and puts the prototype's methods back, unless someone replaced a wrapper meanwhile. */
  private release(): void {
    disarm(this);
    sites.delete(this.proto);
    const proto = this.proto as Record<string, unknown>;
    const added = this.added;
    forEachWrapper(proto, (key, desc, wrapper, original) => {
      safely(() => {
        if (added.includes(key)) delete proto[key];
        else Object.defineProperty(proto, key, { ...desc, value: original });
      });
      keepLateMetadata(wrapper, original);
    });
    this.added = NO_KEYS;
    renew(this.proto);
  }
}

Object.defineProperty(PrototypeSite.prototype, 'armed', {
  value: true,
  writable: false,
  enumerable: false,
  configurable: false,
});

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
  /** The tracked object, until its touch; read by its site to find it among the members. */
  target: object | undefined;
  context: unknown;
  /** The site of its prototype; kept after the touch at method depth (its list of methods). */
  private site: PrototypeSite | undefined;
  /**
   * Shared by every object of one tracker. Kept while the record is its site's member (at method depth, after
   * the touch too, to tell its names of later first calls of methods); undefined once it left.
   */
  private options: FirstTouchOptions | undefined;
  /** Own function properties swapped in place: key, original descriptor, wrapper, key, … */
  private swapped: unknown[] = NONE;

  constructor(target: object, methods: number, options: FirstTouchOptions, context: unknown) {
    this.target = target;
    this.methods = methods;
    this.options = options;
    this.context = context;
  }

  get pending(): boolean {
    return this.armed;
  }

  get onPrototype(): boolean {
    return this.site !== undefined && this.armed;
  }

  installedWith(options: FirstTouchOptions): boolean {
    return this.options === options;
  }

  methodNames(): readonly string[] {
    return this.site?.methodKeys() ?? NO_KEYS;
  }

  classPrototype(): object | undefined {
    return this.site?.prototype;
  }

  /**
   * Throws when a property cannot be defined; `end` then takes back what was done. `site` is the one of the
   * target's prototype `proto` when there is one already (looked up once per install: a weak-map lookup on each of
   * 1,000 prototypes is not free at start-up).
   */
  install(
    own: readonly Candidate[],
    inherited: readonly Candidate[],
    meta: MetadataApi | undefined,
    proto: object | null,
    found: PrototypeSite | undefined,
  ): void {
    const target = this.target!;
    if (inherited.length > 0 && proto !== null) {
      let site = found;
      if (site === undefined) {
        site = new PrototypeSite(proto, this.options!.depth !== 'bean');
        sites.set(proto, site);
      }
      // Held before covering: a failure half-way is undone by the same `drop` as a touch.
      site.hold(this);
      this.site = site;
      // Told before the cover, which gives a method already called a fresh gate (see `gateFor`).
      site.tellCalled(this);
      site.cover(inherited, meta);
    }
    if (own.length > 0) this.swapped = new Array<unknown>(own.length * 3).fill(undefined);
    for (let i = 0; i < own.length; i++) {
      const { key, desc } = own[i]!;
      const wrapper = makeWrapper(desc.value, key, this, meta, ownOriginals);
      // Recorded first: if defineProperty throws half-way, end re-defines the original, which is harmless.
      this.swapped[i * 3] = key;
      this.swapped[i * 3 + 1] = desc;
      this.swapped[i * 3 + 2] = wrapper;
      Object.defineProperty(target, key, { ...desc, value: wrapper });
    }
  }

  /** Also takes back a partial install; after the touch, leaves the site (method depth). */
  end(): void {
    if (!this.armed) {
      const site = this.site;
      if (site !== undefined && this.options !== undefined) {
        this.options = undefined;
        safely(() => site.drop(this, undefined));
      }
      return;
    }
    this.armed = false;
    this.restoreSwapped(this.target!);
    this.leaveSite(false);
    this.release();
    this.options = undefined;
  }

  /** A wrapper's call on `receiver` through `key`. Calls of framework hooks inherited from the site do not count. */
  enter(_receiver: unknown, key: string): void {
    if (this.options?.ignore.has(key) === true) return;
    this.touch();
  }

  /** Method depth: the first call of `key` on any instance of the class, told to this object's names. */
  methodCalled(key: string, at: number): void {
    const options = this.options;
    if (options?.onMethodTouch === undefined || options.ignore.has(key)) return;
    try {
      options.onMethodTouch(this.context, key, at);
    } catch {
      /* the tracker's bookkeeping must not break the call */
    }
  }

  touch(): void {
    if (!this.armed) return;
    this.armed = false;
    const target = this.target!;
    // A failed restore (say the object was frozen after tracking) leaves the wrappers in place: still
    // correct, only not free. It must never surface in the caller's method call.
    this.restoreSwapped(target);
    this.leaveSite(true);
    const listener = this.options!.onTouch;
    // Captured wrappers outlive this moment; they should not keep the object's bookkeeping alive (the
    // context stays: the caller owns it and may still read it).
    this.release();
    try {
      listener(this.context, target, this);
    } catch {
      /* the tracker's bookkeeping must not break the call */
    }
  }

  /** `touched`: a first touch, not the undoing of a failed install. */
  private leaveSite(touched: boolean): void {
    const site = this.site;
    if (site === undefined) return;
    const perMethod = this.options?.depth !== 'bean';
    // At method depth a touched record stays its site's member; its site is kept for its list of methods.
    if (!perMethod || !touched) this.site = perMethod ? site : undefined;
    if (perMethod && !touched) this.options = undefined;
    const target = this.target!;
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

  /** Lets go of the object (and, at bean depth, of the options: nothing more will be told). */
  private release(): void {
    this.target = undefined;
    if (this.options?.depth === 'bean' || this.site === undefined) this.options = undefined;
    this.swapped = NONE;
  }
}

const NONE: unknown[] = [];
const NO_MEMBERS: readonly FirstTouch[] = [];
const NO_KEYS: readonly string[] = [];
const NO_GATES: readonly MethodGate[] = [];

interface Candidate {
  readonly key: string;
  readonly desc: PropertyDescriptor & { value: Function };
  /** The object that defines `key`: the target itself, or a prototype on its chain. */
  readonly holder: object;
}

const NO_CANDIDATES: readonly Candidate[] = [];

/**
 * Instruments `target` so that the first call of any of its methods calls `options.onTouch` once.
 * Returns a handle with `methods === 0` (and the object untouched) when there is nothing to wrap.
 * Throws when the object cannot be instrumented; by then every partial change has been undone.
 * The caller is responsible for not instrumenting the same object twice and for skipping Proxies,
 * functions and non-extensible objects.
 */
export function installFirstTouch(target: object, options: FirstTouchOptions, context?: unknown): FirstTouchHandle {
  const proto = getPrototypeOf(target);
  const site = proto === null ? undefined : sites.get(proto);
  if (site?.memberFor(target) !== undefined) throw new Error('already instrumented by another tracker');
  const own = ownMethods(target, options.ignore);
  const inherited = inheritedMethods(target, options);
  const methods = own.length + inherited.length;
  if (methods === 0)
    return {
      methods: 0,
      pending: false,
      onPrototype: false,
      context,
      end: () => undefined,
      methodNames: () => NO_KEYS,
      classPrototype: () => undefined,
    };
  if (inherited.length > 0 && refusesWrappers(proto!, inherited)) throw new LockedPrototypeError();

  const state = new FirstTouch(target, methods, options, context);
  try {
    state.install(own, inherited, metadataApi(), proto, site);
  } catch (err) {
    state.end();
    throw err;
  }
  return state;
}

/**
 * Thrown by {@link installFirstTouch}, before anything was changed, when the object's prototype will not take
 * the wrappers: it was frozen, sealed or made non-extensible (`Object.freeze(Cls.prototype)`), which the
 * application may rely on, so it is reported rather than worked around.
 */
export class LockedPrototypeError extends Error {
  constructor() {
    super("the class's prototype is frozen, sealed or not extensible");
    this.name = 'LockedPrototypeError';
  }
}

/**
 * Whether `proto` would refuse a wrapper for one of `methods`: a method it does not hold itself needs a new
 * property, one it holds needs a value change. Only a non-extensible prototype is examined, so that an ordinary
 * class costs one check on the start-up path.
 */
function refusesWrappers(proto: object, methods: readonly Candidate[]): boolean {
  if (Object.isExtensible(proto)) return false;
  for (let i = 0; i < methods.length; i++) {
    const own = Object.getOwnPropertyDescriptor(proto, methods[i]!.key);
    if (own === undefined || (own.configurable !== true && own.writable !== true)) return true;
  }
  return false;
}

/*
 * The walks below run once per bean on the container's start-up path. They are written for V8's
 * interpreter, which runs them: indexed loops over string keys (symbol keys are never wrapped: iterators and
 * inspection hooks are called by the runtime), nothing allocated when nothing is found. Iterator loops and a
 * record per key made them the largest part of Phase 2's start-up instructions (docs/benchmarks.md). The keys
 * come from `Reflect.ownKeys`: `Object.getOwnPropertyNames` left ~60 bytes more per bean after start-up
 * (`bench:memory`, side by side).
 */

/** The object's own function-valued properties: usually none, methods live on its class's prototype. */
function ownMethods(target: object, ignore: ReadonlySet<string>): readonly Candidate[] {
  return methodsDefinedOn(target, target, ignore, undefined) ?? NO_CANDIDATES;
}

/** The methods a call on `target` reaches through its prototype chain, up to the first built-in prototype. */
function inheritedMethods(target: object, { ignore, stopAt }: FirstTouchOptions): readonly Candidate[] {
  let found: Candidate[] | undefined;
  for (let p = getPrototypeOf(target); p !== null && !isBuiltinPrototype(p, stopAt); p = getPrototypeOf(p)) {
    found = methodsDefinedOn(p, target, ignore, found);
  }
  return found ?? NO_CANDIDATES;
}

/** Adds to `found` (made on the first find) the function-valued properties of `holder` a call on `target` reaches. */
function methodsDefinedOn(
  holder: object,
  target: object,
  ignore: ReadonlySet<string>,
  found: Candidate[] | undefined,
): Candidate[] | undefined {
  const keys = Reflect.ownKeys(holder);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (typeof key !== 'string' || key === 'constructor' || ignore.has(key)) continue;
    // The closest definition is the one a call reaches.
    if (definedBelow(target, holder, key)) continue;
    const desc = Object.getOwnPropertyDescriptor(holder, key);
    // A Proxy of a function (an injected proxy provider the bean keeps in a field) is not a method of the bean,
    // and making its wrapper would read its name, length and properties through traps that are not ours to run.
    if (typeof desc?.value === 'function' && !types.isProxy(desc.value))
      (found ??= []).push({ key, desc: desc as Candidate['desc'], holder });
  }
  return found;
}

/** Whether an object on the chain from `target` up to, but excluding, `p` has its own `key`. */
function definedBelow(target: object, p: object, key: string): boolean {
  for (let o: object | null = target; o !== null && o !== p; o = Object.getPrototypeOf(o)) {
    if (Object.prototype.hasOwnProperty.call(o, key)) return true;
  }
  return false;
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    /* best effort */
  }
}
