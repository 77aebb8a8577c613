import type { BootProfile } from './boot-types';

/**
 * The container's start-up as a timeline: when each bean was created, grouped by module, plus the Phase 1
 * analysis. Served by `GET {base}/startup` in the shape of Spring Boot's startup endpoint, so people who know
 * Spring read it at once; the same data the start-up spans carry.
 */

/** One bean's creation, wall-clock milliseconds since the epoch. */
export interface TimelineBean {
  readonly name: string;
  readonly module?: string;
  readonly scope: string;
  readonly startTime: number;
  readonly endTime: number;
  /** An async factory: when its call returned; from there to `endTime` it waited. */
  readonly returned?: number;
}

/**
 * Bootstrap-level events an adapter reports as they happen, which the telemetry side turns into spans (the
 * adapters feed it, the telemetry reads it: the type lives here, below both).
 */
export interface BeanObserver {
  bootstrapStarted?(container: object): void;
  /**
   * `beans`: what the bootstrap created, in order, under the report's names, `performance.now()` times (handed
   * over at the end, in one go).
   */
  bootstrapFinished?(container: object, error?: unknown, beans?: readonly TimelineBean[]): void;
}

/** What an adapter hands over with a finished container. */
export interface StartupTimeline {
  /** The whole process's start-up, when built (docs/startup.md). */
  readonly boot?: BootProfile;
  /** Start of instance creation, ms since the epoch. */
  readonly startTime: number;
  /** End of instance creation. */
  readonly endTime: number;
  readonly beans: readonly TimelineBean[];
  /** The Phase 1 analysis right after, when it ran. */
  readonly analysis?: { readonly startTime: number; readonly endTime: number };
}

/** One step of Spring Boot's startup timeline. */
export interface SpringStartupEvent {
  startupStep: { name: string; id: number; parentId?: number; tags: Array<{ key: string; value: string }> };
  startTime: string;
  endTime: string;
  duration: string;
}

/** Spring Boot's `{ timeline: { startTime, events } }`. */
export interface SpringStartup {
  timeline: { startTime: string; events: SpringStartupEvent[] };
}

export const STARTUP_STEPS = {
  /** The process, from its start to ready: the root when the whole start-up is known. */
  process: 'application.startup',
  /** The boot profile's step that holds the container's instance creation. */
  instantiatePhase: 'nest.instantiate',
  container: 'nest.container.startup',
  module: 'nest.module.instantiate',
  bean: 'nest.bean.instantiate',
  analysis: 'diag.ghost.analysis',
} as const;

const iso = (ms: number): string => new Date(Math.round(ms)).toISOString();
/** Milliseconds as a tag value, to the microsecond. */
const ms = (value: number): string => String(Math.round(value * 1000) / 1000);
/** ISO-8601 duration, as Java's Duration prints it: `PT0.0042S`. */
const duration = (ms: number): string => `PT${(Math.max(0, ms) / 1000).toFixed(6).replace(/\.?0+$/, '') || '0'}S`;

/**
 * Builds the Spring-shaped timeline: a root step for the container, one step per module spanning its beans
 * (tags `module`, `phase`), one per bean under its module (tags `module`, `bean`, `phase`), and the analysis.
 * Steps are in start order with ids in that order, so a parent always comes before its children.
 */
export function toSpringStartup(t: StartupTimeline): SpringStartup {
  const events: SpringStartupEvent[] = [];
  let nextId = 0;
  const event = (name: string, start: number, end: number, tags: Record<string, string>, parentId?: number): number => {
    const id = nextId++;
    events.push({
      startupStep: {
        name,
        id,
        ...(parentId !== undefined ? { parentId } : {}),
        tags: Object.entries(tags).map(([key, value]) => ({ key, value })),
      },
      startTime: iso(start),
      endTime: iso(end),
      duration: duration(end - start),
    });
    return id;
  };
  // The process's whole start first (docs/startup.md): the container's steps go under its `nest.instantiate`.
  let containerParent: number | undefined;
  /** `nest.instantiate`'s wall-clock bounds: the container's step is read around it, a reading apart. */
  let within: { start: number; end: number } | undefined;
  const boot = t.boot;
  if (boot) {
    const wall = (ms: number): number => boot.timeOrigin + ms;
    const rootId = event(STARTUP_STEPS.process, boot.timeOrigin, wall(boot.end), {
      phase: 'process',
      ...(boot.readyCause ? { ready: boot.readyCause } : {}),
      coverage: String(Math.round(boot.coverage.share * 10000) / 10000),
      unattributedMs: ms(boot.coverage.unattributed),
      diagMs: ms(boot.diag.total),
    });
    const ids = new Map<number, number>();
    // Beans are not emitted here (the container's own steps below carry them): a package an async factory loads
    // (TypeORM's driver, say) goes under the nearest step that is, `nest.instantiate`, as in the spans.
    const emittedAncestor = (parent: number | undefined): number => {
      for (let p = parent; p !== undefined; p = boot.steps[p]?.parent) {
        const id = ids.get(p);
        if (id !== undefined) return id;
      }
      return rootId;
    };
    for (const step of boot.steps) {
      if (step.kind === 'bean') continue;
      const id = event(
        step.name,
        wall(step.start),
        wall(step.end),
        {
          phase: step.kind,
          selfMs: ms(step.self),
          ...(step.wait !== undefined ? { waitMs: ms(step.wait) } : {}),
          ...(step.critical ? { critical: 'true' } : {}),
          ...(step.package !== undefined ? { package: step.package } : {}),
          ...(step.files !== undefined ? { files: String(step.files) } : {}),
          ...(step.bean !== undefined ? { bean: step.bean } : {}),
          ...(step.module !== undefined ? { module: step.module } : {}),
          ...(step.esm ? { esm: 'true' } : {}),
        },
        emittedAncestor(step.parent),
      );
      ids.set(step.id, id);
      // The container's step goes under the `nest.instantiate` it happened in (the process may have had
      // others: a short-lived context for migrations before the application, say).
      if (
        step.name === STARTUP_STEPS.instantiatePhase &&
        wall(step.start) <= t.endTime &&
        wall(step.end) >= t.startTime
      ) {
        containerParent = id;
        within = { start: wall(step.start), end: wall(step.end) };
      }
    }
    containerParent ??= rootId;
  }
  // A lazy container creates nothing at start-up: the process's steps are all there is.
  if (boot && t.beans.length === 0) return { timeline: { startTime: iso(boot.timeOrigin), events } };
  // With the process's timeline, the container's step stays inside `nest.instantiate`, and the analysis, which
  // runs after ready, is a root of its own; without it, the container's step holds the analysis as before.
  // (The container's own readings are taken just outside the phase's, by the wrapper around it: clamped in.)
  const rootStart = within ? Math.max(t.startTime, within.start) : t.startTime;
  const rootEnd = within
    ? Math.min(t.endTime, within.end)
    : boot
      ? t.endTime
      : Math.max(t.endTime, t.analysis?.endTime ?? t.endTime);
  const root = event(STARTUP_STEPS.container, rootStart, rootEnd, { phase: 'bootstrap' }, containerParent);
  const modules = new Map<string, TimelineBean[]>();
  for (const bean of [...t.beans].sort((a, b) => a.startTime - b.startTime)) {
    const key = bean.module ?? '';
    let list = modules.get(key);
    if (!list) modules.set(key, (list = []));
    list.push(bean);
  }
  for (const [module, beans] of modules) {
    const start = Math.min(...beans.map((b) => b.startTime));
    const end = Math.max(...beans.map((b) => b.endTime));
    const moduleTags: Record<string, string> = module ? { module, phase: 'instantiate' } : { phase: 'instantiate' };
    const moduleId = event(STARTUP_STEPS.module, start, end, moduleTags, root);
    for (const bean of beans) {
      event(
        STARTUP_STEPS.bean,
        bean.startTime,
        bean.endTime,
        {
          ...(module ? { module } : {}),
          bean: bean.name,
          scope: bean.scope,
          phase: 'instantiate',
          // An async factory's awaited time (a connection, say): a wait, not work.
          ...(bean.returned !== undefined ? { waitMs: ms(bean.endTime - bean.returned) } : {}),
        },
        moduleId,
      );
    }
  }
  if (t.analysis) {
    event(
      STARTUP_STEPS.analysis,
      t.analysis.startTime,
      t.analysis.endTime,
      { phase: 'analysis' },
      boot ? undefined : root,
    );
  }
  return { timeline: { startTime: iso(boot ? boot.timeOrigin : t.startTime), events } };
}
