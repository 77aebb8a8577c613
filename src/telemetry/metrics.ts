import type {
  Attributes,
  BatchObservableCallback,
  BatchObservableResult,
  Histogram,
  Meter,
  Observable,
} from '@opentelemetry/api';
import type { DiagReport } from '../ghost/reports/diag-report';
import type { GhostReport } from '../ghost/tracking/types';
import type { SketchRegistryView } from '../sketch/types';
import type { LedgerAnswer, MemberCounts } from '../ghost/ledger/answer';
import type { LedgerWriterStatus } from '../ghost/ledger/writer';
import { safeLog } from '../shared/logger';
import { beanIndex } from './bean-index';
import { ATTRIBUTES, METRICS } from './names';

/** Where the metrics read their values, at collection time only. */
export interface MetricSources {
  /** The latest start-up report (Phase 1), once a container has started. */
  report(): DiagReport | undefined;
  /** The tracker's live snapshot, or undefined when Phase 2 is off. */
  ghosts(): GhostReport | undefined;
  /** The sketch registry, when sketches are in use. */
  sketches(): SketchRegistryView | undefined;
  /** The ghost ledger, when one is configured: this process's writer and the fleet's last answer read. */
  ledger?(): { readonly status: LedgerWriterStatus; readonly answer?: LedgerAnswer } | undefined;
  /** Method depth: methods and endpoints per verdict (the ledger's answer, else this run's). */
  members?(): MemberCounts | undefined;
}

interface Instruments {
  readonly candidates: Observable;
  readonly tracked: Observable;
  readonly touched: Observable;
  readonly untouched: Observable;
  readonly untrackable: Observable;
  readonly frameworkSkipped: Observable;
  readonly beanTouched: Observable;
  readonly sketchMemory: Observable;
  readonly sketchHits: Observable;
  readonly sketchBreaches: Observable;
  readonly sketchFleetMode: Observable;
  readonly sketchFleetNodes: Observable;
  readonly sketchSyncFailures: Observable;
  readonly fleetBeans: Observable;
  readonly fleetLive: Observable;
  readonly fleetFailures: Observable;
  readonly fleetLastWrite: Observable;
  readonly members: Observable;
}

type Spec = (typeof METRICS)[keyof typeof METRICS];

function options(spec: Spec): { unit: string; description: string } {
  return { unit: spec.unit, description: spec.description };
}

/**
 * The ghost detector's and the sketches' metrics. Every instrument is asynchronous (observable) and one batch
 * callback reads the detector when the SDK collects: nothing here runs on an application call, which is what
 * lets Phase 2 promise that a call after the first touch costs the same as an untracked one.
 */
export class DiagMetrics {
  private registered:
    { meter: Meter; callback: BatchObservableCallback; observables: Observable[]; stopSyncs?: () => void } | undefined;

  constructor(private readonly sources: MetricSources) {}

  /**
   * (Re)creates every instrument on `meter`. A previous meter's callback is removed first, so a changed
   * MeterProvider does not leave a second reader of the same state behind.
   */
  install(meter: Meter): void {
    this.uninstall();
    try {
      const instruments: Instruments = {
        candidates: meter.createObservableGauge(METRICS.ghostCandidates.name, options(METRICS.ghostCandidates)),
        tracked: meter.createObservableGauge(METRICS.ghostTracked.name, options(METRICS.ghostTracked)),
        touched: meter.createObservableGauge(METRICS.ghostTouched.name, options(METRICS.ghostTouched)),
        untouched: meter.createObservableGauge(METRICS.ghostUntouched.name, options(METRICS.ghostUntouched)),
        untrackable: meter.createObservableGauge(METRICS.ghostUntrackable.name, options(METRICS.ghostUntrackable)),
        frameworkSkipped: meter.createObservableGauge(
          METRICS.ghostFrameworkSkipped.name,
          options(METRICS.ghostFrameworkSkipped),
        ),
        beanTouched: meter.createObservableGauge(METRICS.beanTouched.name, options(METRICS.beanTouched)),
        sketchMemory: meter.createObservableGauge(METRICS.sketchMemory.name, options(METRICS.sketchMemory)),
        sketchHits: meter.createObservableCounter(METRICS.sketchHits.name, options(METRICS.sketchHits)),
        sketchBreaches: meter.createObservableCounter(METRICS.sketchBreaches.name, options(METRICS.sketchBreaches)),
        sketchFleetMode: meter.createObservableGauge(METRICS.sketchFleetMode.name, options(METRICS.sketchFleetMode)),
        sketchFleetNodes: meter.createObservableGauge(METRICS.sketchFleetNodes.name, options(METRICS.sketchFleetNodes)),
        sketchSyncFailures: meter.createObservableCounter(
          METRICS.sketchSyncFailures.name,
          options(METRICS.sketchSyncFailures),
        ),
        fleetBeans: meter.createObservableGauge(METRICS.ghostFleetBeans.name, options(METRICS.ghostFleetBeans)),
        fleetLive: meter.createObservableGauge(
          METRICS.ghostFleetLiveProcesses.name,
          options(METRICS.ghostFleetLiveProcesses),
        ),
        fleetFailures: meter.createObservableCounter(
          METRICS.ghostFleetWriteFailures.name,
          options(METRICS.ghostFleetWriteFailures),
        ),
        fleetLastWrite: meter.createObservableGauge(
          METRICS.ghostFleetLastWriteAge.name,
          options(METRICS.ghostFleetLastWriteAge),
        ),
        members: meter.createObservableGauge(METRICS.ghostMembers.name, options(METRICS.ghostMembers)),
      };
      const callback: BatchObservableCallback = (result) => this.observe(result, instruments);
      const observables = Object.values(instruments);
      meter.addBatchObservableCallback(callback, observables);
      this.registered = { meter, callback, observables, stopSyncs: this.recordSyncs(meter) };
    } catch (err) {
      safeLog('warn', `diag metrics not registered: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  /** Stops reporting on the current meter. */
  uninstall(): void {
    const registered = this.registered;
    this.registered = undefined;
    if (!registered) return;
    registered.stopSyncs?.();
    try {
      registered.meter.removeBatchObservableCallback(registered.callback, registered.observables);
    } catch (err) {
      safeLog('debug', `diag metrics callback not removed: ${String(err)}`);
    }
  }

  // Each part is guarded on its own: a broken sketch view must not hide the ghost counts, and nothing may
  // throw into the SDK's collection.
  private observe(result: BatchObservableResult, m: Instruments): void {
    this.guard('ghost', () => this.observeGhosts(result, m));
    this.guard('sketch', () => this.observeSketches(result, m));
    this.guard('ledger', () => this.observeLedger(result, m));
    this.guard('members', () => this.observeMembers(result, m));
  }

  private observeMembers(result: BatchObservableResult, m: Instruments): void {
    const counts = this.sources.members?.();
    if (!counts) return;
    for (const [kind, byVerdict] of [
      ['method', counts.methods],
      ['endpoint', counts.endpoints],
    ] as const) {
      for (const [verdict, n] of Object.entries(byVerdict)) {
        result.observe(m.members, n, { [ATTRIBUTES.ghostMemberKind]: kind, [ATTRIBUTES.ghostVerdict]: verdict });
      }
    }
  }

  private observeLedger(result: BatchObservableResult, m: Instruments): void {
    const ledger = this.sources.ledger?.();
    if (!ledger) return;
    result.observe(m.fleetFailures, ledger.status.failures);
    if (ledger.status.lastWriteAt !== undefined) {
      result.observe(m.fleetLastWrite, Math.max(0, (Date.now() - ledger.status.lastWriteAt) / 1000));
    }
    const answer = ledger.answer;
    if (!answer) return;
    result.observe(m.fleetLive, answer.provenance.liveProcesses);
    for (const [verdict, n] of Object.entries(answer.counts)) {
      result.observe(m.fleetBeans, n, { [ATTRIBUTES.ghostVerdict]: verdict });
    }
  }

  private observeGhosts(result: BatchObservableResult, m: Instruments): void {
    const report = this.sources.report();
    if (report) result.observe(m.candidates, report.ghostCandidates.count);
    const ghosts = this.sources.ghosts();
    if (!ghosts) return;
    result.observe(m.tracked, ghosts.trackedCount);
    result.observe(m.touched, ghosts.touchedCount);
    result.observe(m.untouched, ghosts.untouchedCount);
    result.observe(m.untrackable, ghosts.untrackableCount);
    result.observe(m.frameworkSkipped, ghosts.frameworkSkipped);
    // Per bean only once the start-up report names its module and candidate flag: a series first exported without
    // them stays beside the named one in a cumulative export (OpenTelemetry JS keeps every attribute set an
    // observable reported), so Prometheus held a `0` for each bean touched since, one a dashboard reads as unused
    // (a full run's Prometheus test caught it, the series told apart only by their labels).
    if (report === undefined) return;
    const index = beanIndex(report);
    const perBean = (name: string, value: 0 | 1): void => {
      const facts = index.get(name);
      const attributes: Attributes = {
        [ATTRIBUTES.beanName]: name,
        [ATTRIBUTES.beanGhostCandidate]: facts?.candidate ?? false,
      };
      if (facts?.module !== undefined) attributes[ATTRIBUTES.beanModule] = facts.module;
      result.observe(m.beanTouched, value, attributes);
    };
    for (const name of ghosts.touched) perBean(name, 1);
    for (const name of ghosts.untouched) perBean(name, 0);
  }

  private observeSketches(result: BatchObservableResult, m: Instruments): void {
    const view = this.sources.sketches();
    if (!view) return;
    for (const info of view.list()) {
      const attributes: Attributes = { [ATTRIBUTES.sketchId]: info.id };
      result.observe(m.sketchMemory, info.memoryBytes, attributes);
      const stats = view.stats?.(info.id);
      if (stats) {
        result.observe(m.sketchHits, stats.hits, attributes);
        result.observe(m.sketchBreaches, stats.breaches, attributes);
      }
      const fleet = view.placement?.(info.id)?.fleet;
      if (fleet) {
        result.observe(m.sketchFleetMode, fleet.mode === 'fleet' ? 1 : 0, attributes);
        result.observe(m.sketchFleetNodes, fleet.nodes, attributes);
        result.observe(m.sketchSyncFailures, fleet.syncFailures, attributes);
      }
    }
  }

  /**
   * The one synchronous instrument: a histogram of sync rounds, fed by the fleet store's background loop
   * (never by a hit). Returns the unsubscribe, or undefined when no registry with fleet sketches is in use.
   */
  private recordSyncs(meter: Meter): (() => void) | undefined {
    const view = this.sources.sketches();
    if (!view?.onSync) return undefined;
    const histogram: Histogram = meter.createHistogram(METRICS.sketchSyncDuration.name, {
      ...options(METRICS.sketchSyncDuration),
      advice: { explicitBucketBoundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1] },
    });
    return view.onSync((event) => {
      histogram.record(event.durationMs / 1000, {
        [ATTRIBUTES.sketchId]: event.id,
        [ATTRIBUTES.sketchSyncOutcome]: event.ok ? 'ok' : 'failed',
      });
    });
  }

  private guard(part: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      safeLog('debug', `diag ${part} metrics not collected: ${(err as Error)?.message ?? String(err)}`);
    }
  }
}
