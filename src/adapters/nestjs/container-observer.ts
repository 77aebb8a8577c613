import { types } from 'node:util';
import type { GhostDetector } from '../../ghost/detector';
import type { BeanObserver, StartupTimeline, TimelineBean as BeanCreation } from '../../ghost/reports/startup-timeline';
import { safeLog } from '../../shared/logger';
import { errorText } from '../../shared/errors';
import { SCAN_TURN_BUDGET_MS } from '../../ghost/origins/class-origin';
import { atProcessReady, STEP_KIND, stepEnded, stepStarted } from '../../shared/boot-clock';
import type * as ContainerReader from './container-reader';
import type { Instantiation } from './container-reader';
import type * as FrameworkBeans from './framework-beans';
import { isNestMixin, nestTokenName } from './names';
import type * as PassportModule from './passport';
import { TokenLookups, type ApplicationBeans } from './token-lookups';
import type * as EntryPoints from './entry-points';
import type * as EndpointsModule from './endpoints';
import type { EndpointRecord } from '../../ghost/analysis/bean-graph';
import type * as ReflectMetadataModule from '../../shared/reflect-metadata';
import {
  NEST_SCOPE,
  NEST_STATIC_CONTEXT_ID,
  type NestContainer,
  type NestInjector,
  type NestInstanceWrapper,
} from './nest-types';

type AsyncMethod = (this: unknown, ...args: unknown[]) => Promise<unknown>;

/**
 * How long after its bootstrap a container is analysed when its process has not become ready by then (ready
 * is the first `listen()` or `init()` that resolves; see `endBootstrap`). Longer than any hook phase we have
 * seen (Vendure's: 2 s under a profiler), so that it lands after the start, not inside it.
 */
export const ANALYSIS_FALLBACK_MS = 10_000;

/*
 * The container's reader and the entry-point classifier are required on the analysis's turn, after ready, or by
 * a read of names asked before it: nothing on the start-up path needs them, and every module loaded before
 * ready is start-up cost (with the bean graph they pull in, ~6 M instructions of each Nest start, issue #46).
 */
/* eslint-disable @typescript-eslint/no-require-imports -- loaded when first used, see above */
const reader = (): typeof ContainerReader => require('./container-reader') as typeof ContainerReader;
/**
 * Phase 2's questions of whose bean each one is, asked per bean: a Phase 1 start never asks them
 * (test/e2e/module-footprint.test.ts). Held once loaded: a `require` of a loaded module still goes through
 * Node's loader and its caches, and these are asked per bean.
 */
let frameworkBeansModule: typeof FrameworkBeans | undefined;
const frameworkBeans = (): typeof FrameworkBeans =>
  (frameworkBeansModule ??= require('./framework-beans') as typeof FrameworkBeans);
const entryPoints = (): typeof EntryPoints => require('./entry-points') as typeof EntryPoints;
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * One turn's part of the analysis after ready: false when it stopped at `budgetMs` and must run again (the scan
 * of require.cache, 10-20 ms on an application of 3,600 modules, in turns of a few ms each).
 */
type AnalysisSlice = (budgetMs: number) => boolean;

/** What the analysis's second slice read from the container, for its last. */
interface ContainerRead {
  readonly instantiations: WeakMap<object, Instantiation>;
  readonly snapshot: ContainerReader.ContainerSnapshot;
}

interface BeanEntry {
  readonly name: string;
  readonly framework: boolean;
}

/**
 * One call of `instantiateClass` while the container bootstrapped, as recorded on Nest's path: the raw facts
 * only. Everything derived from them (eager or not, names, scopes, the timeline, the bean spans) is worked out
 * by the analysis after start-up.
 */
interface Creation {
  readonly wrapper: NestInstanceWrapper;
  /** Nest 11+'s resolution context `{ contextId }`, or Nest 10's context id. */
  readonly context: unknown;
  readonly start: number;
  /** When the call returned: an asynchronous factory awaits from here to `end` (a wait on the timeline). */
  readonly returned: number;
  /** NaN until an asynchronous factory settles. */
  end: number;
}

/** Per container: what happened while it bootstrapped. */
interface ContainerState {
  bootstrapping: boolean;
  /**
   * Unique bean names, settled before the first instance exists when an `exclude` list makes Phase 2 name beans
   * first (see `namesAfterReady`); otherwise only what a bean created after the analysis is named by.
   * Keyed by declaring module and token, not by wrapper: NestJS 10 replaces every wrapper with a copy when it
   * creates the prototypes, after this read.
   */
  readonly beans: Map<unknown, Map<unknown, BeanEntry>>;
  /**
   * The same for the module's `injectables` (`@UseGuards(RolesGuard)`'s own instance), whose token is often a
   * provider's too (`providers: [RolesGuard]`): one map would give both instances one name and one touched flag.
   */
  readonly enhancers: Map<unknown, Map<unknown, BeanEntry>>;
  startedAt: number;
  /** Every instantiation while bootstrapping, in order; read once by the analysis. */
  readonly created: Creation[];
  /** `useValue` providers tracked at the end of bootstrap (Phase 2), which the analysis need not track again. */
  readonly valuesTracked: WeakSet<NestInstanceWrapper>;
  /**
   * Phase 2 tracks this bootstrap's beans by their wrappers and names them after ready, on the analysis's read
   * (`nameTracked`), rather than reading unique names before the first instance (unless an `exclude` list needs
   * them first): true until they are named.
   */
  namesAfterReady: boolean;
  /**
   * While beans go unnamed: per module, whether a library registered it (true), the application (false), or
   * not known before the analysis scans `require.cache` (null). One look per bean instead of the module's origin
   * asked again for each of its beans.
   */
  readonly moduleOwners: Map<unknown, boolean | null>;
  /**
   * The applications built on this container (an HTTP application, the microservices connected to it, an
   * application context), as each starts its `onModuleInit` phase: what they serve tells the inventory which
   * endpoints no call can reach in this process (`servedTransports`).
   */
  readonly applications: unknown[];
}

/** Whether any module of `container` applies middleware (`consumer.apply(...)` in its `configure()`). */
function hasMiddleware(container: NestContainer): boolean {
  for (const mod of container.getModules().values()) if ((mod.middlewares?.size ?? 0) > 0) return true;
  return false;
}

/** Nest 11+ passes a resolution context `{ contextId }`; Nest 10 passes the context id itself. */
function isStaticContext(context: unknown): boolean {
  const ctx = context as { contextId?: { id?: unknown }; id?: unknown } | undefined;
  const contextId = ctx?.contextId ?? ctx;
  return contextId === undefined || (contextId as { id?: unknown }).id === NEST_STATIC_CONTEXT_ID;
}

function isSingleton(wrapper: NestInstanceWrapper): boolean {
  return wrapper.scope !== NEST_SCOPE.TRANSIENT && wrapper.scope !== NEST_SCOPE.REQUEST;
}

function scopeName(wrapper: NestInstanceWrapper): string {
  return isSingleton(wrapper) ? 'singleton' : wrapper.scope === NEST_SCOPE.TRANSIENT ? 'transient' : 'request';
}

/** The start-up timeline in wall-clock milliseconds, from `performance.now()` readings. */
function timeline(startedAt: number, endedAt: number, beans: readonly BeanCreation[]): StartupTimeline {
  const wall = (t: number) => performance.timeOrigin + t;
  return {
    startTime: wall(startedAt),
    endTime: wall(endedAt),
    beans: beans.map((b) => ({
      ...b,
      startTime: wall(b.startTime),
      endTime: wall(b.endTime),
      ...(b.returned !== undefined ? { returned: wall(b.returned) } : {}),
    })),
  };
}

/** A factory provider's function, observed for one call: whether it returned a promise. */
interface ObservedFactory {
  readonly host: { metatype: unknown };
  readonly original: (...args: unknown[]) => unknown;
  readonly observed: (...args: unknown[]) => unknown;
  returnedThenable: boolean;
}

/**
 * `instantiateClass` calls a factory as `targetMetatype.metatype(...)`, synchronously before its first await:
 * for that call only, the function is swapped on the wrapper for one that notes what it returned, and put back
 * as soon as `instantiateClass` returns (or throws). Nothing else runs in between but the factory itself.
 * Undefined when the wrapper's `metatype` is not a plain writable function property.
 */
function factoryOf(target: unknown): ObservedFactory | undefined {
  if (target === null || typeof target !== 'object') return undefined;
  const d = Object.getOwnPropertyDescriptor(target, 'metatype');
  if (d === undefined || typeof d.value !== 'function' || d.writable !== true) return undefined;
  const original = d.value as (...args: unknown[]) => unknown;
  const observed: ObservedFactory = {
    host: target as { metatype: unknown },
    original,
    observed: function factory(this: unknown, ...args: unknown[]) {
      const value = Reflect.apply(original, this, args);
      // Asked of the value's internal slot, not its `then`: reading a property of what a factory returned
      // may run the application's code (a Proxy's trap, a getter; test/e2e/precision.test.ts). A thenable that
      // is no native promise is then timed as a value, its wait left out.
      observed.returnedThenable = types.isPromise(value);
      return value;
    },
    // Until it is called: a request- or transient-scoped factory (REQUEST, INQUIRER) is not called at start-up,
    // and what Nest awaits then is nothing of its own.
    returnedThenable: false,
  };
  return observed;
}

/**
 * Watches one NestJS process's containers through two patched methods:
 * - `InstanceLoader.prototype.createInstancesOfDependencies`: the span of bootstrap; when it resolves every
 *   static instance exists, so Phase 1 runs and `diag-report.json` is written;
 * - `Injector.prototype.instantiateClass`: each bean's creation, timed; with Phase 2 on, the new instance is
 *   tracked right here, before any dependent receives it, and after the application's `instanceDecorator`
 *   (through the Proxy that decorator may return: see `observeDecorator`);
 * and, with Phase 2 on, reads what `Module.prototype.addCustomValue` stored (see `wrapAddCustomValue`).
 * No wrapper changes what the original returns or throws.
 */
export class NestContainerObserver {
  private readonly containers = new WeakMap<object, ContainerState>();
  /** Analyses scheduled at the end of a bootstrap and not yet run; see `settle`. */
  private readonly pendingAnalyses = new Set<() => void>();
  private passportStrategies: PassportModule.PassportStrategies | undefined;

  /**
   * Which passport strategies no guard uses; fed `@nestjs/passport`'s exports by the module hooks. Made (and its
   * module loaded) when `@nestjs/passport` loads or the analysis asks: an application without passport never
   * loads it before ready.
   */
  get passport(): PassportModule.PassportStrategies {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (this.passportStrategies ??= new (require('./passport') as typeof PassportModule).PassportStrategies());
  }
  /** Lookups by token after start-up, which take a candidate off the list; fed by the resolver's patches. */
  readonly lookups: TokenLookups;
  /**
   * A Proxy the application's `instanceDecorator` returned → the instance it was handed, from the decorator's
   * call until the bean is tracked (weakly held: a request-scoped one is never tracked, and goes with its Proxy).
   * Filled only with Phase 2 on.
   */
  private readonly undecorated = new WeakMap<object, object>();
  /** The injectors' decorators as `observeDecorator` left them, so that each is wrapped once. */
  private readonly observedDecorators = new WeakSet<Function>();

  constructor(
    private readonly detector: GhostDetector,
    private readonly containerInfo: () => { name: string; version?: string },
    private readonly beans: BeanObserver = {},
  ) {
    this.lookups = new TokenLookups(detector);
  }

  wrapCreateInstances(original: AsyncMethod): AsyncMethod {
    const observer = this;
    return function createInstancesOfDependencies(this: unknown, ...args: unknown[]) {
      const container = (this as { container?: NestContainer } | null)?.container;
      const state = container ? observer.beginBootstrap(container) : undefined;
      const result = original.apply(this, args);
      if (!state || !container) return result;
      // Observe the promise without changing it: the caller gets the very value or error Nest produced.
      return Promise.resolve(result).then(
        (value) => {
          observer.endBootstrap(container, state);
          return value;
        },
        (err: unknown) => {
          state.bootstrapping = false;
          observer.nameTracked(container, state, undefined);
          observer.lookups.bootstrapFailed();
          observer.safe(() => observer.beans.bootstrapFinished?.(container, err, observer.creations(state, new Map())));
          throw err;
        },
      );
    };
  }

  /**
   * While a container bootstraps, a creation costs Nest's path two clock readings and one small record; what
   * is derived from it (names, scopes, the timeline, the bean spans) waits for the analysis after start-up: on
   * 1,000 beans, deriving it here was ~2 % of a small app's start-up instructions (callgrind). A class is
   * constructed synchronously inside `instantiateClass`, so its end is read right after the call, and so is a
   * factory's that returned a value; only a factory that returned a promise, and Phase 2, which must track the
   * instance before any dependent receives it, observe Nest's promise.
   */
  wrapInstantiateClass(original: AsyncMethod): AsyncMethod {
    const observer = this;
    return function instantiateClass(this: unknown, ...args: unknown[]) {
      const wrapper = args[1] as NestInstanceWrapper | undefined;
      const container = wrapper?.host?.container;
      const state = container ? observer.containers.get(container) : undefined;
      if (!state) return original.apply(this, args);
      const tracker = observer.detector.tracker;
      if (tracker !== undefined) observer.observeDecorator(this as NestInjector | null);
      const factory = state.bootstrapping && wrapper!.inject != null ? factoryOf(args[2]) : undefined;
      const start = performance.now();
      let result: Promise<unknown>;
      if (factory === undefined) result = original.apply(this, args);
      else {
        try {
          factory.host.metatype = factory.observed;
          result = original.apply(this, args);
        } finally {
          factory.host.metatype = factory.original;
        }
      }
      // A class's end is read now; so is a factory's that returned a value. One that returned a promise
      // returns here at its first await, and its wait follows. (Nest awaits either kind, so waiting for
      // Nest's promise to read a synchronous factory's end would count the beans created concurrently as its
      // wait: 10-12 ms for REQUEST or a registerAs() config on brocoders/nestjs-boilerplate.)
      const returned = performance.now();
      const awaited = wrapper!.inject != null && (factory === undefined || factory.returnedThenable);
      const creation: Creation | undefined = state.bootstrapping
        ? { wrapper: wrapper!, context: args[3], start, returned, end: awaited ? NaN : returned }
        : undefined;
      if (creation !== undefined) state.created.push(creation);
      const awaitsEnd = creation !== undefined && Number.isNaN(creation.end);
      // A class is constructed (and decorated) before `instantiateClass` first awaits, so its instance is
      // tracked now, before Nest's continuation hands it to any dependent; only a factory's value waits for
      // Nest's promise. A reaction per bean (a closure and a promise job on each of 1,000 creations) was
      // ~60 M instructions of Phase 2's start-up in an ablation (docs/benchmarks.md, issue #46).
      if (tracker !== undefined && wrapper!.inject == null)
        observer.trackConstructed(container!, state, wrapper!, args[3]);
      const tracksValue = tracker !== undefined && wrapper!.inject != null;
      if (!tracksValue && !awaitsEnd) return result;
      // Registered beside Nest's own await rather than in front of it: this reaction runs before Nest's
      // continuation hands the value to any dependent, and the caller gets Nest's very promise (no extra
      // promise and microtask per bean).
      const settled = (instance: unknown): void => {
        if (awaitsEnd) creation!.end = performance.now();
        if (tracksValue) observer.track(container!, state, wrapper!, args[3], instance);
      };
      if (result instanceof Promise) {
        result.then(settled, () => undefined);
        return result;
      }
      return Promise.resolve(result).then((instance) => {
        settled(instance);
        return instance;
      });
    };
  }

  /**
   * An application that passes `instrument.instanceDecorator` (`@nestjs/observe` does, for every provider) may
   * get a Proxy back for each instance, and its dependents receive that Proxy; a Proxy is never tracked (its
   * traps are user code: `already-proxied`). Tracking does not need the bean itself, though: it puts its
   * wrappers on the class prototype, and a call through the Proxy reaches them, whether the trap calls the
   * method on the instance or on the Proxy. So the instance the decorator was handed is what gets tracked.
   *
   * Nest (>= 11.1.4, and 12) applies the decorator only inside `instantiateClass`, as `this.instanceDecorator`,
   * an own property its constructor sets on each injector. This wraps that property, on the injector, at its
   * first instantiation with Phase 2 on: no method patched beyond `instantiateClass` itself, nothing of the
   * application's options object changed (wrapping the option instead would mean patching
   * `NestFactory.create`, `createApplicationContext` and `createMicroservice`, each with its own argument
   * shapes, and handing Nest a copy of the caller's options), and the wrapper returns exactly what the
   * application's decorator returned, which runs once per instance as before. Nest 10 and early 11 have no such
   * property: nothing changes there. `useValue` providers are decorated outside any injector (see
   * `wrapAddCustomValue`). A Proxy the application built another way (a factory's) reaches the decorator as the
   * instance, and stays `already-proxied`.
   */
  private observeDecorator(injector: NestInjector | null): void {
    try {
      const decorate = injector?.instanceDecorator;
      if (typeof decorate !== 'function' || this.observedDecorators.has(decorate)) return;
      const undecorated = this.undecorated;
      const observed = function instanceDecorator(this: unknown, instance: unknown): unknown {
        const decorated: unknown = Reflect.apply(decorate, this, arguments);
        if (decorated !== instance && types.isProxy(decorated) && typeof instance === 'object' && instance !== null) {
          undecorated.set(decorated as object, instance);
        }
        return decorated;
      };
      this.observedDecorators.add(observed);
      injector!.instanceDecorator = observed;
    } catch (err) {
      safeLog('debug', `the injector's instanceDecorator is not observed: ${errorText(err)}`);
    }
  }

  /**
   * A `useValue` provider is decorated while the modules are scanned: `Module.prototype.addCustomValue` hands
   * the provider's value to the application's option itself, outside any injector, and stores what it returns.
   * The value is the provider's own `useValue`, so what was decorated is known without going near the
   * decorator: when the stored instance is a Proxy in its place, the analysis tracks the value instead (as
   * `observeDecorator` does for classes and factories).
   */
  wrapAddCustomValue(
    original: (this: unknown, ...args: unknown[]) => unknown,
  ): (this: unknown, ...args: unknown[]) => unknown {
    const observer = this;
    return function addCustomValue(this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      if (observer.detector.tracker !== undefined) observer.noteDecoratedValue(args[0], args[1]);
      return result;
    };
  }

  private noteDecoratedValue(provider: unknown, collection: unknown): void {
    try {
      const { provide, useValue } = provider as { provide?: unknown; useValue?: unknown };
      if (useValue === null || typeof useValue !== 'object' || !(collection instanceof Map)) return;
      const stored = (collection.get(provide) as NestInstanceWrapper | undefined)?.instance;
      if (stored !== useValue && types.isProxy(stored)) this.undecorated.set(stored as object, useValue);
    } catch (err) {
      safeLog('debug', `a useValue provider's decoration not recorded: ${errorText(err)}`);
    }
  }

  /** What the application's decorator was handed, when it returned a Proxy of it; `instance` otherwise. */
  private undecoratedOf(instance: unknown): unknown {
    const undecorated = this.undecorated.get(instance as object);
    if (undecorated === undefined) return instance;
    this.undecorated.delete(instance as object);
    return undecorated;
  }

  private beginBootstrap(container: NestContainer): ContainerState | undefined {
    if (this.containers.has(container)) {
      // A second call for the same container is LazyModuleLoader loading a module after startup: its beans
      // are not eager, and the startup report stands.
      return undefined;
    }
    const state: ContainerState = {
      bootstrapping: true,
      beans: new Map(),
      enhancers: new Map(),
      startedAt: performance.now(),
      created: [],
      valuesTracked: new WeakSet(),
      namesAfterReady: this.detector.tracker?.needsNamesFirst === false,
      moduleOwners: new Map(),
      applications: [],
    };
    this.containers.set(container, state);
    this.lookups.bootstrapStarted();
    // Unique names before the first instance exists are needed only to track instances under the report's
    // names, and only when an `exclude` list must be matched before anything is wrapped: otherwise beans are
    // tracked unnamed and named after ready, and start-up pays for one read of the container, at the end.
    const tracker = this.detector.tracker;
    if (tracker?.needsNamesFirst === true) this.preRead(container, state);
    else tracker?.nameOnDemand(container, () => this.nameByPreRead(container));
    this.safe(() => this.beans.bootstrapStarted?.(container));
    return state;
  }

  private preRead(container: NestContainer, state: ContainerState): void {
    try {
      const origins = this.detector.origins;
      // Usually known already (modules record where they were decorated): the scan then waits for the analysis.
      if (!frameworkBeans().frameworkOriginsKnown(container, origins)) origins.scanRequireCache();
      for (const [wrapper, bean] of reader().readBeanNames(container, origins)) this.remember(state, wrapper, bean);
    } catch (err) {
      safeLog('debug', `could not pre-read the container: ${errorText(err)}`);
    }
  }

  /**
   * An application built on a bootstrapped container starts its `onModuleInit` phase (an HTTP application, a
   * microservice, an application context: each calls it once): kept for the inventory after ready, which reads
   * what it serves. One array push per application.
   */
  applicationInitialising(app: unknown): void {
    try {
      const container = (app as { container?: NestContainer } | null)?.container;
      const state = container ? this.containers.get(container) : undefined;
      if (state !== undefined && !state.applications.includes(app)) state.applications.push(app);
    } catch (err) {
      safeLog('debug', `an application not recorded: ${errorText(err)}`);
    }
  }

  /**
   * Phase 2, the middleware `configure()` applies: Nest creates them in `init()`'s `registerModules`, after the
   * bootstrap (their wrappers have no `host`, so `instantiateClass` cannot tell whose container they belong to),
   * and `registerRouter` then binds each static one's `use` once (`instance.use.bind(instance)`) for every request
   * of its routes. Tracked here, as `registerModules` settles and before that bind, the bound function is the
   * wrapper on the prototype: the first request through the middleware is its touch, as a route handler's is
   * (a captured wrapper, docs/tracking.md). An application with no middleware pays one look at each module's map.
   */
  middlewareCreated(app: unknown): void {
    if (this.detector.tracker === undefined) return;
    try {
      const container = (app as { container?: NestContainer } | null)?.container;
      const state = container ? this.containers.get(container) : undefined;
      if (state === undefined || !hasMiddleware(container!)) return;
      // Named now that the modules' configure() have run: the pre-read saw no middleware.
      const names = reader().readBeanNames(container!, this.detector.origins);
      for (const mod of container!.getModules().values()) {
        for (const wrapper of mod.middlewares?.values() ?? []) {
          const bean = names.get(wrapper);
          // A request-scoped or transient one is created per request: the analysis reports it (`non-singleton`).
          if (bean === undefined || !isSingleton(wrapper) || wrapper.isDependencyTreeStatic?.() === false) continue;
          this.detector.tracker.track(bean.name, wrapper.instance, {
            scope: 'singleton',
            framework: bean.framework,
            owner: container,
          });
        }
      }
    } catch (err) {
      safeLog('debug', `middleware not tracked: ${errorText(err)}`);
    }
  }

  /**
   * Phase 2, a class: Nest has stored the new (and decorated) instance on the wrapper by the time
   * `instantiateClass` returns its promise. A constructor that threw leaves the prototype placeholder there,
   * tracked like the instance would have been: the bootstrap fails with that error anyway, and first-touch
   * wrappers change no behaviour.
   */
  private trackConstructed(
    container: NestContainer,
    state: ContainerState,
    wrapper: NestInstanceWrapper,
    context: unknown,
  ): void {
    if (!isStaticContext(context) || !isSingleton(wrapper)) return;
    let instance: unknown;
    try {
      instance = wrapper.instance;
    } catch (err) {
      safeLog('debug', `instantiation of a bean not recorded: ${errorText(err)}`);
      return;
    }
    this.track(container, state, wrapper, context, instance);
  }

  /**
   * Phase 2: a new static singleton is tracked under the report's name. Per-request and transient instances are
   * reported once, at the end of bootstrap, never per creation.
   */
  private track(
    container: NestContainer,
    state: ContainerState,
    wrapper: NestInstanceWrapper,
    context: unknown,
    instance: unknown,
  ): void {
    try {
      if (!isStaticContext(context) || !isSingleton(wrapper)) return;
      // A module class is no bean to delete on its own (the verdicts leave it out): tracked, each one counted as
      // untrackable (`no-methods`), 117 of the 118 a real monorepo reported with one untrackable verdict (#44).
      if (wrapper.host !== undefined && wrapper.host !== null && wrapper.token === wrapper.host.metatype) return;
      const tracker = this.detector.tracker;
      if (tracker === undefined) return;
      // An alias's instance is its target's: linked, it read `in-use` on its target's calls.
      const alias = wrapper.isAlias === true ? { alias: true } : undefined;
      if (state.namesAfterReady) {
        const framework = this.frameworkIfKnown(state, wrapper);
        tracker.trackUnnamed(wrapper, this.undecoratedOf(instance), { owner: container, framework, ...alias });
        return;
      }
      const { name, framework } = this.beanOf(state, wrapper);
      tracker.track(name, this.undecoratedOf(instance), { scope: 'singleton', framework, owner: container, ...alias });
    } catch (err) {
      safeLog('debug', `instantiation of a bean not recorded: ${errorText(err)}`);
    }
  }

  /**
   * What the bootstrap's creations say about each wrapper: eager when created in the static context as a
   * singleton, and how long the first such creation took.
   */
  private instantiations(state: ContainerState): WeakMap<object, Instantiation> {
    const seen = new WeakMap<object, Instantiation>();
    for (const c of state.created) {
      // (an end still NaN is a factory that failed, and with it the bootstrap)
      if (!isStaticContext(c.context) || Number.isNaN(c.end) || seen.has(c.wrapper)) continue;
      seen.set(c.wrapper, { eager: isSingleton(c.wrapper), ms: c.end - c.start });
    }
    return seen;
  }

  /** The bootstrap's static creations under the report's names where the read gave one (`nameOf`), else the token's. */
  private creations(
    state: ContainerState,
    nameOf: ReadonlyMap<NestInstanceWrapper, { name: string; module?: string }>,
  ): BeanCreation[] {
    const out: BeanCreation[] = [];
    for (const c of state.created) {
      if (!isStaticContext(c.context) || Number.isNaN(c.end)) continue;
      const w = c.wrapper;
      const named = nameOf.get(w) ?? {
        name: nestTokenName(w.token ?? w.name),
        ...(w.host?.name ? { module: w.host.name } : {}),
      };
      out.push({
        ...named,
        scope: scopeName(w),
        startTime: c.start,
        endTime: c.end,
        ...(c.end - c.returned > 0.05 ? { returned: c.returned } : {}),
      });
    }
    return out;
  }

  /**
   * The end of bootstrap: every static instance exists. The analysis (reading the container, Phase 1, the
   * reports, the start-up spans) is work the application does not wait for; what it reads stays as it was
   * (instances created later are not static and were never part of it).
   *
   * It (Phase 1, the report and its page: 40-100 ms on a real application) runs on the turn after the
   * process is ready, not on the turn after the bootstrap: an application whose lifecycle hooks await I/O (a
   * database, a translation loader) would otherwise run it inside that await and start that much later (an
   * outside trial on brocoders/nestjs-boilerplate, 2026-11-25: ready +95 ms, billed to its `I18nModule` hook).
   * A container bootstrapped after ready is analysed on the next turn; one whose process never becomes ready
   * (a `NestFactory.create()` never initialised) after ANALYSIS_FALLBACK_MS, or when it closes (`settle`).
   */
  private endBootstrap(container: NestContainer, state: ContainerState): void {
    state.bootstrapping = false;
    const endedAt = performance.now();
    if (this.detector.tracker) this.trackValues(container, state);
    const slices = this.analysisSlices(container, state, endedAt);
    let timer: NodeJS.Immediate | undefined;
    let fallback: NodeJS.Timeout | undefined;
    const done = (): void => {
      this.pendingAnalyses.delete(finish);
      unsubscribe();
      if (fallback !== undefined) clearTimeout(fallback);
    };
    // One slice a turn: a request that reached the listening process meanwhile is served between two. A slice
    // that says it is not done (the budgeted scan of require.cache) runs again on the next turn.
    const next = (): void => {
      timer = undefined;
      if (slices[0]?.(SCAN_TURN_BUDGET_MS) !== false) slices.shift();
      if (slices.length > 0) timer = setImmediate(next);
      else done();
    };
    const finish = (): void => {
      if (timer !== undefined) clearImmediate(timer);
      timer = undefined;
      done();
      while (slices.length > 0) slices.shift()!(Infinity);
    };
    this.pendingAnalyses.add(finish);
    const unsubscribe = atProcessReady(() => {
      // Not unref'd: a process ending right after its ready still gets its report.
      timer = setImmediate(next);
    });
    if (timer === undefined) {
      fallback = setTimeout(finish, ANALYSIS_FALLBACK_MS);
      fallback.unref();
    }
  }

  /**
   * The analysis after ready, in slices run one a turn (see `endBootstrap`): on Vendure (4,700 modules, 520
   * endpoints) it took 630 ms of one turn under a profiler on a busy machine, and the first request, a readiness
   * probe's, waited behind all of it (issue #46, time to first answer). Learning class origins from
   * `require.cache` (30 %) takes turns of at most SCAN_TURN_BUDGET_MS, reading the container and its endpoints a turn
   * each, before Phase 1 and the report; the page has its own turns after (`GhostDetector.containerReady`).
   */
  private analysisSlices(container: NestContainer, state: ContainerState, endedAt: number): AnalysisSlice[] {
    let read: ContainerRead | undefined;
    let failure: unknown;
    const slice =
      (work: (budgetMs: number) => boolean | void): AnalysisSlice =>
      (budgetMs) => {
        const step = stepStarted(STEP_KIND.diag, 'diag.analysis');
        try {
          if (failure === undefined) return work(budgetMs) !== false;
        } catch (err) {
          failure = err;
        } finally {
          stepEnded(step);
        }
        return true;
      };
    return [
      slice((budgetMs) => this.detector.origins.scanRequireCache(budgetMs)),
      slice(() => {
        const instantiations = this.instantiations(state);
        read = { instantiations, snapshot: reader().readContainer(container, instantiations, this.detector.origins) };
      }),
      // The inventory of endpoints on a turn of its own (Vendure's 520: a third of reading the container).
      slice(() => {
        const snapshot = read!.snapshot;
        snapshot.graph.endpoints = this.endpoints(container, snapshot);
      }),
      slice(() => this.analyse(container, state, endedAt, read, failure)),
    ];
  }

  /**
   * Phase 2: `useValue` providers never pass through `instantiateClass`, and the application may call them as
   * soon as `create()` returns (a standalone context's `app.get('CONFIG').load()` on the next line), before the
   * analysis's turn: they are tracked here, before Nest's continuation runs (named with the others after ready).
   */
  private trackValues(container: NestContainer, state: ContainerState): void {
    try {
      for (const mod of container.getModules().values()) {
        const providers = mod.providers;
        if (!(providers instanceof Map)) continue;
        for (const wrapper of providers.values()) {
          if (!wrapper || state.valuesTracked.has(wrapper) || frameworkBeans().kindOf(wrapper) !== 'value') continue;
          state.valuesTracked.add(wrapper);
          this.track(container, state, wrapper, undefined, this.undecoratedOf(wrapper.instance));
        }
      }
    } catch (err) {
      safeLog('debug', `value providers not tracked at the end of bootstrap: ${errorText(err)}`);
    }
  }

  /** Runs what is left of every scheduled analysis now: an application closed (or a report asked for) first. */
  settle(): void {
    for (const finish of [...this.pendingAnalyses]) finish();
  }

  /** The analysis's last slice: Phase 1 and the report, on what the earlier slices read (or their failure). */
  private analyse(
    container: NestContainer,
    state: ContainerState,
    endedAt: number,
    read: ContainerRead | undefined,
    failure: unknown,
  ): void {
    let beans: BeanCreation[] | undefined;
    try {
      if (read === undefined) {
        this.nameTracked(container, state, undefined);
        throw failure instanceof Error ? failure : new Error(errorText(failure));
      }
      const origins = this.detector.origins;
      const { instantiations, snapshot } = read;
      reader().warnIfMangled(snapshot.graph);
      this.nameTracked(container, state, snapshot);
      const tracker = this.detector.tracker;
      if (tracker) {
        // What instantiateClass never saw: useValue providers, and non-singletons (reported, not wrapped).
        for (const [id, wrapper] of snapshot.wrappers) {
          const bean = snapshot.graph.bean(id);
          if (bean.scope !== 'singleton') {
            tracker.track(bean.name, undefined, { scope: bean.scope, framework: bean.framework });
          } else if (bean.kind === 'value' && !state.valuesTracked.has(wrapper)) {
            const value = this.undecoratedOf(snapshot.facts.get(id)?.instance);
            tracker.track(bean.name, value, { framework: bean.framework, owner: container });
          } else if (!instantiations.has(wrapper) && bean.framework) {
            tracker.track(bean.name, undefined, { framework: true });
          }
        }
      }
      beans = this.creations(state, this.reportNames(snapshot));
      const applicationInstances = this.applicationInstances(snapshot);
      this.lookups.beforeReport(applicationInstances);
      const classifyEntryPoints = entryPoints().nestEntryPoints;
      const unusedStrategies = this.safe(
        () => this.passport.unused(snapshot.facts.values()),
        'passport strategy analysis',
      );
      this.detector.containerReady({
        graph: snapshot.graph,
        classify: (bean) => {
          const facts = snapshot.facts.get(bean.id);
          if (!facts) return [];
          if (unusedStrategies?.has(facts.instance as object) === true)
            return { candidate: 'unused-passport-strategy' };
          return classifyEntryPoints(facts, origins);
        },
        framework: 'nestjs',
        libraryClass: isNestMixin,
        container: this.containerInfo(),
        instantiationMs: endedAt - state.startedAt,
        timeline: timeline(state.startedAt, endedAt, beans),
      });
      this.lookups.watch(applicationInstances);
    } catch (err) {
      this.lookups.bootstrapFailed();
      safeLog('warn', `ghost analysis of the NestJS container failed: ${errorText(err)}`);
    }
    state.created.length = 0;
    // Every static instance has been tracked and named by now; what the container creates later
    // (a lazily loaded module, `moduleRef.create`) was never pre-read and goes by its token. Kept, the names
    // were the largest part of Phase 2's heap per bean after start-up (docs/tracking.md#memory).
    state.beans.clear();
    state.enhancers.clear();
    this.safe(() => this.beans.bootstrapFinished?.(container, undefined, beans));
  }

  /**
   * The inventory of entry points, read here on the analysis's turn after ready (routes exist from `init()`, the
   * global prefix and versioning are set by then): nothing of it is on the boot path. A failure leaves the
   * report without it, said once.
   */
  private endpoints(
    container: NestContainer,
    snapshot: ContainerReader.ContainerSnapshot,
  ): readonly EndpointRecord[] | undefined {
    try {
      // Required here, on the analysis's turn: an application does not compile the inventory's modules while it
      // starts (issue 46: every module loaded before ready is start-up cost).
      /* eslint-disable @typescript-eslint/no-require-imports */
      const meta = (require('../../shared/reflect-metadata') as typeof ReflectMetadataModule).metadataApi();
      if (meta === undefined) return undefined;
      const { readEndpoints, servedTransports } = require('./endpoints') as typeof EndpointsModule;
      /* eslint-enable @typescript-eslint/no-require-imports */
      const names = new Map<NestInstanceWrapper, string>();
      for (const [id, wrapper] of snapshot.wrappers) names.set(wrapper, snapshot.graph.bean(id).name);
      const apps = this.containers.get(container)?.applications ?? [];
      return readEndpoints(container, meta, names, new Date(), servedTransports(apps));
    } catch (err) {
      safeLog('warn', `the inventory of endpoints could not be read, the report goes without it: ${errorText(err)}`);
      return undefined;
    }
  }

  /**
   * Phase 2: names the beans this bootstrap tracked unnamed, by the analysis's read of the container (the report's
   * names), or by the pre-read's when there is none (the read or the bootstrap failed). Before anything else of
   * the analysis reads the tracker.
   */
  private nameTracked(
    container: NestContainer,
    state: ContainerState,
    snapshot: ContainerReader.ContainerSnapshot | undefined,
  ): void {
    const tracker = this.detector.tracker;
    if (!state.namesAfterReady || tracker === undefined) return;
    state.namesAfterReady = false;
    tracker.nameOnDemand(container, undefined);
    state.moduleOwners.clear();
    if (!tracker.hasUnnamed(container)) return;
    // Without the analysis's read (the bootstrap or the read failed), the pre-read gives the same names.
    if (snapshot === undefined) {
      this.safe(() => this.nameByPreRead(container), 'naming the tracked beans');
      return;
    }
    const graph = snapshot.graph;
    const identities = new Map<NestInstanceWrapper, BeanEntry>();
    for (const [id, wrapper] of snapshot.wrappers) {
      const bean = graph.bean(id);
      identities.set(wrapper, { name: bean.name, framework: bean.framework });
    }
    this.nameFrom(container, identities);
  }

  /**
   * Names the container's unnamed beans by the read that named them before the first instance (the same names as
   * the analysis's, for a fraction of its cost), when a reader of the tracker comes before the analysis.
   */
  private nameByPreRead(container: NestContainer): void {
    const origins = this.detector.origins;
    if (!frameworkBeans().frameworkOriginsKnown(container, origins)) origins.scanRequireCache();
    this.nameFrom(container, reader().readBeanNames(container, origins));
  }

  /**
   * Names the container's unnamed beans from a read of it: each by its wrapper, or (NestJS 10 swaps a wrapper for a
   * copy as it creates the prototypes) by its module and token as the read lists it, else by its token.
   */
  private nameFrom(container: NestContainer, identities: ReadonlyMap<NestInstanceWrapper, BeanEntry>): void {
    let byToken: Map<unknown, Map<unknown, BeanEntry>> | undefined;
    const found = (wrapper: NestInstanceWrapper): BeanEntry | undefined => {
      const identity = identities.get(wrapper);
      if (identity !== undefined) return identity;
      if (byToken === undefined) {
        byToken = new Map();
        for (const [w, entry] of identities) {
          let tokens = byToken.get(w.host);
          if (tokens === undefined) byToken.set(w.host, (tokens = new Map()));
          if (!tokens.has(w.token)) tokens.set(w.token, entry);
        }
      }
      return byToken.get(wrapper.host)?.get(wrapper.token);
    };
    this.detector.tracker?.nameTracked((key) => {
      const wrapper = key as NestInstanceWrapper;
      return found(wrapper) ?? this.tokenIdentity(wrapper);
    }, container);
  }

  /**
   * Whether a library registered `wrapper`, when its module's origin is known already (modules record where they
   * were decorated): a framework bean is then never wrapped. Undefined otherwise: wrapped, and unwrapped again if
   * its name after ready says so.
   */
  private frameworkIfKnown(state: ContainerState, wrapper: NestInstanceWrapper): boolean | undefined {
    const host = wrapper.host;
    if (host === undefined || host === null) return undefined;
    let library = state.moduleOwners.get(host);
    if (library === undefined) {
      const origin = host.name === 'InternalCoreModule' ? 'library' : this.detector.origins.originOf(host.metatype);
      library = origin === 'unknown' ? null : origin === 'library';
      state.moduleOwners.set(host, library);
    }
    if (library === null) return undefined;
    // An application module's bean is the application's, but for the providers Nest adds to every module.
    return library || frameworkBeans().isCoreProvider(wrapper.token, this.detector.origins);
  }

  /** A bean by its token, as the reports name one the container read did not (see `beanOf`). */
  private tokenIdentity(wrapper: NestInstanceWrapper): BeanEntry {
    const token = nestTokenName(wrapper.token ?? wrapper.name);
    return {
      name: wrapper.host?.name ? `${wrapper.host.name}/${token}` : token,
      framework: frameworkBeans().isFrameworkWrapper(wrapper, this.detector.origins),
    };
  }

  /** Each wrapper under the report's bean name and module. */
  private reportNames(
    snapshot: ContainerReader.ContainerSnapshot,
  ): Map<NestInstanceWrapper, { name: string; module?: string }> {
    const nameOf = new Map<NestInstanceWrapper, { name: string; module?: string }>();
    for (const [id, wrapper] of snapshot.wrappers) {
      const bean = snapshot.graph.bean(id);
      nameOf.set(wrapper, { name: bean.name, ...(bean.module !== undefined ? { module: bean.module } : {}) });
    }
    return nameOf;
  }

  /** The application's beans by instance, and those whose value is a primitive by token: what lookups return. */
  private applicationInstances(snapshot: ContainerReader.ContainerSnapshot): ApplicationBeans {
    const byInstance = new Map<unknown, string>();
    const byValueToken = new Map<unknown, string[]>();
    for (const [id, facts] of snapshot.facts) {
      const bean = snapshot.graph.bean(id);
      if (bean.framework) continue;
      const instance = facts.instance;
      // An alias's instance is its target's: a lookup of the target is the target's, one by the alias's token
      // the alias's (its token is what says which of the two was resolved).
      if (facts.alias === true) {
        byValueToken.set(facts.token, [...(byValueToken.get(facts.token) ?? []), bean.name]);
      } else if (instance !== null && (typeof instance === 'object' || typeof instance === 'function')) {
        byInstance.set(instance, bean.name);
      } else if (bean.kind === 'value') {
        const names = byValueToken.get(facts.token);
        if (names === undefined) byValueToken.set(facts.token, [bean.name]);
        else names.push(bean.name);
      }
    }
    return { byInstance, byValueToken };
  }

  /**
   * A wrapper the pre-read did not name (Phase 2 off, or a lazily loaded module) goes by its token; whether it
   * is a framework bean matters only to the tracker, so it is worked out only when there is one.
   */
  private beanOf(state: ContainerState, wrapper: NestInstanceWrapper): BeanEntry {
    const known = this.namesOf(state, wrapper).get(wrapper.host)?.get(wrapper.token);
    if (known !== undefined) return known;
    if (this.detector.tracker !== undefined) return this.remember(state, wrapper, this.tokenIdentity(wrapper));
    return this.remember(state, wrapper, { name: nestTokenName(wrapper.token ?? wrapper.name), framework: false });
  }

  /** Where a wrapper's name is kept: its module's injectables (enhancers) apart from everything else. */
  private namesOf(state: ContainerState, wrapper: NestInstanceWrapper): Map<unknown, Map<unknown, BeanEntry>> {
    return wrapper.host?.injectables?.get(wrapper.token) === wrapper ? state.enhancers : state.beans;
  }

  private remember(state: ContainerState, wrapper: NestInstanceWrapper, bean: BeanEntry): BeanEntry {
    const names = this.namesOf(state, wrapper);
    let byToken = names.get(wrapper.host);
    if (!byToken) names.set(wrapper.host, (byToken = new Map()));
    byToken.set(wrapper.token, bean);
    return bean;
  }

  /** `fn`'s value, or undefined (logged at debug) when it throws: nothing here may fail the host. */
  private safe<T>(fn: () => T, what = 'observer callback'): T | undefined {
    try {
      return fn();
    } catch (err) {
      safeLog('debug', `${what} failed: ${errorText(err)}`);
      return undefined;
    }
  }
}
