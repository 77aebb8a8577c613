import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type HrTime,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { BeanObserver, TimelineBean } from '../ghost/reports/startup-timeline';
import type { BootProfile, BootStep } from '../ghost/reports/boot-types';
import type { DiagReport } from '../ghost/reports/diag-report';
import type { GhostReport } from '../ghost/tracking/types';
import { safeLog } from '../shared/logger';
import { beanIndex } from './bean-index';
import { ATTRIBUTES, EVENTS, SPANS } from './names';

const NANOS_PER_MS = 1e6;
const NANOS_PER_SECOND = 1e9;

/**
 * A `performance.now()` reading as an absolute HrTime. The origin and the reading are split into whole
 * seconds and nanoseconds separately: adding them as one float of epoch milliseconds would lose the
 * sub-microsecond part that short bean creations consist of.
 */
export function performanceToHrTime(now: number, origin: number = performance.timeOrigin): HrTime {
  const split = (ms: number): [number, number] => {
    const seconds = Math.trunc(ms / 1000);
    return [seconds, Math.round((ms - seconds * 1000) * NANOS_PER_MS)];
  };
  const [os, on] = split(origin);
  const [ns, nn] = split(now);
  let seconds = os + ns;
  let nanos = on + nn;
  if (nanos >= NANOS_PER_SECOND) {
    seconds += 1;
    nanos -= NANOS_PER_SECOND;
  }
  return [seconds, nanos];
}

/** Settings and state readers the spans need. */
export interface SpanSources {
  readonly tracer: () => Tracer;
  /** `diag.telemetry.bean-spans`: one child span per bean instantiation. */
  readonly beanSpans: boolean;
  /** The tracker's live snapshot, or undefined when Phase 2 is off. */
  readonly ghosts: () => GhostReport | undefined;
  /** The latest start-up report, for the module and candidate flag of a first-touch event. */
  readonly report: () => DiagReport | undefined;
}

/**
 * Container start-up as a trace: a `diag.container.startup` span from the start of instance creation to the
 * end of the Phase 1 analysis, with the report's counts as attributes, and (optionally) a child span per bean
 * creation. Also the first-touch event on whatever span is active when a tracked bean is first called.
 */
export class StartupSpans {
  /**
   * Start-up spans still open. The bean spans are made when it ends, from the creations the adapter hands over
   * then, with their recorded times: the same spans, and none of the cost (about 17 µs a span) on the
   * application's boot path.
   */
  private readonly open = new WeakMap<object, Span>();
  // The detector announces the report synchronously just before the adapter's bootstrapFinished for the same
  // container, so one slot is enough to hand it over.
  private pendingReport: DiagReport | undefined;

  constructor(private readonly sources: SpanSources) {}

  /** The hooks the NestJS adapter calls while a container bootstraps. */
  observer(): BeanObserver {
    return {
      bootstrapStarted: (container) => this.started(container),
      bootstrapFinished: (container, error, beans) => this.finished(container, error, beans),
    };
  }

  /** The detector's containerReady: the report whose counts the next finished start-up span carries. */
  reportReady(report: DiagReport): void {
    this.pendingReport = report;
  }

  /**
   * Adds one event to the active span, if any: called once per bean, inside the call that first touched it,
   * so the trace of that request shows it. Never called again for the same bean.
   */
  firstTouch(name: string): void {
    const span = trace.getActiveSpan();
    if (!span || !span.isRecording()) return;
    const facts = beanIndex(this.sources.report()).get(name);
    const attributes: Attributes = { [ATTRIBUTES.beanName]: name };
    if (facts?.module !== undefined) attributes[ATTRIBUTES.beanModule] = facts.module;
    if (facts !== undefined) attributes[ATTRIBUTES.beanGhostCandidate] = facts.candidate;
    span.addEvent(EVENTS.beanFirstTouch, attributes);
  }

  private started(container: object): void {
    // A start-up inside the user's own span (say, a bootstrap wrapped in a span) nests under it.
    const span = this.sources
      .tracer()
      .startSpan(
        SPANS.containerStartup,
        { kind: SpanKind.INTERNAL, startTime: performanceToHrTime(performance.now()) },
        context.active(),
      );
    this.open.set(container, span);
  }

  private beanSpans(beans: readonly TimelineBean[], parent: Span): void {
    const tracer = this.sources.tracer();
    const parentContext = trace.setSpan(context.active(), parent);
    for (const bean of beans) {
      const attributes: Attributes = {
        [ATTRIBUTES.beanName]: bean.name,
        [ATTRIBUTES.beanScope]: bean.scope,
      };
      if (bean.module !== undefined) attributes[ATTRIBUTES.beanModule] = bean.module;
      const child = tracer.startSpan(
        SPANS.beanInstantiation,
        { kind: SpanKind.INTERNAL, startTime: performanceToHrTime(bean.startTime), attributes },
        parentContext,
      );
      child.end(performanceToHrTime(bean.endTime));
    }
  }

  private finished(container: object, error?: unknown, beans?: readonly TimelineBean[]): void {
    const span = this.open.get(container);
    const report = this.pendingReport;
    this.pendingReport = undefined;
    if (!span) return;
    this.open.delete(container);
    try {
      if (this.sources.beanSpans && beans !== undefined) this.beanSpans(beans, span);
    } catch (err) {
      safeLog('debug', `bean spans not made: ${(err as Error)?.message ?? String(err)}`);
    }
    try {
      if (error !== undefined) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      } else if (report) {
        span.setAttributes(reportAttributes(report, this.sources.ghosts()));
      }
    } catch (err) {
      safeLog('debug', `start-up span attributes not set: ${(err as Error)?.message ?? String(err)}`);
    }
    span.end(performanceToHrTime(performance.now()));
  }
}

/** A package or application load shorter than this is left out of the spans (it stays on `{base}/startup`). */
const MIN_LOAD_SPAN_MS = 1;

/** Which steps of the timeline become spans: every phase and hook; loads of a millisecond or more. */
function spanned(step: BootStep): boolean {
  if (step.kind === 'bean') return false; // diag.bean.instantiation under diag.container.startup has them
  if (step.kind === 'package' || step.kind === 'application' || step.name === 'diag.load')
    return step.end - step.start >= MIN_LOAD_SPAN_MS;
  return true;
}

function stepAttributes(step: BootStep): Attributes {
  const a: Attributes = { [ATTRIBUTES.startupSelfMs]: Math.round(step.self * 1000) / 1000 };
  if (step.wait !== undefined) a[ATTRIBUTES.startupWaitMs] = Math.round(step.wait * 1000) / 1000;
  if (step.critical) a[ATTRIBUTES.startupCritical] = true;
  if (step.package !== undefined) a[ATTRIBUTES.packageName] = step.package;
  if (step.files !== undefined) a[ATTRIBUTES.packageFiles] = step.files;
  if (step.kind === 'hook') {
    a[ATTRIBUTES.lifecycleHook] = step.name;
    if (step.bean !== undefined) a[ATTRIBUTES.beanName] = step.bean;
    if (step.module !== undefined) a[ATTRIBUTES.beanModule] = step.module;
  }
  return a;
}

/**
 * The timeline's steps as spans under `root`, with their recorded times: a step whose parent is not a span
 * goes under its nearest ancestor that is.
 */
function stepSpans(tracer: Tracer, steps: readonly BootStep[], root: Span): void {
  const spans = new Map<number, Span>();
  for (const step of steps) {
    if (!spanned(step)) continue;
    let parent: Span = root;
    for (let p = step.parent; p !== undefined; p = steps[p]?.parent) {
      const found = spans.get(p);
      if (found) {
        parent = found;
        break;
      }
    }
    const span = tracer.startSpan(
      step.name,
      {
        kind: SpanKind.INTERNAL,
        startTime: performanceToHrTime(step.start),
        attributes: stepAttributes(step),
      },
      trace.setSpan(context.active(), parent),
    );
    span.end(performanceToHrTime(step.end));
    spans.set(step.id, span);
  }
}

/**
 * The process's start-up as a trace of its own, made once it is ready from the recorded times: a
 * `diag.process.startup` root from process start to ready, one child per step (docs/startup.md).
 */
export function startupSpans(tracer: Tracer, profile: BootProfile): void {
  const root = tracer.startSpan(
    SPANS.processStartup,
    {
      kind: SpanKind.INTERNAL,
      root: true,
      startTime: performanceToHrTime(0),
      attributes: {
        [ATTRIBUTES.startupCoverage]: Math.round(profile.coverage.share * 10000) / 10000,
        [ATTRIBUTES.startupUnattributedMs]: Math.round(profile.coverage.unattributed * 1000) / 1000,
        [ATTRIBUTES.startupDiagMs]: Math.round(profile.diag.total * 1000) / 1000,
        ...(profile.readyCause ? { [ATTRIBUTES.readyCause]: profile.readyCause } : {}),
      },
    },
    context.active(),
  );
  stepSpans(tracer, profile.steps, root);
  root.end(performanceToHrTime(profile.end));
}

/** An application's close as a trace: `diag.process.shutdown` and its phases and hooks. */
export function shutdownSpans(tracer: Tracer, profile: BootProfile): void {
  const shutdown = profile.shutdown;
  if (!shutdown) return;
  const root = tracer.startSpan(
    SPANS.processShutdown,
    { kind: SpanKind.INTERNAL, root: true, startTime: performanceToHrTime(shutdown.start) },
    context.active(),
  );
  stepSpans(tracer, shutdown.steps, root);
  root.end(performanceToHrTime(shutdown.end));
}

function reportAttributes(report: DiagReport, ghosts: GhostReport | undefined): Attributes {
  const attributes: Attributes = {
    [ATTRIBUTES.containerName]: report.container.name,
    [ATTRIBUTES.beanCount]: report.summary.beans,
    [ATTRIBUTES.applicationBeanCount]: report.summary.applicationBeans,
    [ATTRIBUTES.frameworkBeanCount]: report.summary.frameworkBeans,
    [ATTRIBUTES.orphanCount]: report.orphans.length,
    [ATTRIBUTES.candidateCount]: report.ghostCandidates.count,
  };
  if (report.container.version !== undefined) attributes[ATTRIBUTES.containerVersion] = report.container.version;
  if (ghosts) {
    attributes[ATTRIBUTES.trackedCount] = ghosts.trackedCount;
    attributes[ATTRIBUTES.touchedCount] = ghosts.touchedCount;
    attributes[ATTRIBUTES.untouchedCount] = ghosts.untouchedCount;
    attributes[ATTRIBUTES.untrackableCount] = ghosts.untrackableCount;
    attributes[ATTRIBUTES.frameworkSkippedCount] = ghosts.frameworkSkipped;
  }
  return attributes;
}
