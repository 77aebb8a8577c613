import type { Meter, Tracer } from '@opentelemetry/api';
import type { GhostDetector } from '../ghost/detector';
import type { BeanObserver } from '../ghost/reports/startup-timeline';
import type { SketchRegistryView } from '../sketch/types';
import { DiagMetrics } from './metrics';
import { shutdownSpans, StartupSpans, startupSpans } from './spans';
import { safeLog } from '../shared/logger';

export { ATTRIBUTES, EVENTS, METRICS, SPANS } from './names';
export { DiagMetrics, type MetricSources } from './metrics';
export { StartupSpans, performanceToHrTime, type SpanSources } from './spans';

/** Metrics read the fleet's verdicts at most this often per process: a hundred replicas, one read each per 5 min. */
const METRICS_LEDGER_READ_MS = 300_000;

/**
 * OpenTelemetry output of the ghost detector and the sketches, through whatever providers the SDK set:
 * observable metrics read at collection time, a start-up span with a child per bean, and a span event at
 * each bean's first touch. Only `@opentelemetry/api` is used, so an application without an SDK pays nothing.
 */
export class DiagTelemetry {
  private readonly metrics: DiagMetrics;
  private readonly spans: StartupSpans;

  /**
   * @param detector the ghost detector whose state is reported
   * @param tracer the instrumentation's tracer, read at each use (the TracerProvider may be set later)
   * @param sketches the sketch registry, when sketches are in use
   */
  constructor(detector: GhostDetector, tracer: () => Tracer, sketches: () => SketchRegistryView | undefined) {
    const ghosts = () => detector.tracker?.snapshot();
    const report = () => detector.diagReport();
    const ledger = () => {
      const status = detector.ledgerStatus();
      if (!status) return undefined;
      const answer = detector.cachedLedgerAnswer(METRICS_LEDGER_READ_MS);
      return { status, ...(answer ? { answer } : {}) };
    };
    const members = () => detector.memberCounts();
    this.metrics = new DiagMetrics({ report, ghosts, sketches, ledger, members });
    this.spans = new StartupSpans({ tracer, beanSpans: detector.config.telemetry.beanSpans, ghosts, report });
    detector.addListener({
      containerReady: (r) => this.spans.reportReady(r),
      // The tracker calls this once per bean, inside the first call only; later calls never reach telemetry.
      beanTouched: (name) => this.spans.firstTouch(name),
      startupReady: (profile) => spansOf(() => startupSpans(tracer(), profile)),
      shutdownFinished: (profile) => spansOf(() => shutdownSpans(tracer(), profile)),
    });
  }

  /** Called whenever the MeterProvider changes (and at construction): (re)creates every instrument on `meter`. */
  updateMetricInstruments(meter: Meter): void {
    this.metrics.install(meter);
  }

  /** Span hooks for container start-up, handed to the NestJS adapter. */
  beanObserver(): BeanObserver {
    return this.spans.observer();
  }
}

function spansOf(make: () => void): void {
  try {
    make();
  } catch (err) {
    safeLog('debug', `start-up spans not made: ${(err as Error)?.message ?? String(err)}`);
  }
}
