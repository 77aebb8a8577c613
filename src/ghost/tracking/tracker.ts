/**
 * Phase 2 state: which beans are tracked, which were touched, which could not be tracked and why.
 *
 * The framework hook constructs one `GhostTracker` when `diag.ghost-tracking.enabled` is on and calls `track`
 * for every bean right after the container created it. With tracking off no tracker exists, so none of this
 * code runs. The per-call mechanism lives in ./first-touch; this file decides what may be wrapped and keeps
 * the books. Framework-neutral: nothing here imports NestJS or OpenTelemetry.
 */
import { types } from 'node:util';
import { safeLog } from '../../shared/logger';
import type * as FirstTouchModule from './first-touch';
import { DEFAULT_LIFECYCLE_HOOKS } from './lifecycle-hooks';
import type { GhostReport, GhostSnapshotSource, TrackOptions, TrackOutcome, UntrackableReason } from './types';
import { buildReport, type MethodsField } from './ghost-report';

export { DEFAULT_LIFECYCLE_HOOKS } from './lifecycle-hooks';
export { GHOST_DISCLAIMER, mergeGhostReports } from './ghost-report';

/** Settings of one tracker. */
export interface GhostTrackerOptions {
  /** Bean names never wrapped, reported as `excluded` (`diag.ghost-tracking.exclude`). */
  readonly exclude?: Iterable<string>;
  /** Method names the framework itself calls; calling them is not a touch. Defaults to NestJS's lifecycle hooks. */
  readonly lifecycleHooks?: Iterable<string>;
  /**
   * Prototypes at which the walk up a bean's prototype chain stops (their methods are not wrapped), in addition
   * to `Object.prototype`, native built-ins (Map, Set, Array, Error, Promise…) and Node core classes
   * (EventEmitter, streams, EventTarget).
   */
  readonly stopAt?: Iterable<object>;
  /**
   * Re-arms the wrappers of touched beans this often ({@link GhostTracker.rearm}), so that a use in each period is
   * seen (`diag.ghost-tracking.last-use-resolution-ms`). Unset: a bean's first touch is its only one.
   */
  readonly rearmEveryMs?: number;
  /**
   * `method` (the default): each method of a bean's class chain has its own first touch, reported per bean
   * (`diag.ghost-tracking.depth`); `bean`: the first call of any method is all that is observed.
   */
  readonly depth?: TrackingDepth;
}

/** How deep Phase 2 looks (`diag.ghost-tracking.depth`). */
export type TrackingDepth = 'bean' | 'method';

/** Called once per bean name, at the first touch. */
export type FirstTouchListener = (name: string) => void;

/**
 * Called at a bean's first touch and at its first touch after each re-arm: "used in this period". `at`: when the
 * use was seen (ms since the epoch): now, or for a bean touched before it was named, that touch.
 */
export type UseListener = (name: string, at: number) => void;

/**
 * A touched object the tracker may re-arm: held weakly (a collected bean is forgotten), with the handle of its
 * first instrumentation (whose context keeps its names, aliases included) and that of its latest re-arm.
 */
interface Rearmable {
  readonly ref: WeakRef<object>;
  readonly origin: FirstTouchModule.FirstTouchHandle;
  current?: FirstTouchModule.FirstTouchHandle;
  ended?: boolean;
}
/** Called once per bean name and method, at the method's first call on any instance of the bean's class. */
export type MethodTouchListener = (name: string, method: string, at: number) => void;

/**
 * The names one instrumented object is tracked under, kept as its first-touch handle's context: a string,
 * or an array when it is also tracked under aliases (rare). Nothing else is allocated per bean here.
 */
type BeanNames = string | readonly string[];

function namesOf(context: unknown): readonly string[] {
  if (context instanceof Unnamed) return NO_NAMES;
  return typeof context === 'string' ? [context] : (context as readonly string[]);
}

const NO_NAMES: readonly string[] = [];

/**
 * A bean tracked before its adapter could name it ({@link GhostTracker.trackUnnamed}), its handle's context until
 * {@link GhostTracker.nameTracked}: what its instance did meanwhile, told under its name then. Naming 1,000 beans
 * before the first instance exists (unique names need the whole container) was 20 M of the NestJS app's 137 M
 * instructions of Phase 2 at start-up (docs/benchmarks.md, issue #46); the analysis after ready reads them anyway.
 */
class Unnamed {
  /**
   * When the instance was first touched before it was named (ms since the epoch): told under its name then, so
   * that its use reads as that call, not as the naming after ready (a bean a lazy container's application calls
   * while it starts, a Nest bean called from another's `onModuleInit`).
   */
  touchedAt: number | undefined;
  /** Method depth: the methods of its class first called before it was named, with that call's time. */
  methods: Map<string, number> | undefined;
  /** Its entry among the objects to re-arm, from its touch (ended if its name says it must not be tracked). */
  rearmable: Rearmable | undefined;
  /** Its name said a library registered it, or it could not be named: its wrappers are gone. */
  dropped = false;
  /** Names the same object was tracked under meanwhile, by a caller that knew them: linked once it is named. */
  linked: string[] | undefined;
  /**
   * The instance, while it waits for its name (or after its wrappers went with a library's name): a name another
   * caller gives the same object then tracks it on its own, as if the library's had never been tracked.
   */
  target: object | undefined;

  constructor(readonly owner: object | undefined) {}
}

/** What tracking an object came to, before the name it is reported under is applied (see `GhostTracker.attach`). */
type Attached =
  | { readonly kind: 'tracked'; readonly handle: FirstTouchModule.FirstTouchHandle }
  | { readonly kind: 'linked'; readonly handle: FirstTouchModule.FirstTouchHandle }
  | { readonly kind: 'skipped'; readonly reason: UntrackableReason }
  | { readonly kind: 'framework' }
  | { readonly kind: 'failed'; readonly error: unknown };

/** A bean tracked without its name, until {@link GhostTracker.nameTracked}. */
interface UnnamedBean {
  readonly key: object;
  readonly attached: Attached;
  /** Its `TrackOptions.owner`: an application's container names its own beans only. */
  readonly owner: object | undefined;
}

/** What an adapter says of a bean it tracked unnamed: the report's name, and whether a library registered it. */
export interface BeanIdentity {
  readonly name: string;
  readonly framework: boolean;
}

/** A touched bean name, with the handle its methods are listed from at method depth (see {@link NameState}). */
class Touched {
  constructor(readonly handle: FirstTouchModule.FirstTouchHandle | undefined) {}
}

const TOUCHED = new Touched(undefined);

function skipped(reason: UntrackableReason): Attached {
  return { kind: 'skipped', reason };
}

/**
 * What the tracker knows of one bean name: untouched (`null`; at method depth the handle of the first instance
 * tracked under it, whose class's list of methods the snapshot reads, lazily: nothing is named per method until a
 * report asks) or touched (a {@link Touched}, keeping that handle). One map entry per name for both: a second map
 * of handles by name cost a table entry per bean (~29 B of the heap #43 caps).
 */
type NameState = FirstTouchModule.FirstTouchHandle | Touched | null;

function handleOf(state: NameState | undefined): FirstTouchModule.FirstTouchHandle | undefined {
  return state instanceof Touched ? state.handle : (state ?? undefined);
}

/**
 * Tracks first touches of beans. One touched flag per bean name: two instances tracked under one name share it, and
 * the same object tracked under two names (an alias) flips both.
 */
export class GhostTracker implements GhostSnapshotSource {
  private readonly exclude: ReadonlySet<string>;
  private readonly ignore: ReadonlySet<string>;
  private readonly stopAt: ReadonlySet<object> | undefined;
  /**
   * Never double-wrap: the objects this tracker instrumented, weakly held, to their handles. Those whose
   * touch is pending on their prototype are found through `pendingHandle` instead, so that an untouched bean
   * costs no entry here; they join at their touch.
   */
  private readonly instances = new WeakMap<object, FirstTouchModule.FirstTouchHandle>();
  /**
   * Every tracked bean name, to whether it was touched (and, at method depth, its first handle). Instances tracked
   * under one name share the entry; the same object tracked under two names (an alias) flips both.
   */
  private readonly names = new Map<string, NameState>();
  private readonly untrackable = new Map<string, UntrackableReason>();
  private readonly framework = new Set<string>();
  private readonly listeners: FirstTouchListener[] = [];
  private readonly useListeners: UseListener[] = [];
  /** Touched objects, to re-arm once per last-use period; found by object when a re-armed one is touched again. */
  private rearmable: Rearmable[] = [];
  private readonly rearmableOf = new WeakMap<object, Rearmable>();
  private rearmTimer: NodeJS.Timeout | undefined;
  private readonly methodListeners: MethodTouchListener[] = [];
  /** Method depth: told each method use the tracker records, its first call and its first after each re-arm. */
  private readonly methodUseListeners: MethodTouchListener[] = [];
  /** How deep this tracker looks. */
  readonly depth: TrackingDepth;
  /** Method depth: per bean name, its methods called so far and when each was first called (ms). */
  private readonly calledMethods = new Map<string, Map<string, number>>();
  /** What each owner (an application's container) had tracked, to end it when the owner closes. */
  private readonly owned = new WeakMap<object, Array<{ end(): void }>>();
  private changes = 0;
  /** The reports' `framework`, once an adapter named it. */
  private frameworkName: string | undefined;
  /** A lazy container's application bindings not resolved yet; undefined when no adapter declared any. */
  private unresolved: Set<string> | undefined;
  /** What every instance is instrumented with; each handle's context is its names (cheaper than a closure each). */
  private readonly touchOptions: FirstTouchModule.FirstTouchOptions;
  /** Beans tracked before their adapter could name them, in the order tracked (see {@link trackUnnamed}). */
  private unnamed: UnnamedBean[] = [];
  /** Per owner, what names its unnamed beans at once when a reader comes first (see {@link nameOnDemand}). */
  private readonly namers = new Map<object, () => void>();

  /**
   * Grows whenever the snapshot may have changed (a bean tracked or skipped, a first touch), so a reader such
   * as the actuator can reuse its last serialised snapshot while it stays the same.
   */
  get version(): number {
    return this.changes;
  }

  /** The wrapper machinery, loaded with the first tracker: a process without Phase 2 never compiles it. */
  private readonly firstTouch: typeof FirstTouchModule;

  constructor(options: GhostTrackerOptions = {}) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    this.firstTouch = require('./first-touch') as typeof FirstTouchModule;
    this.exclude = new Set(options.exclude ?? []);
    this.ignore = new Set(options.lifecycleHooks ?? DEFAULT_LIFECYCLE_HOOKS);
    const stopAt = options.stopAt === undefined ? [] : [...options.stopAt];
    this.stopAt = stopAt.length > 0 ? new Set(stopAt) : undefined;
    this.depth = options.depth ?? 'method';
    this.touchOptions = {
      ignore: this.ignore,
      stopAt: this.stopAt,
      depth: this.depth,
      onTouch: (names, target, handle) => {
        this.instances.set(target, handle);
        let entry = this.rearmableOf.get(target);
        if (entry === undefined) {
          entry = { ref: new WeakRef(target), origin: handle };
          this.rearmableOf.set(target, entry);
          this.rearmable.push(entry);
        }
        if (names instanceof Unnamed) {
          names.touchedAt = Date.now();
          names.rearmable = entry;
        } else this.touched(namesOf(names));
      },
      ...(this.depth === 'method'
        ? {
            onMethodTouch: (names: unknown, key: string, at: number) => {
              if (!(names instanceof Unnamed)) this.methodTouched(namesOf(names), key, at);
              else if (names.methods?.has(key) !== true) (names.methods ??= new Map()).set(key, at);
            },
          }
        : {}),
    };
    if (options.rearmEveryMs !== undefined) {
      this.rearmTimer = setInterval(() => this.rearm(), options.rearmEveryMs);
      this.rearmTimer.unref();
    }
  }

  /**
   * Puts the first-touch wrappers back on every touched bean that is not armed already, so that its next call is
   * seen as a use in this period ({@link onUse}); run once per last-use period. Between two re-arms a touched bean
   * costs nothing on its calls; the call after a re-arm pays one wrapper, and the re-arm itself re-installs the
   * wrappers (docs/benchmarks.md has the measurement). A bean whose wrappers cannot be put back (its prototype
   * frozen since) is said used in each period instead: the ledger must never call code dormant on a watch that
   * stopped.
   */
  rearm(): void {
    const keep: Rearmable[] = [];
    for (const entry of this.rearmable) {
      const target = entry.ref.deref();
      if (target === undefined || entry.ended === true) continue;
      keep.push(entry);
      // Put back once named: a re-armed handle would keep a context that naming does not reach.
      if (entry.current?.pending === true || entry.origin.context instanceof Unnamed) continue;
      try {
        const handle = this.firstTouch.installFirstTouch(target, this.touchOptions, entry.origin.context);
        if (handle.methods === 0) continue;
        entry.current = handle;
        if (handle.onPrototype) this.instances.delete(target);
        else this.instances.set(target, handle);
      } catch {
        this.used(namesOf(entry.origin.context));
      }
    }
    this.rearmable = keep;
  }

  /** Stops the periodic re-arm (the instrumentation is disabled); armed beans stay armed until their next call. */
  stopRearming(): void {
    if (this.rearmTimer) clearInterval(this.rearmTimer);
    this.rearmTimer = undefined;
  }

  /**
   * Starts tracking `instance` under `name`, or records why it cannot be tracked. Never throws and never
   * replaces the instance: on success the same object now reports its first method call.
   */
  track(name: string, instance: unknown, options: TrackOptions = {}): TrackOutcome {
    this.changes += 1;
    if (options.framework !== true && this.exclude.has(name)) return this.skip(name, 'excluded');
    return this.record(name, this.attach(instance, options, name satisfies BeanNames));
  }

  /**
   * Starts tracking `instance` as {@link track} does, before its name is known: `key` is the adapter's own record
   * of the bean (NestJS's instance wrapper), by which {@link nameTracked} names it later. Calls meanwhile are
   * kept and told under the name then. An `exclude` list names the beans never wrapped, so with one
   * ({@link needsNamesFirst}) this is for a bean whose name, as far as the caller can tell yet, is not on it
   * ({@link excludes}); one its name at {@link nameTracked} puts on the list gets its methods back then.
   */
  trackUnnamed(key: object, instance: unknown, options: TrackOptions = {}): void {
    const context = new Unnamed(options.owner);
    const attached = this.attach(instance, options, context);
    if (attached.kind === 'tracked') context.target = instance as object;
    this.unnamed.push({ key, attached, owner: options.owner });
    // A reader caching by version (the actuator) must read again: its next snapshot names this bean.
    this.changes += 1;
  }

  /** Whether beans must be named before they are tracked: an `exclude` list names the beans never wrapped. */
  get needsNamesFirst(): boolean {
    return this.exclude.size > 0;
  }

  /** Whether `name` is on the `exclude` list: a bean under it is never wrapped. */
  excludes(name: string): boolean {
    return this.exclude.has(name);
  }

  /** Whether beans tracked by {@link trackUnnamed} (with `owner`, when given) wait for their names. */
  hasUnnamed(owner?: object): boolean {
    return owner === undefined ? this.unnamed.length > 0 : this.unnamed.some((u) => u.owner === owner);
  }

  /**
   * Names every bean tracked by {@link trackUnnamed} (with `owner`, when given) since the last call, in the order
   * tracked, by `identify(key)`,
   * and tells what their instances did meanwhile under those names. A bean whose identity says a library registered
   * it gets its methods back and counts as a framework bean, as if {@link track} had been told so.
   */
  nameTracked(identify: (key: object) => BeanIdentity, owner?: object): void {
    let unnamed = this.unnamed;
    if (owner === undefined) this.unnamed = [];
    else {
      // Two applications may start at once: each names the beans of its own container.
      this.unnamed = unnamed.filter((u) => u.owner !== owner);
      unnamed = unnamed.filter((u) => u.owner === owner);
    }
    for (const { key, attached } of unnamed) {
      let identity: BeanIdentity;
      try {
        identity = identify(key);
      } catch (err) {
        safeLog(
          'debug',
          `ghost tracking: a bean could not be named: ${err instanceof Error ? err.message : String(err)}`,
        );
        if (attached.kind === 'tracked') this.untrack(attached.handle);
        continue;
      }
      this.changes += 1;
      const { name, framework } = identity;
      if (attached.kind !== 'tracked') {
        this.record(name, framework ? { kind: 'framework' } : attached);
        continue;
      }
      const handle = attached.handle;
      const before = handle.context as Unnamed;
      if (framework || this.exclude.has(name)) {
        this.untrack(handle);
        this.record(name, framework ? { kind: 'framework' } : { kind: 'skipped', reason: 'excluded' });
        continue;
      }
      handle.context = name satisfies BeanNames;
      this.record(name, attached);
      for (const other of before.linked ?? []) this.link(other, handle);
      for (const [method, at] of before.methods ?? []) this.methodTouched([name], method, at);
      if (before.touchedAt !== undefined) this.touched([name], before.touchedAt);
    }
  }

  /**
   * Registers (or with `undefined` removes) what names `owner`'s unnamed beans right away, by a cheaper read than
   * its adapter's own: run when the snapshot, or a bean's methods, are asked for while some of them wait for a
   * name (the process ends before the analysis after ready, an actuator request comes first), so that no reader
   * ever sees a tracked bean without its name.
   */
  nameOnDemand(owner: object, namer: (() => void) | undefined): void {
    if (namer === undefined) this.namers.delete(owner);
    else this.namers.set(owner, namer);
  }

  /** Runs the namers of the owners whose beans wait for a name. */
  private nameWaiting(): void {
    if (this.unnamed.length === 0 || this.namers.size === 0) return;
    for (const [owner, namer] of [...this.namers]) {
      if (!this.hasUnnamed(owner)) continue;
      try {
        namer();
      } catch (err) {
        safeLog(
          'debug',
          `ghost tracking: beans could not be named: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
  }

  /** Takes a bean's wrappers off for good: tracked unnamed, its name said it must not be. */
  private untrack(handle: FirstTouchModule.FirstTouchHandle): void {
    const context = handle.context;
    if (context instanceof Unnamed) {
      context.dropped = true;
      if (context.rearmable !== undefined) context.rearmable.ended = true;
      // A later track() of the object (another name for it) starts afresh rather than finding this handle.
      if (context.target !== undefined) this.instances.delete(context.target);
    }
    try {
      handle.end();
    } catch {
      /* best effort: a wrapper left in place only forwards */
    }
  }

  /**
   * Instruments `instance` with `context` as its handle's, or says why not, before any name is recorded: what
   * {@link record} then applies under the bean's name. Never throws; the bean is unchanged unless tracked.
   */
  private attach(instance: unknown, options: TrackOptions, context: BeanNames | Unnamed): Attached {
    try {
      return this.attachUnsafe(instance, options, context);
    } catch (error) {
      // Only reachable through exotic objects whose introspection throws; the bean is unchanged.
      return { kind: 'failed', error };
    }
  }

  private attachUnsafe(instance: unknown, options: TrackOptions, context: BeanNames | Unnamed): Attached {
    if (options.framework === true) return { kind: 'framework' };
    if (options.scope !== undefined && options.scope !== 'singleton') return skipped('non-singleton');
    if (options.alias === true) return skipped('alias');
    if (options.infrastructure === true || typeof instance === 'function') return skipped('factory-bean');
    if (instance === null || typeof instance !== 'object') return skipped('no-methods');
    // Before anything that could run a Proxy trap.
    if (types.isProxy(instance)) return skipped('already-proxied');

    const existing = this.instances.get(instance) ?? this.firstTouch.pendingHandle(instance, this.touchOptions);
    if (existing !== undefined) return { kind: 'linked', handle: existing };
    if (!Object.isExtensible(instance)) return skipped('final-class');

    let handle;
    try {
      handle = this.firstTouch.installFirstTouch(instance, this.touchOptions, context);
    } catch (error) {
      // Nothing was changed; the prototype's lock is the application's choice, reported, not a failure.
      if (error instanceof this.firstTouch.LockedPrototypeError) return skipped('frozen-prototype');
      return { kind: 'failed', error };
    }
    if (handle.methods === 0) return skipped('no-methods');
    if (!handle.onPrototype) this.instances.set(instance, handle);
    if (options.owner !== undefined) {
      const list = this.owned.get(options.owner);
      if (list === undefined) this.owned.set(options.owner, [handle]);
      else list.push(handle);
    }
    return { kind: 'tracked', handle };
  }

  /** Records what tracking the bean named `name` came to. */
  private record(name: string, attached: Attached): TrackOutcome {
    switch (attached.kind) {
      case 'framework':
        this.framework.add(name);
        return { status: 'framework', name };
      case 'skipped':
        return this.skip(name, attached.reason);
      case 'failed':
        return this.fail(name, attached.error);
      case 'linked':
        return this.link(name, attached.handle);
      case 'tracked':
        // Named only on success, so a failed attempt leaves no name behind (a name is what counts as tracked).
        this.addName(name, attached.handle);
        return { status: 'tracked', name, methods: attached.handle.methods };
    }
  }

  /** The same object handed in again: same name is a no-op, another name shares the object's touches. */
  private link(name: string, handle: FirstTouchModule.FirstTouchHandle): TrackOutcome {
    let context = handle.context;
    // Tracked unnamed and not named yet: its owner's namer names it now, or the link waits for its name.
    if (context instanceof Unnamed && !context.dropped) {
      this.nameWaiting();
      context = handle.context;
      if (context instanceof Unnamed && !context.dropped) {
        (context.linked ??= []).push(name);
        return { status: 'tracked', name, methods: handle.methods };
      }
    }
    // Tracked unnamed and named a library's bean since (see nameTracked): under this name the object is tracked on
    // its own, as it would have been had the library's bean never been wrapped.
    if (context instanceof Unnamed) {
      const target = context.target;
      if (target === undefined) return this.record(name, { kind: 'framework' });
      return this.record(name, this.attach(target, { owner: context.owner }, name));
    }
    const names = namesOf(handle.context);
    if (names.includes(name)) return { status: 'already-tracked', name };
    this.addName(name, handle);
    handle.context = [...names, name] satisfies BeanNames;
    // An alias shares the methods already called on its object.
    for (const [method, at] of this.calledMethods.get(names[0]!) ?? []) this.methodTouched([name], method, at);
    if (!handle.pending) this.touched([name]);
    return { status: 'tracked', name, methods: handle.methods, aliasOf: names[0]! };
  }

  /** A name's first success names it, untouched, with its handle at method depth. */
  private addName(name: string, handle: FirstTouchModule.FirstTouchHandle): void {
    if (!this.names.has(name)) this.names.set(name, this.depth === 'method' ? handle : null);
  }

  private skip(name: string, reason: UntrackableReason): TrackOutcome {
    // The first reason recorded for a name is the one reported.
    if (!this.untrackable.has(name)) this.untrackable.set(name, reason);
    return { status: 'untrackable', name, reason };
  }

  private fail(name: string, err: unknown): TrackOutcome {
    const message = err instanceof Error ? err.message : String(err);
    safeLog('warn', `ghost tracking: bean "${name}" left unwrapped: ${message}`);
    return this.skip(name, `proxy-failed: ${message}`);
  }

  /** Runs once per instance at its first touch, and once per re-arm after. */
  private touched(names: readonly string[], at = Date.now()): void {
    for (const name of names) {
      const state = this.names.get(name);
      if (state === undefined || state instanceof Touched) continue;
      this.names.set(name, state === null ? TOUCHED : new Touched(state));
      this.changes += 1;
      for (const listener of this.listeners) {
        try {
          listener(name);
        } catch {
          /* a listener must not break the host's method call */
        }
      }
    }
    this.used(names, at);
  }

  private used(names: readonly string[], at = Date.now()): void {
    for (const name of names) {
      if (!this.names.has(name)) continue;
      for (const listener of this.useListeners) {
        try {
          listener(name, at);
        } catch {
          /* a listener must not break the host's method call */
        }
      }
    }
  }

  /** Method depth: a method's first call on the class of the beans tracked under `names`. */
  private methodTouched(names: readonly string[], method: string, at: number): void {
    for (const name of names) {
      let called = this.calledMethods.get(name);
      if (called === undefined) this.calledMethods.set(name, (called = new Map()));
      // After a re-arm (rearm()) a method's next call is told again: its time is then its last use in this period,
      // so a method used all along never ages into `dormant` on the strength of its first call. The listeners hear
      // only the first call; a late member told of an older call (tellCalled) moves nothing back.
      const previous = called.get(method);
      if (previous !== undefined && previous >= at) continue;
      called.set(method, at);
      this.changes += 1;
      for (const listener of this.methodUseListeners) {
        try {
          listener(name, method, at);
        } catch {
          /* a listener must not break the host's method call */
        }
      }
      if (previous !== undefined) continue;
      for (const listener of this.methodListeners) {
        try {
          listener(name, method, at);
        } catch {
          /* a listener must not break the host's method call */
        }
      }
    }
  }

  /**
   * Method depth: the methods watched on the bean tracked under `name` (its class chain's, lifecycle hooks
   * left out), each with when it was first called (undefined: not yet). Undefined at bean depth, or for a name
   * with no class methods (an object whose functions are its own properties is watched as a whole).
   */
  methodsOf(name: string): ReadonlyMap<string, number | undefined> | undefined {
    this.nameWaiting();
    const keys = handleOf(this.names.get(name))?.methodNames();
    if (keys === undefined || keys.length === 0) return undefined;
    const called = this.calledMethods.get(name);
    const methods = new Map<string, number | undefined>();
    for (const key of keys) methods.set(key, called?.get(key));
    return methods;
  }

  /** The class prototype the methods of the bean tracked under `name` are watched on (method depth). */
  prototypeOf(name: string): object | undefined {
    this.nameWaiting();
    return handleOf(this.names.get(name))?.classPrototype();
  }

  /**
   * Registers `listener`, called synchronously once per bean name and method inside the call that first calls
   * the method (method depth). Exceptions are swallowed. Returns a function that unregisters it.
   */
  onMethodTouch(listener: MethodTouchListener): () => void {
    this.methodListeners.push(listener);
    return () => {
      const i = this.methodListeners.indexOf(listener);
      if (i >= 0) this.methodListeners.splice(i, 1);
    };
  }

  /**
   * Registers `listener`, called synchronously at a method's first call and at its first call after each re-arm
   * ({@link rearm}), with the time the tracker keeps (method depth): what the ghost ledger sends as the method's
   * last use. Exceptions are swallowed. Returns a function that unregisters it.
   */
  onMethodUse(listener: MethodTouchListener): () => void {
    this.methodUseListeners.push(listener);
    return () => {
      const i = this.methodUseListeners.indexOf(listener);
      if (i >= 0) this.methodUseListeners.splice(i, 1);
    };
  }

  /**
   * Ends the tracking of every object tracked with this `owner` and not yet touched: their classes get their
   * methods back and nothing of the tracker keeps them alive. What was observed stays in the snapshot (they
   * are still reported untouched). Called when the owner, an application, closes.
   */
  end(owner: object): void {
    const list = this.owned.get(owner);
    if (list === undefined) return;
    this.owned.delete(owner);
    // Touched beans of the owner are re-armed no more, and those armed again give their methods back.
    const handles = new Set<unknown>(list);
    for (const entry of this.rearmable) {
      if (!handles.has(entry.origin)) continue;
      entry.ended = true;
      if (entry.current !== undefined) list.push(entry.current);
    }
    for (const handle of list) {
      try {
        handle.end();
      } catch (err) {
        safeLog(
          'debug',
          `ghost tracking: ending a bean's tracking failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
  }

  /** True once any method of a bean tracked under `name` has been invoked. */
  isTouched(name: string): boolean {
    return this.names.get(name) instanceof Touched;
  }

  /** True when `name` is reported as tracked (wrapped, and not also recorded as untrackable). */
  isTracked(name: string): boolean {
    return this.names.has(name) && !this.untrackable.has(name);
  }

  /**
   * Registers `listener` to be called synchronously, once per bean name, inside the call that first touches
   * the bean (so an active span of that call is current). Not on any later call. Exceptions are swallowed.
   * Returns a function that unregisters it.
   */
  onFirstTouch(listener: FirstTouchListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /**
   * Registers `listener` to be called synchronously at a bean's first touch and at its first call after each
   * re-arm ({@link rearm}): once per last-use period at most, per instance. Exceptions are swallowed. Returns a
   * function that unregisters it.
   */
  onUse(listener: UseListener): () => void {
    this.useListeners.push(listener);
    return () => {
      const i = this.useListeners.indexOf(listener);
      if (i >= 0) this.useListeners.splice(i, 1);
    };
  }

  /** Names the dependency-injection framework whose beans these are (the snapshot's `framework`). */
  setFramework(name: string): void {
    if (this.frameworkName === name) return;
    this.frameworkName = name;
    this.changes += 1;
  }

  /**
   * A lazy container's application bindings that have not been resolved yet: the snapshot lists them under
   * `neverResolved` until {@link noteResolved} names them.
   */
  expectResolution(names: Iterable<string>): void {
    this.unresolved ??= new Set();
    for (const name of names) this.unresolved.add(name);
    this.changes += 1;
  }

  /** A binding was resolved (a no-op for one not expected, or already resolved). */
  noteResolved(name: string): void {
    if (this.unresolved?.delete(name) === true) this.changes += 1;
  }

  /** Names of touched tracked beans, sorted: what another process needs to merge this one's findings. */
  touchedNames(): string[] {
    return this.snapshot().touched;
  }

  /**
   * The live snapshot, equal in shape to `diag-ghost-report.json`. Reading it changes nothing.
   * A name that some instance could not be tracked under is reported as untrackable even if another instance
   * with that name was wrapped: the unwrapped one could be in use unseen, so "untouched" would overstate.
   */
  snapshot(): GhostReport {
    this.nameWaiting();
    const touched: string[] = [];
    const untouched: string[] = [];
    for (const [name, state] of this.names) {
      if (this.untrackable.has(name)) continue;
      (state instanceof Touched ? touched : untouched).push(name);
    }
    return buildReport(
      touched,
      untouched,
      this.untrackable,
      this.framework.size,
      this.frameworkName,
      this.unresolved,
      this.depth === 'method' ? this.methodsSnapshot(touched, untouched) : undefined,
    );
  }

  /** Each tracked bean's methods, to the ISO time of their first call or null: names resolved now, not at start-up. */
  private methodsSnapshot(touched: readonly string[], untouched: readonly string[]): MethodsField {
    const out: MethodsField = {};
    for (const name of [...touched, ...untouched].sort()) {
      const methods = this.methodsOf(name);
      if (methods === undefined) continue;
      const field: Record<string, string | null> = {};
      for (const key of [...methods.keys()].sort()) {
        const at = methods.get(key);
        field[key] = at === undefined ? null : new Date(at).toISOString();
      }
      out[name] = field;
    }
    return out;
  }

  /** `GhostSnapshotSource` for the actuator. */
  ghostSnapshot(): GhostReport {
    return this.snapshot();
  }
}
