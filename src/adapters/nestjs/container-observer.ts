import type { DiagRuntime } from '../../runtime';
import { safeLog } from '../../logger';
import { frameworkOriginsKnown, isFrameworkWrapper, readBeanNames, readContainer, type Instantiation } from './container-reader';
import { tokenName } from './names';
import { PassportStrategies } from './passport';
import { nestEntryPoints } from './entry-points';
import {
  NEST_SCOPE,
  NEST_STATIC_CONTEXT_ID,
  type NestContainer,
  type NestInstanceWrapper,
} from './nest-types';

type AsyncMethod = (this: unknown, ...args: unknown[]) => Promise<unknown>;

/** Bean-level events the telemetry side turns into spans. */
export interface BeanObserver {
  bootstrapStarted?(container: object): void;
  beanInstantiated?(container: object, bean: { name: string; module?: string; scope: string; startTime: number; endTime: number }): void;
  bootstrapFinished?(container: object, error?: unknown): void;
}

interface BeanEntry {
  readonly name: string;
  readonly framework: boolean;
}

/** Per container: what happened while it bootstrapped. */
interface ContainerState {
  bootstrapping: boolean;
  readonly instantiations: WeakMap<object, Instantiation>;
  /**
   * Unique bean names, settled before the first instance exists so that Phase 2 uses the report's names.
   * Keyed by declaring module and token, not by wrapper: NestJS 10 replaces every wrapper with a copy when it
   * creates the prototypes, after this read.
   */
  readonly beans: Map<unknown, Map<unknown, BeanEntry>>;
  startedAt: number;
  /** Static instances created while bootstrapping, in order, for the start-up timeline. */
  readonly created: Array<{ wrapper: NestInstanceWrapper; scope: string; start: number; end: number }>;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Watches one NestJS process's containers through two patched methods:
 * - `InstanceLoader.prototype.createInstancesOfDependencies`: the span of bootstrap; when it resolves every
 *   static instance exists, so Phase 1 runs and `diag-report.json` is written;
 * - `Injector.prototype.instantiateClass`: each bean's creation, timed; with Phase 2 on, the new instance is
 *   tracked right here, before any dependent receives it, and after Nest's own `instanceDecorator` (ours is
 *   applied last).
 * Neither wrapper changes what the original returns or throws.
 */
export class NestContainerObserver {
  private readonly containers = new WeakMap<object, ContainerState>();
  /** Analyses scheduled at the end of a bootstrap and not yet run; see `settle`. */
  private readonly pendingAnalyses = new Set<() => void>();
  /** Which passport strategies no guard uses; fed `@nestjs/passport`'s exports by the module hooks. */
  readonly passport = new PassportStrategies();

  constructor(
    private readonly runtime: DiagRuntime,
    private readonly containerInfo: () => { name: string; version?: string },
    private readonly beans: BeanObserver = {},
  ) {}

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
          observer.safe(() => observer.beans.bootstrapFinished?.(container, err));
          throw err;
        },
      );
    };
  }

  wrapInstantiateClass(original: AsyncMethod): AsyncMethod {
    const observer = this;
    return function instantiateClass(this: unknown, ...args: unknown[]) {
      const wrapper = args[1] as NestInstanceWrapper | undefined;
      const container = wrapper?.host?.container;
      const state = container ? observer.containers.get(container) : undefined;
      if (!state) return original.apply(this, args);
      const start = performance.now();
      const result = original.apply(this, args);
      // Observed beside Nest's own await rather than in front of it: registered first, this reaction runs
      // before Nest's continuation hands the instance to any dependent, and the caller gets Nest's very promise
      // (no extra promise and microtask per bean).
      if (result instanceof Promise) {
        result.then(
          (instance) => observer.instantiated(container!, state, wrapper!, args[3], instance, start),
          () => undefined,
        );
        return result;
      }
      return Promise.resolve(result).then((instance) => {
        observer.instantiated(container!, state, wrapper!, args[3], instance, start);
        return instance;
      });
    };
  }

  private beginBootstrap(container: NestContainer): ContainerState | undefined {
    if (this.containers.has(container)) {
      // A second call for the same container is LazyModuleLoader loading a module after startup: its beans
      // are not eager, and the startup report stands.
      return undefined;
    }
    const state: ContainerState = {
      bootstrapping: true,
      instantiations: new WeakMap(),
      beans: new Map(),
      startedAt: performance.now(),
      created: [],
    };
    this.containers.set(container, state);
    // Unique names before the first instance exists are needed only to track instances under the report's
    // names; without Phase 2 the read is skipped and start-up pays for one read of the container, at the end.
    if (this.runtime.tracker) this.preRead(container, state);
    this.safe(() => this.beans.bootstrapStarted?.(container));
    return state;
  }

  private preRead(container: NestContainer, state: ContainerState): void {
    try {
      const origins = this.runtime.origins;
      // Usually known already (modules record where they were decorated): the scan then waits for the analysis.
      if (!frameworkOriginsKnown(container, origins)) origins.scanRequireCache();
      for (const [wrapper, bean] of readBeanNames(container, origins)) this.remember(state, wrapper, bean);
    } catch (err) {
      safeLog('debug', `could not pre-read the container: ${errorMessage(err)}`);
    }
  }

  private instantiated(
    container: NestContainer,
    state: ContainerState,
    wrapper: NestInstanceWrapper,
    context: unknown,
    instance: unknown,
    start: number,
  ): void {
    try {
      const end = performance.now();
      // Nest 11+ passes a resolution context `{ contextId }`; Nest 10 passes the context id itself.
      const ctx = context as { contextId?: { id?: unknown }; id?: unknown } | undefined;
      const contextId = ctx?.contextId ?? ctx;
      const isStatic = contextId === undefined || (contextId as { id?: unknown }).id === NEST_STATIC_CONTEXT_ID;
      const singleton = wrapper.scope !== NEST_SCOPE.TRANSIENT && wrapper.scope !== NEST_SCOPE.REQUEST;
      const eager = state.bootstrapping && isStatic && singleton;
      if (isStatic && !state.instantiations.has(wrapper)) {
        state.instantiations.set(wrapper, { eager, ms: end - start });
      }
      const { name, framework } = this.beanOf(state, wrapper);
      if (state.bootstrapping && isStatic) {
        const scope = singleton ? 'singleton' : wrapper.scope === NEST_SCOPE.TRANSIENT ? 'transient' : 'request';
        state.created.push({ wrapper, scope, start, end });
        this.safe(() =>
          this.beans.beanInstantiated?.(container, {
            name,
            ...(wrapper.host?.name ? { module: wrapper.host.name } : {}),
            scope,
            startTime: start,
            endTime: end,
          }),
        );
      }
      const tracker = this.runtime.tracker;
      // Per-request and transient instances are reported once, at the end of bootstrap, never per creation.
      if (tracker && isStatic && singleton) {
        tracker.track(name, instance, { scope: 'singleton', framework, owner: container });
      }
    } catch (err) {
      safeLog('debug', `instantiation of a bean not recorded: ${errorMessage(err)}`);
    }
  }

  /**
   * The end of bootstrap: every static instance exists. The analysis (reading the container, Phase 1, the
   * reports, the start-up spans) is work the application does not wait for, so it runs on the next turn of the
   * event loop, after Nest has finished its own start (bench/startup: tens of milliseconds on 1,000 beans).
   * What it reads stays as it was: instances created later are not static and were never part of it.
   */
  private endBootstrap(container: NestContainer, state: ContainerState): void {
    state.bootstrapping = false;
    const endedAt = performance.now();
    const analyse = (): void => {
      if (!this.pendingAnalyses.delete(analyse)) return;
      clearImmediate(timer);
      this.analyse(container, state, endedAt);
    };
    this.pendingAnalyses.add(analyse);
    const timer = setImmediate(analyse);
  }

  /** Runs every scheduled analysis now: an application closed (or a report asked for) before they ran. */
  settle(): void {
    for (const analyse of [...this.pendingAnalyses]) analyse();
  }

  private analyse(container: NestContainer, state: ContainerState, endedAt: number): void {
    try {
      const origins = this.runtime.origins;
      origins.scanRequireCache();
      const snapshot = readContainer(container, state.instantiations, origins);
      const tracker = this.runtime.tracker;
      if (tracker) {
        // What instantiateClass never saw: useValue providers, and non-singletons (reported, not wrapped).
        for (const [id, wrapper] of snapshot.wrappers) {
          const bean = snapshot.graph.bean(id);
          if (bean.scope !== 'singleton') {
            tracker.track(bean.name, undefined, { scope: bean.scope, framework: bean.framework });
          } else if (bean.kind === 'value') {
            tracker.track(bean.name, snapshot.facts.get(id)?.instance, { framework: bean.framework, owner: container });
          } else if (!state.instantiations.has(wrapper) && bean.framework) {
            tracker.track(bean.name, undefined, { framework: true });
          }
        }
      }
      const unusedStrategies = this.safe(() => this.passport.unused(snapshot.facts.values()), 'passport strategy analysis');
      this.runtime.containerReady({
        graph: snapshot.graph,
        classify: (bean) => {
          const facts = snapshot.facts.get(bean.id);
          if (!facts) return [];
          if (unusedStrategies?.has(facts.instance as object) === true) return { candidate: 'unused-passport-strategy' };
          return nestEntryPoints(facts, origins);
        },
        framework: 'nestjs',
        container: this.containerInfo(),
        instantiationMs: endedAt - state.startedAt,
        timeline: this.timeline(state, snapshot, endedAt),
      });
    } catch (err) {
      safeLog('warn', `ghost analysis of the NestJS container failed: ${errorMessage(err)}`);
    }
    this.safe(() => this.beans.bootstrapFinished?.(container));
  }

  /** The bootstrap's creations under the report's bean names, in wall-clock time. */
  private timeline(state: ContainerState, snapshot: ReturnType<typeof readContainer>, endedAt: number) {
    const nameOf = new Map<NestInstanceWrapper, { name: string; module?: string }>();
    for (const [id, wrapper] of snapshot.wrappers) {
      const bean = snapshot.graph.bean(id);
      nameOf.set(wrapper, { name: bean.name, ...(bean.module !== undefined ? { module: bean.module } : {}) });
    }
    const wall = (t: number) => performance.timeOrigin + t;
    const beans = state.created.map((c) => ({
      ...(nameOf.get(c.wrapper) ?? { name: tokenName(c.wrapper.token ?? c.wrapper.name), ...(c.wrapper.host?.name ? { module: c.wrapper.host.name } : {}) }),
      scope: c.scope,
      startTime: wall(c.start),
      endTime: wall(c.end),
    }));
    state.created.length = 0;
    return { startTime: wall(state.startedAt), endTime: wall(endedAt), beans };
  }

  /**
   * A wrapper the pre-read did not name (Phase 2 off, or a lazily loaded module) goes by its token; whether it
   * is a framework bean matters only to the tracker, so it is worked out only when there is one.
   */
  private beanOf(state: ContainerState, wrapper: NestInstanceWrapper): BeanEntry {
    const known = state.beans.get(wrapper.host)?.get(wrapper.token);
    if (known !== undefined) return known;
    const token = tokenName(wrapper.token ?? wrapper.name);
    const tracked = this.runtime.tracker !== undefined;
    return this.remember(state, wrapper, {
      name: tracked && wrapper.host?.name ? `${wrapper.host.name}/${token}` : token,
      framework: tracked && isFrameworkWrapper(wrapper, this.runtime.origins),
    });
  }

  private remember(state: ContainerState, wrapper: NestInstanceWrapper, bean: BeanEntry): BeanEntry {
    let byToken = state.beans.get(wrapper.host);
    if (!byToken) state.beans.set(wrapper.host, (byToken = new Map()));
    byToken.set(wrapper.token, bean);
    return bean;
  }

  /** `fn`'s value, or undefined (logged at debug) when it throws: nothing here may fail the host. */
  private safe<T>(fn: () => T, what = 'observer callback'): T | undefined {
    try {
      return fn();
    } catch (err) {
      safeLog('debug', `${what} failed: ${errorMessage(err)}`);
      return undefined;
    }
  }
}
