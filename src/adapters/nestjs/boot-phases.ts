import { types } from 'node:util';
import { BOOT_MARKS, markReady, STEP_KIND, stepEnded, stepReturned, stepStarted } from '../../shared/boot-clock';
import { safeLog } from '../../shared/logger';
import { nestTokenName } from './names';
import type { NestContainer, NestInstanceWrapper, NestModule } from './nest-types';

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Names of the phases of a Nest start (and close) on the start-up timeline: Spring Boot's `/startup` steps,
 * the start-up spans and the report's `startup` section use the same (docs/startup.md lists them).
 */
export const NEST_PHASES = {
  create: 'nest.create',
  createContext: 'nest.create_application_context',
  createMicroservice: 'nest.create_microservice',
  scan: 'nest.scan',
  instantiate: 'nest.instantiate',
  init: 'nest.init',
  middleware: 'nest.middleware',
  routes: 'nest.routes',
  onModuleInit: 'nest.on_module_init',
  onApplicationBootstrap: 'nest.on_application_bootstrap',
  listen: 'nest.listen',
  close: 'nest.close',
  onModuleDestroy: 'nest.on_module_destroy',
  beforeApplicationShutdown: 'nest.before_application_shutdown',
  dispose: 'nest.dispose',
  onApplicationShutdown: 'nest.on_application_shutdown',
} as const;

/** The lifecycle hooks timed per bean, and the phase each belongs to. */
export const HOOK_PHASES = {
  onModuleInit: NEST_PHASES.onModuleInit,
  onApplicationBootstrap: NEST_PHASES.onApplicationBootstrap,
  onModuleDestroy: NEST_PHASES.onModuleDestroy,
  beforeApplicationShutdown: NEST_PHASES.beforeApplicationShutdown,
  onApplicationShutdown: NEST_PHASES.onApplicationShutdown,
} as const;
export type LifecycleHook = keyof typeof HOOK_PHASES;

/**
 * Times a method of Nest from its call to the settling of what it returns: two clock readings. `then` runs after
 * it settled, with whether it failed.
 *
 * A promise is passed on as a promise of the same outcome, not as Nest's own: a reaction registered on Nest's
 * promise would mark its rejection handled, and an application that does not await `app.listen()` (or calls
 * `app.close()` from a signal handler) would no longer crash on its failure, but run on, or end with 0. The
 * caller's promise rejects as Nest's did, handled or not as the caller makes it.
 */
export function timed(name: string, original: Method, then?: (self: unknown, failed: boolean) => void): Method {
  return function phase(this: unknown, ...args: unknown[]) {
    const step = stepStarted(STEP_KIND.phase, name);
    let result: unknown;
    try {
      result = original.apply(this, args);
    } catch (err) {
      stepEnded(step);
      if (then) guard(() => then(this, true));
      throw err;
    }
    if (result instanceof Promise) {
      return result.then(
        (value: unknown) => {
          stepEnded(step);
          if (then) guard(() => then(this, false));
          return value;
        },
        (err: unknown) => {
          stepEnded(step);
          if (then) guard(() => then(this, true));
          throw err;
        },
      );
    } else {
      stepEnded(step);
      if (then) guard(() => then(this, false));
    }
    return result;
  };
}

function guard(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    safeLog('debug', `start-up timeline: ${(err as Error)?.message ?? String(err)}`);
  }
}

/** One method swapped for the length of a phase: where, what was there, and what stands in for it. */
interface Shadowed {
  readonly owner: Record<string, unknown>;
  readonly original: Method;
  readonly timer: Method;
}

const COLLECTIONS = ['providers', 'controllers', 'injectables', 'middlewares'] as const;

/**
 * Nest calls a lifecycle hook as `instance.onModuleInit()` from a function private to its hooks module, for
 * every module in turn (the hooks of one module at once). To time each bean's call without patching that
 * function, the method is swapped, for the length of the phase only, where it is defined — on the class's
 * prototype, or on the instance when it is an own property there — for one that times the call and names the bean
 * by its `this`; the phase's end puts the same method back by assignment.
 *
 * Nothing is added to or deleted from an instance: deleting a property turns a V8 object into a dictionary for
 * good, and every later property read of the bean would take the slow path. A Proxy (whose traps are the
 * application's), a frozen method or an accessor is left alone: its time stays in the phase's.
 */
function shadowHooks(container: NestContainer | undefined, hook: LifecycleHook): Shadowed[] {
  const shadowed: Shadowed[] = [];
  if (container === undefined || typeof container.getModules !== 'function') return shadowed;
  const seen = new Set<object>();
  /**
   * Per owner, which bean each instance whose hook is defined there is: a `Derived` bean's hook that calls
   * `super.onModuleInit()` reaches `Base.prototype`'s timer with the same `this`, which must not time it again.
   */
  const beans = new Map<object, WeakMap<object, { bean: string; module: string }>>();
  const owners = new Map<object, Shadowed>();
  for (const module of container.getModules().values()) {
    for (const key of COLLECTIONS) {
      const wrappers = (module as NestModule)[key];
      if (!(wrappers instanceof Map)) continue;
      for (const wrapper of wrappers.values()) {
        const instance = (wrapper as NestInstanceWrapper | undefined)?.instance;
        if (instance === null || typeof instance !== 'object' || seen.has(instance) || wrapper.isAlias) continue;
        seen.add(instance);
        if (types.isProxy(instance)) continue;
        // Read as Nest itself reads it right after (`isFunction(instance.onModuleInit)`), and first: most beans
        // have no hook, and a plain read costs less than walking the prototypes' descriptors (one app context of
        // 1,000 beans goes through here twice at start).
        const method = (instance as Record<string, unknown>)[hook];
        // Another phase's timer (two applications initialising at once, sharing a class): that phase puts it
        // back; this one leaves the owner alone, and its instances' time stays in its phase.
        if (typeof method !== 'function' || HOOK_TIMERS.has(method)) continue;
        const owner = ownerOf(instance, hook);
        if (owner === undefined) continue;
        let ownBeans = beans.get(owner);
        if (ownBeans === undefined) beans.set(owner, (ownBeans = new WeakMap()));
        ownBeans.set(instance, { bean: nestTokenName(wrapper.token ?? wrapper.name), module: module.name ?? '' });
        if (owners.has(owner)) continue;
        const timer = hookTimer(hook, method as Method, (self) => ownBeans.get(self as object));
        owners.set(owner, { owner: owner as Record<string, unknown>, original: method as Method, timer });
      }
    }
  }
  for (const entry of owners.values()) {
    entry.owner[hook] = entry.timer;
    shadowed.push(entry);
  }
  return shadowed;
}

/** Where `hook` is defined as a writable data property (the instance or a prototype), or undefined. */
function ownerOf(instance: object, hook: string): object | undefined {
  for (
    let o: object | null = instance;
    o !== null && o !== Object.prototype;
    o = Object.getPrototypeOf(o) as object | null
  ) {
    // A Proxy in the chain: its traps are the application's code, never run by us.
    if (types.isProxy(o)) return undefined;
    const d = Object.getOwnPropertyDescriptor(o, hook);
    if (d === undefined) continue;
    return typeof d.value === 'function' && d.writable === true && !Object.isFrozen(o) ? o : undefined;
  }
  return undefined;
}

/** Shutdown hooks under way: what a close still waits for, said while it waits (see `watchShutdown`). */
const closing = new Map<number, { hook: LifecycleHook; bean: string; started: number }>();
const SHUTDOWN_HOOKS: ReadonlySet<LifecycleHook> = new Set([
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/** Every timer a phase has put in place, to tell them from the application's methods. */
const HOOK_TIMERS = new WeakSet<Function>();

function hookTimer(
  hook: LifecycleHook,
  method: Method,
  beanOf: (self: unknown) => { bean: string; module: string } | undefined,
): Method {
  const shutdown = SHUTDOWN_HOOKS.has(hook);
  const timer = function lifecycleHook(this: unknown, ...args: unknown[]) {
    const who = beanOf(this);
    // Another instance of the class, or a subclass's `super.onModuleInit()`: called as it was, untimed.
    if (who === undefined) return Reflect.apply(method, this, args);
    const step = stepStarted(STEP_KIND.hook, hook, who.bean, who.module);
    const token = shutdown ? watchShutdown(hook, who.bean) : -1;
    const ended = (): void => {
      stepEnded(step);
      if (token >= 0) closing.delete(token);
    };
    let result: unknown;
    try {
      result = Reflect.apply(method, this, args);
    } catch (err) {
      ended();
      throw err;
    }
    if (result instanceof Promise) {
      // What follows is the hook's awaited time (a connection, a cache warm-up): recorded as a wait. Passed on
      // as a promise of the same outcome, so that no rejection is marked handled by us (see `timed`).
      stepReturned(step);
      return result.then(
        (value: unknown) => {
          ended();
          return value;
        },
        (err: unknown) => {
          ended();
          throw err;
        },
      );
    }
    ended();
    return result;
  };
  HOOK_TIMERS.add(timer);
  return timer;
}

/** How long an HTTP application's `init()` waits for a `listen()` to follow before it counts as ready. */
export const LISTEN_GRACE_MS = 1_000;

/** How often a close that is still waiting on hooks says which (a pod killed at its grace period writes nothing). */
export const SHUTDOWN_REPORT_MS = 5_000;
let closingToken = 0;
let closingTimer: NodeJS.Timeout | undefined;

/**
 * A shutdown hook has started: while any is under way, every five seconds one WARN names those still running
 * and for how long, so that the log of a pod killed at the end of its grace period says what the close was
 * waiting for. The timer never keeps the process alive.
 */
function watchShutdown(hook: LifecycleHook, bean: string): number {
  const token = closingToken++;
  closing.set(token, { hook, bean, started: performance.now() });
  if (closingTimer === undefined) {
    closingTimer = setInterval(() => {
      if (closing.size === 0) {
        clearInterval(closingTimer);
        closingTimer = undefined;
        return;
      }
      const now = performance.now();
      const waiting = [...closing.values()]
        .map((c) => `${c.bean}.${c.hook}() for ${((now - c.started) / 1000).toFixed(1)} s`)
        .join(', ');
      safeLog('warn', `the application's close is still waiting on ${waiting}`);
    }, SHUTDOWN_REPORT_MS);
    closingTimer.unref();
  }
  return token;
}

function unshadow(shadowed: readonly Shadowed[], hook: LifecycleHook): void {
  for (const { owner, original, timer } of shadowed) {
    try {
      // Only ours is taken back: a hook that assigned its own method meanwhile keeps it.
      if (owner[hook] === timer) owner[hook] = original;
    } catch (err) {
      safeLog('debug', `lifecycle hook timer not removed: ${(err as Error)?.message ?? String(err)}`);
    }
  }
}

/**
 * A `callInitHook`-like method of the application context, timed as a phase, each bean's hook within it timed
 * too. The bean's hook is called by Nest exactly as before, with its arguments, its `this` and its result.
 */
export function timedHookPhase(hook: LifecycleHook, original: Method, then?: () => void): Method {
  return function hookPhase(this: unknown, ...args: unknown[]) {
    let shadowed: Shadowed[] = [];
    try {
      shadowed = shadowHooks((this as { container?: NestContainer } | null)?.container, hook);
    } catch (err) {
      safeLog('debug', `${hook} not timed per bean: ${(err as Error)?.message ?? String(err)}`);
    }
    const restore = (): void => {
      unshadow(shadowed, hook);
      if (then) guard(then);
    };
    return timed(HOOK_PHASES[hook], original, restore).apply(this, args);
  };
}

/** What the Nest adapter tells the instrumentation about the start: ready, and a close finished. */
export interface BootListener {
  startupReady?(): void;
  shutdownFinished?(): void;
}

/**
 * Ready is the first `listen()` that resolves; an application context (no HTTP: a worker, a CLI) is ready when
 * its `init()` resolves and no `listen()` follows on the same turn (`listen()` calls `init()` first).
 */
export class NestReady {
  private listening = 0;

  constructor(private readonly listener: BootListener) {}

  listen(original: Method): Method {
    const ready = this;
    const inner = timed(NEST_PHASES.listen, original, (_self, failed) => {
      ready.listening--;
      if (!failed && markReady('listen')) ready.fire();
    });
    return function listen(this: unknown, ...args: unknown[]) {
      ready.listening++;
      return inner.apply(this, args);
    };
  }

  /**
   * `listenGraceMs`: for an HTTP application's own `init()`, how long a `listen()` may take to follow before the
   * init is taken as ready. Applications often do `await app.init(); await app.startAllMicroservices(); await
   * app.listen()`, or read configuration in between; a serverless handler never listens. An application context
   * (a worker, a CLI) is ready on the next turn after its init.
   */
  init(original: Method, listenGraceMs = 0): Method {
    return timed(NEST_PHASES.init, original, (_self, failed) => {
      if (failed || this.listening > 0 || !Number.isNaN(BOOT_MARKS.ready)) return;
      const at = performance.now();
      const decide = (): void => {
        process.off('beforeExit', decide);
        if (this.listening === 0 && markReady('init', at)) this.fire();
      };
      if (listenGraceMs <= 0) {
        // (Not unref'd: a CLI that ends right after its init still gets its timeline, one turn later.)
        setImmediate(decide);
        return;
      }
      // Unref'd, so that it never keeps a process alive; a process that is about to end decides at once.
      setTimeout(decide, listenGraceMs).unref();
      process.once('beforeExit', decide);
    });
  }

  closed(): void {
    guard(() => this.listener.shutdownFinished?.());
  }

  private fire(): void {
    guard(() => this.listener.startupReady?.());
  }
}
