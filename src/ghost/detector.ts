import path from 'node:path';
import type { DiagConfig } from '../config/properties';
import { ClassOriginIndex } from './origins/class-origin';
import type { EntryPointClassifier, Phase1Result } from './analysis/candidates';
import type * as CandidatesModule from './analysis/candidates';
import type { BeanGraph } from './analysis/bean-graph';
import type { BeanLookup, DiagReport } from './reports/diag-report';
import type * as ReportsModule from './reports/diag-report';
import type * as GhostReportFileModule from './reports/ghost-report-file';
import { GhostTracker } from './tracking/tracker';
import type { GhostReport, GhostSnapshotSource, GhostTrackingDisabled } from './tracking/types';
import { safeLog } from '../shared/logger';
import { onProcessEnd, type ProcessEnd } from './process-end';
import type * as TrackingDisabledModule from './tracking/tracking-disabled';
import type * as VerdictsModule from './verdicts';
import type { StartupTimeline } from './reports/startup-timeline';
import type { PageData } from './page';
import type * as ReportPageModule from './page';
import type * as AtomicFileModule from '../shared/atomic-file';
import type * as BootReportModule from './reports/boot-report';
import type { BootProfile } from './reports/boot-report';
import { STEP_KIND, stepEnded, stepStarted } from '../shared/boot-clock';

/** `create()`'s value, computed at the first call. */
export function once<T>(create: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= create());
}

/*
 * The analysis and the report writers are required when first needed, at the first container ready or report
 * write: an application pays for compiling them after it has started, not while it starts (about a fifth of
 * what loading the package costs, counted with bench/startup/instructions.js).
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const candidates = once(() => require('./analysis/candidates') as typeof CandidatesModule);
const reports = once(() => require('./reports/diag-report') as typeof ReportsModule);
const atomicFile = once(() => require('../shared/atomic-file') as typeof AtomicFileModule);
const ghostReportFile = once(() => require('./reports/ghost-report-file') as typeof GhostReportFileModule);
const reportPage = once(() => require('./page') as typeof ReportPageModule);
const trackingDisabled = once(() => require('./tracking/tracking-disabled') as typeof TrackingDisabledModule);
const verdictRules = once(() => require('./verdicts') as typeof VerdictsModule);
const bootReport = once(() => require('./reports/boot-report') as typeof BootReportModule);
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * How long after ready the start-up timeline is published (built, written into diag-report.json and the page,
 * made into spans): tens of milliseconds of work on a large application (the page alone is half a megabyte),
 * kept out of what an application still does after `listen()` before it calls itself ready (Vendure publishes
 * an event, then resolves its bootstrap). Unref'd: a process that ends sooner is not kept alive for it, and an
 * application closed before it gets it at its close.
 */
export const STARTUP_PUBLISH_DELAY_MS = 100;

/** What an adapter hands over once its container has created every static instance. */
export interface ContainerReady {
  readonly graph: BeanGraph;
  readonly classify: EntryPointClassifier;
  /** `nestjs`, `inversify`, `tsyringe`, `awilix`: the reports' `framework` field. */
  readonly framework: string;
  readonly container: { name: string; version?: string };
  /** Wall time from the start of instance creation to its end. */
  readonly instantiationMs?: number;
  /** When each bean was created, for `{base}/startup`; the analysis is added by the detector. */
  readonly timeline?: Omit<StartupTimeline, 'analysis'>;
}

/** Listeners the telemetry side registers; every call is guarded. */
export interface RuntimeListener {
  containerReady?(report: DiagReport, phase1: Phase1Result): void;
  beanTouched?(name: string): void;
  /** The process is ready: its start-up timeline is complete (docs/startup.md). */
  startupReady?(profile: BootProfile): void;
  /** An application finished closing: the profile's `shutdown` holds its hooks. */
  shutdownFinished?(profile: BootProfile): void;
}

/**
 * The state of the ghost detector for one instrumentation: configuration, class origins, the Phase 2 tracker
 * (only when enabled) and the reports. Framework adapters feed it; the actuator and telemetry read it.
 */
export class GhostDetector implements GhostSnapshotSource {
  readonly origins = new ClassOriginIndex();
  /** Present only when Phase 2 is enabled: with tracking off, no tracking code runs at all. */
  readonly tracker: GhostTracker | undefined;
  private latest: DiagReport | undefined;
  private timeline: StartupTimeline | undefined;
  private readonly listeners = new Set<RuntimeListener>();
  private flushTimer: NodeJS.Timeout | undefined;
  private stopWritingAtEnd: (() => void) | undefined;
  /** The tracker's version at the last write attempt: see flushGhostReport. */
  private lastFlushedVersion = -1;
  private runIdValue: string | undefined;
  /** Beans looked up by token after start-up, first lookup each, kept until (and after) the report has them. */
  private readonly lookups = new Map<string, BeanLookup>();
  /** When each bean was first touched in this process (Phase 2). */
  private readonly touchedAt = new Map<string, number>();
  private reportRewrite: NodeJS.Immediate | undefined;
  /** The process was ready and its start-up published: a later analysis adds the section itself. */
  private startupPublished = false;
  private startupTimer: NodeJS.Timeout | undefined;

  constructor(readonly config: DiagConfig) {
    this.tracker = config.ghostTracking.enabled
      ? new GhostTracker({ exclude: config.ghostTracking.exclude })
      : undefined;
    this.tracker?.onFirstTouch((name) => {
      // One entry per touched bean, kept for the verdicts' lastTouched (a touched bean has given its wrappers back).
      this.touchedAt.set(name, Date.now());
      for (const l of this.listeners) this.guard(() => l.beanTouched?.(name));
    });
  }

  get diagReportPath(): string {
    return path.join(this.config.report.dir, reports().DIAG_REPORT_FILE);
  }

  get reportPagePath(): string {
    return path.join(this.config.report.dir, reportPage().REPORT_PAGE_FILE);
  }

  /** What the report page shows now: the start-up report, the live ghost snapshot, the timeline. */
  pageData(live: boolean): PageData | undefined {
    const report = this.latest;
    if (!report) return undefined;
    const ghosts = this.tracker?.snapshot();
    const startup = this.startupTimeline();
    return { report, ...(ghosts ? { ghosts } : {}), ...(startup ? { startup } : {}), live };
  }

  /** Rewrites `diag-report.html`; a failure is a warning. */
  writeReportPage(): void {
    const step = stepStarted(STEP_KIND.diag, 'diag.report_page');
    try {
      const data = this.pageData(false);
      if (!data) return;
      const error = reportPage().writeReportPage(this.reportPagePath, data);
      if (error) safeLog('warn', `could not write ${this.reportPagePath}: ${error.message}`);
    } finally {
      stepEnded(step);
    }
  }

  get ghostReportPath(): string {
    return path.join(this.config.report.dir, reports().GHOST_REPORT_FILE);
  }

  /**
   * Starts the periodic ghost report rewrite and the last write at the end of the process, whichever way it
   * ends (Phase 2 only). That write is skipped when a container close already wrote what there is.
   */
  start(): void {
    if (!this.tracker) return;
    const every = this.config.report.flushIntervalMs;
    if (every > 0 && !this.flushTimer) {
      this.flushTimer = setInterval(() => this.flushGhostReport('interval', true), every);
      this.flushTimer.unref();
    }
    this.stopWritingAtEnd ??= onProcessEnd((end) => {
      this.writePendingReport();
      this.flushGhostReport(end, true);
    });
  }

  stop(): void {
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = undefined;
    this.stopWritingAtEnd?.();
    this.stopWritingAtEnd = undefined;
  }

  addListener(listener: RuntimeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Phase 1: analyses the finished container and writes `diag-report.json`. Never throws. */
  containerReady(ready: ContainerReady): DiagReport | undefined {
    try {
      const t0 = performance.now();
      const analysisStart = Date.now();
      const phase1 = candidates().findGhostCandidates(ready.graph, ready.classify);
      const built = reports().buildDiagReport({
        graph: ready.graph,
        phase1,
        framework: ready.framework,
        container: ready.container,
        ...(ready.instantiationMs !== undefined ? { instantiationMs: ready.instantiationMs } : {}),
        analysisMs: performance.now() - t0,
      });
      // Lookups made while the analysis waited for its turn (an onApplicationBootstrap hook's moduleRef.get).
      const report = this.lookups.size > 0 ? reports().excludeLookedUp(built, this.lookups) : built;
      // Those lookups were this container's; a later container's beans must not leave its list by their names.
      this.lookups.clear();
      this.latest = report;
      // A process already ready (an analysis that waited for its turn past listen) gets its section at once.
      if (this.startupPublished) this.addStartupSection();
      this.tracker?.setFramework(ready.framework);
      if (ready.timeline) {
        this.timeline = {
          ...ready.timeline,
          analysis: { startTime: analysisStart, endTime: analysisStart + report.summary.analysisMs },
        };
      }
      try {
        atomicFile().writeJsonAtomic(this.diagReportPath, this.latest);
        safeLog(
          'info',
          `ghost candidates: ${report.ghostCandidates.count} of ${report.summary.applicationBeans} application beans; report written to ${this.diagReportPath}`,
        );
      } catch (err) {
        safeLog('warn', `could not write ${this.diagReportPath}: ${(err as Error).message}`);
      }
      for (const l of this.listeners) this.guard(() => l.containerReady?.(report, phase1));
      // The page (half a megabyte with its script) can wait until the bootstrap has returned; its writer is
      // loaded now, on the analysis's turn.
      reportPage();
      setImmediate(() => this.writeReportPage()).unref();
      return report;
    } catch (err) {
      safeLog('warn', `ghost analysis failed, no report written: ${(err as Error)?.message ?? String(err)}`);
      return undefined;
    }
  }

  /**
   * An adapter saw the application look a bean up by token after start-up (`app.get`, `moduleRef.get`…): a
   * candidate leaves the live report at once and `diag-report.json` is rewritten on the next turn (off the
   * caller's path). Only the first lookup of each bean is kept; a name that is no candidate changes nothing.
   */
  beanLookedUp(name: string, via: string): void {
    if (this.lookups.has(name)) return;
    this.lookups.set(name, { via, at: new Date().toISOString() });
    const latest = this.latest;
    if (latest === undefined) return; // applied by containerReady
    try {
      const updated = reports().excludeLookedUp(latest, this.lookups);
      if (updated === latest) return;
      this.latest = updated;
      safeLog('info', `ghost candidate ${name} was looked up by token (${via}); it is no longer a candidate`);
      // Not unref'd: one turn, and the rewrite must happen even if the application ends right after its lookup
      // (a standalone context's main.ts with Phase 2 off, where no end-of-process write is installed).
      this.reportRewrite ??= setImmediate(() => {
        this.reportRewrite = undefined;
        this.rewriteDiagReport();
      });
    } catch (err) {
      safeLog('debug', `lookup of ${name} not recorded: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  /** Writes the current `diag-report.json` and page again (after lookups changed it); a failure is a warning. */
  private rewriteDiagReport(): void {
    const report = this.latest;
    if (report === undefined) return;
    try {
      atomicFile().writeJsonAtomic(this.diagReportPath, report);
    } catch (err) {
      safeLog('warn', `could not write ${this.diagReportPath}: ${(err as Error).message}`);
    }
    this.writeReportPage();
  }

  private writeDiagReportOnly(): void {
    try {
      atomicFile().writeJsonAtomic(this.diagReportPath, this.latest);
    } catch (err) {
      safeLog('warn', `could not write ${this.diagReportPath}: ${(err as Error).message}`);
    }
  }

  /** Writes a rewrite that lookups scheduled, now: the application is closing before the next turn. */
  writePendingReport(): void {
    if (this.reportRewrite === undefined) return;
    clearImmediate(this.reportRewrite);
    this.reportRewrite = undefined;
    this.rewriteDiagReport();
  }

  /** Names of the current candidates, for adapters that watch lookups (empty before the analysis). */
  ghostCandidateNames(): readonly string[] {
    return this.latest?.ghostCandidates.beans ?? [];
  }

  /**
   * When each bean of the last started container was created, and the process's whole start-up (built now,
   * docs/startup.md), for the actuator's `{base}/startup` and the page.
   */
  startupTimeline(): StartupTimeline | undefined {
    const timeline = this.timeline;
    if (!timeline) {
      // A lazy container times no creations: its process's start-up alone, once it is ready.
      const boot = this.startupPublished ? this.bootProfile() : undefined;
      if (!boot) return undefined;
      const start = boot.timeOrigin;
      return { startTime: start, endTime: start + boot.end, beans: [], boot };
    }
    const boot = this.bootProfile();
    return boot ? { ...timeline, boot } : timeline;
  }

  /** The process's start-up from process start to ready (or to now, before ready); undefined if it cannot be built. */
  bootProfile(): BootProfile | undefined {
    try {
      return bootReport().currentBootProfile(this.timeline);
    } catch (err) {
      safeLog('debug', `start-up timeline not built: ${(err as Error)?.message ?? String(err)}`);
      return undefined;
    }
  }

  /**
   * The process is ready: a moment later (off the application's path, see STARTUP_PUBLISH_DELAY_MS),
   * `diag-report.json` and the page get the `startup` section and the telemetry its spans.
   */
  startupReady(): void {
    if (this.startupTimer !== undefined || this.startupPublished) return;
    this.startupTimer = setTimeout(() => {
      this.startupTimer = undefined;
      this.publishStartup('startupReady');
    }, STARTUP_PUBLISH_DELAY_MS);
    this.startupTimer.unref();
  }

  /** An application closed: the shutdown's hooks go into the report and the spans now (the process may end next). */
  shutdownFinished(): void {
    if (this.startupTimer !== undefined) {
      clearTimeout(this.startupTimer);
      this.startupTimer = undefined;
      this.publishStartup('startupReady');
    }
    this.publishStartup('shutdownFinished');
  }

  private publishStartup(event: 'startupReady' | 'shutdownFinished'): void {
    if (event === 'startupReady') this.startupPublished = true;
    const profile = this.addStartupSection();
    if (!profile) return;
    if (this.latest !== undefined) {
      // At a close the page was just rewritten with the ghost report, and shows nothing of the shutdown:
      // the report alone gets the close's hooks.
      if (event === 'shutdownFinished') this.writeDiagReportOnly();
      else this.rewriteDiagReport();
    }
    for (const l of this.listeners) this.guard(() => l[event]?.(profile));
  }

  /** The current report with the `startup` section as the profile says now; returns the profile. */
  private addStartupSection(): BootProfile | undefined {
    const profile = this.bootProfile();
    const latest = this.latest;
    if (!profile || latest === undefined) return profile;
    try {
      this.latest = { ...latest, startup: bootReport().startupSection(profile) };
    } catch (err) {
      safeLog('debug', `start-up section not built: ${(err as Error)?.message ?? String(err)}`);
    }
    return profile;
  }

  /** The last startup report, for the actuator's `{base}/diag`. */
  diagReport(): DiagReport | undefined {
    return this.latest;
  }

  ghostSnapshot(): GhostReport | GhostTrackingDisabled {
    return this.tracker ? this.withVerdicts(this.tracker.snapshot()) : trackingDisabled().ghostTrackingDisabled();
  }

  /**
   * `report` with one verdict per application bean of the start-up report (module classes left out: nothing
   * to delete there on its own), judged on this run's evidence: since the process started, its uptime as
   * process-hours. A single run is the ledger of one process: the same verdicts, its evidence.
   */
  private withVerdicts(report: GhostReport): GhostReport {
    const latest = this.latest;
    if (latest === undefined) return report;
    try {
      const touched = new Set(report.touched);
      const tracked = new Set([...report.touched, ...report.untouched]);
      const candidates = new Set(latest.ghostCandidates.beans);
      const now = Date.now();
      const evidence = latest.graph.nodes
        .filter((n) => !n.framework && n.role !== 'module')
        .map((n) => ({
          name: n.name,
          ...(n.module !== undefined ? { module: n.module } : {}),
          ...(n.source !== undefined ? { source: n.source } : {}),
          ghostCandidate: candidates.has(n.name),
          tracked: tracked.has(n.name),
          untrackableReason:
            report.untrackable[n.name] ??
            (n.verdict === 'not-instantiated' ? 'not created at start-up' : 'not tracked'),
          ...(touched.has(n.name) ? { lastTouched: this.touchedAt.get(n.name) ?? now } : {}),
          firstSeen: performance.timeOrigin,
          processHours: process.uptime() / 3600,
          live: true,
        }));
      return { ...report, verdicts: verdictRules().verdicts(evidence, this.config.ledger, now) };
    } catch (err) {
      safeLog('debug', `verdicts not computed: ${(err as Error)?.message ?? String(err)}`);
      return report;
    }
  }

  /**
   * Writes `diag-ghost-report.json` (merged with other processes of the same run). A failure is a warning.
   * `skipUnchanged` does nothing when the snapshot has not changed since the last attempt: the periodic
   * rewrite when no bean was touched, the end of the process after a container close wrote it. A failed
   * attempt counts too: it would most likely fail again, and say so twice.
   */
  flushGhostReport(reason: 'close' | 'interval' | ProcessEnd, skipUnchanged = false): void {
    const tracker = this.tracker;
    if (!tracker) return;
    try {
      const version = tracker.version;
      if (skipUnchanged && version === this.lastFlushedVersion) return;
      this.lastFlushedVersion = version;
      const { writeGhostReport, defaultRunId } = ghostReportFile();
      writeGhostReport(
        this.ghostReportPath,
        tracker.snapshot(),
        (this.runIdValue ??= defaultRunId(this.config.report.runId)),
        new Date(),
        (merged) => this.withVerdicts(merged),
      );
      // The page (half a megabyte) stays off the end of the process, where the write must be quick.
      if (reason === 'close' || reason === 'interval') this.writeReportPage();
      // Said at every end (a close, a signal, the loop emptying, exit), so that an operator sees the report
      // survived the pod's SIGTERM; the periodic rewrite stays quiet.
      safeLog(reason === 'interval' ? 'debug' : 'info', `ghost report written to ${this.ghostReportPath} (${reason})`);
    } catch (err) {
      safeLog('warn', `could not write ${this.ghostReportPath} (${reason}): ${(err as Error)?.message ?? String(err)}`);
    }
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      safeLog('debug', `listener failed: ${String(err)}`);
    }
  }
}
