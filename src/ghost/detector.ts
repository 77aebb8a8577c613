import path from 'node:path';
import type { DiagConfig } from '../config/properties';
import { ClassOriginIndex } from './origins/class-origin';
import type { EntryPointClassifier, Phase1Result } from './analysis/candidates';
import type * as CandidatesModule from './analysis/candidates';
import type { BeanGraph } from './analysis/bean-graph';
import type { BeanLookup, DiagReport, ReportNode } from './reports/diag-report';
import type * as ReportsModule from './reports/diag-report';
import type * as GhostReportFileModule from './reports/ghost-report-file';
import type { GhostTracker } from './tracking/tracker';
import type * as TrackerModule from './tracking/tracker';
import type { GhostReport, GhostSnapshotSource, GhostTrackingDisabled } from './tracking/types';
import type { UnsupportedPackage } from '../patching/versions';
import { safeLog } from '../shared/logger';
import type { ProcessEnd } from './process-end';
import type * as ProcessEndModule from './process-end';
import type * as TrackingDisabledModule from './tracking/tracking-disabled';
import type { StartupTimeline } from './reports/startup-timeline';
import type { PageData } from './page';
import type * as ReportPageModule from './page';
import type * as AtomicFileModule from '../shared/atomic-file';
import type * as LedgerModule from './ledger';
import type * as LedgerAnswerModule from './ledger/answer';
import type * as LedgerInventoryModule from './ledger/inventory';
import type * as LedgerIdentityModule from './ledger/identity';
import type * as KeptModule from './kept';
import type * as MemberSourceModule from './member-source';
import type * as LibraryMethodsModule from './library-methods';
import type * as MemberFindingsModule from './cli/members';
import type * as ContractsModule from './contracts';
import type { MemberCounts, MemberEvidence } from './ledger/answer';
import type { MethodCalls } from './member-verdicts';
import type { EndpointRecord } from './analysis/bean-graph';
import type { LedgerAnswer, LedgerWriter, ServiceIdentity } from './ledger';
import type { LedgerWriterStatus } from './ledger/writer';
import type { EvidenceThresholds } from './verdicts';
import type * as RedisModule from '../shared/redis';
import type * as BootReportModule from './reports/boot-report';
import type { BootProfile } from './reports/boot-report';
import { STEP_KIND, stepEnded, stepStarted } from '../shared/boot-clock';

/**
 * The entry points of a start-up report: its `endpoints` (the inventory the NestJS adapter adds, issue #43), read
 * structurally so that a report without them (another container, an older build) has none.
 */
export function reportEndpoints(report: DiagReport): readonly EndpointRecord[] | undefined {
  const endpoints = (report as { endpoints?: unknown }).endpoints;
  return Array.isArray(endpoints) ? (endpoints as EndpointRecord[]) : undefined;
}

/** `bean\0method` of every endpoint's handler in `report`'s inventory. */
function handlersOf(report: DiagReport): ReadonlySet<string> {
  return new Set((reportEndpoints(report) ?? []).map((e) => `${e.bean}\0${e.method}`));
}

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
const ledger = once(() => require('./ledger') as typeof LedgerModule);
// What the verdicts of this run need, without the Redis writer and reader (required only with a ledger URL).
const verdictParts = once(() => ({
  ...(require('./ledger/answer') as typeof LedgerAnswerModule),
  ...(require('./ledger/inventory') as typeof LedgerInventoryModule),
  ...(require('./ledger/identity') as typeof LedgerIdentityModule),
  ...(require('./kept') as typeof KeptModule),
  ...(require('./member-source') as typeof MemberSourceModule),
  ...(require('./library-methods') as typeof LibraryMethodsModule),
}));
const bootReport = once(() => require('./reports/boot-report') as typeof BootReportModule);
// For the page: which interface declares each never-called method, read from the application's TypeScript where it
// runs (when its sources are there), as the CLI reads it.
const pageContracts = once(() => ({
  ...(require('./cli/members') as typeof MemberFindingsModule),
  ...(require('./contracts') as typeof ContractsModule),
}));
// Phase 2's tracker and the watch of the process's end, loaded only when they are built: a Phase 1 start loads
// neither (40 KB of modules; every module loaded before ready is start-up cost, issue #46).
const tracking = once(() => require('./tracking/tracker') as typeof TrackerModule);
const processEnd = once(() => require('./process-end') as typeof ProcessEndModule);
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
  /**
   * A class the framework knows a library made at run time, which no module exports: NestJS's `mixin()` classes
   * (`AuthGuard('jwt')`, `FileInterceptor('file')`, `PassportStrategy(Strategy)`). Their methods, like those of
   * a class from a library's files, are not the application's code (see `GhostDetector.applicationMethods`).
   */
  readonly libraryClass?: (cls: Function) => boolean;
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

/** What the instrumentation tells the detector about its host. */
export interface DetectorHost {
  /** The OpenTelemetry resource's service name and version, once the SDK has one (read when first needed). */
  readonly resource?: () => ServiceIdentity | undefined;
  /** The containers' packages loaded in a version outside the supported ones (left unpatched), so far. */
  readonly unsupported?: () => readonly UnsupportedPackage[];
}

/** A ledger read with no answer after this long is an error naming the server (the actuator answers 503). */
const LEDGER_READ_TIMEOUT_MS = 5_000;

/** `promise`, or `timeout()`'s error after `ms` (the timer never holds the process). */
function withTimeout<T>(promise: Promise<T>, ms: number, timeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timeout()), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

/** How old the ledger's answer may be for the metrics' member counts (what the metrics' own reads allow). */
const METRICS_LEDGER_MAX_AGE_MS = 5 * 60_000;

/** How long a ledger read is reused: the actuator, the page and the metrics may all ask within one scrape. */
const LEDGER_READ_TTL_MS = 10_000;

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
  /** How many times the page was written (see writeReportPage). */
  private pageWrites = 0;
  /** The process's uptime (s) at that attempt: the report's observed time is kept within a tenth of the truth. */
  private lastFlushedUptime = 0;
  private runIdValue: string | undefined;
  /** Beans looked up by token after start-up, first lookup each, kept until (and after) the report has them. */
  private readonly lookups = new Map<string, BeanLookup>();
  /** When each bean was first touched in this process (Phase 2). */
  private readonly touchedAt = new Map<string, number>();
  private reportRewrite: NodeJS.Immediate | undefined;
  /** The ghost ledger's writer: undefined until the first container is ready, null when there is none. */
  private ledgerWriter: LedgerWriter | null | undefined;
  private ledgerRead: { at: number; answer: Promise<LedgerAnswer>; uses: number } | undefined;
  private lastLedgerAnswer: LedgerAnswer | undefined;
  /** The process was ready and its start-up published: a later analysis adds the section itself. */
  private startupPublished = false;
  private startupTimer: NodeJS.Timeout | undefined;
  /** This run's member counts for metrics, and when they were computed. */
  private localMembers: { at: number; counts: MemberCounts | undefined } | undefined;
  /** Where each method is (its `.ts` line through the build's maps), found once per process when first asked. */
  private memberSources: MemberSourceModule.MemberSourceFinder | undefined;
  /** The page's contract reader: each file read once, each method's answer kept (contracts.ts). */
  private contractFinder: ReturnType<typeof ContractsModule.contractReader> | undefined;
  /** The adapters' tests for classes a library made at run time (ContainerReady's `libraryClass`). */
  private readonly libraryClasses: Array<(cls: Function) => boolean> = [];
  /** Which methods a library defined, made at the first question (after ready). */
  private libraryMethods: LibraryMethodsModule.LibraryMethods | undefined;

  constructor(
    readonly config: DiagConfig,
    private readonly host: DetectorHost = {},
  ) {
    this.tracker = config.ghostTracking.enabled
      ? new (tracking().GhostTracker)({
          exclude: config.ghostTracking.exclude,
          depth: config.ghostTracking.depth,
          rearmEveryMs: config.ghostTracking.lastUseResolutionMs,
        })
      : undefined;
    this.tracker?.onFirstTouch((name) => {
      for (const l of this.listeners) this.guard(() => l.beanTouched?.(name));
    });
    this.tracker?.onUse((name, at) => {
      // One entry per touched bean, its last use (to the last-use resolution: the tracker re-arms once per period),
      // kept for the verdicts' lastTouched and the ledger's last use.
      this.touchedAt.set(name, at);
      this.ledgerWriter?.touched(name, at);
    });
    // Method depth: each method's use (its first call, then its first after each re-arm) goes in the same rounds.
    // Every method's use is sent, a library's too: deciding here would put a walk of the prototypes (and at worst a
    // read of the bean's file) in a tracked method's first call. The ledger judges only the methods its inventory
    // lists, which leaves a library's out.
    this.tracker?.onMethodUse((name, method, at) => this.ledgerWriter?.memberTouched(name, method, at));
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
    const judged = this.pageVerdicts(report);
    const verdicts = judged?.answer;
    const startup = this.startupTimeline();
    return {
      report,
      ...(ghosts ? { ghosts } : {}),
      ...(verdicts ? { verdicts } : {}),
      ...(judged?.contractsNote ? { contractsNote: judged.contractsNote } : {}),
      ...(startup ? { startup } : {}),
      live,
    };
  }

  /** The fleet's last answer when a ledger is configured and has answered, else this run's (never waits). */
  private pageVerdicts(report: DiagReport): { answer: LedgerAnswer; contractsNote?: string } | undefined {
    let answer: LedgerAnswer | undefined;
    try {
      answer = this.cachedLedgerAnswer(LEDGER_READ_TTL_MS) ?? this.thisRun(report, Date.now());
    } catch (err) {
      safeLog('debug', `verdicts left off the page: ${(err as Error)?.message ?? String(err)}`);
      return undefined;
    }
    if (answer === undefined) return undefined;
    // A never-called method an interface declares goes with the interface's member, or stays while another bean's
    // implementation of it is called: the page says so as the CLI does (a trial's reader would have broken Mapper).
    try {
      const parts = pageContracts();
      const find = (this.contractFinder ??= parts.contractReader());
      const findings = parts.memberFindingsWithContracts(answer, find);
      // No contract words where none could be read must not read as "none": the page says why (as the CLI does).
      const unread = parts.contractsUnread(findings);
      return {
        answer: parts.withMethodContracts(answer, parts.memberContracts(findings)),
        ...(unread !== undefined ? { contractsNote: unread } : {}),
      };
    } catch (err) {
      safeLog('debug', `contracts left off the page: ${(err as Error)?.message ?? String(err)}`);
      return { answer };
    }
  }

  /** Rewrites `diag-report.html`; a failure is a warning. */
  writeReportPage(): void {
    // The first write is start-up cost, on the timeline; a rewrite is not, and recording it would make every
    // rewrite rebuild the start-up profile it shows (Vendure: 140-350 ms each, under a profiler).
    const step = this.pageWrites++ === 0 ? stepStarted(STEP_KIND.diag, 'diag.report_page') : undefined;
    try {
      const data = this.pageData(false);
      if (!data) return;
      const error = reportPage().writeReportPage(this.reportPagePath, data);
      if (error) safeLog('warn', `could not write ${this.reportPagePath}: ${error.message}`);
    } finally {
      if (step !== undefined) stepEnded(step);
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
    if (!this.tracker && this.config.ledger.url === undefined) return;
    this.stopWritingAtEnd ??= processEnd().onProcessEnd((end) => {
      this.writePendingReport();
      this.flushGhostReport(end, true);
      this.ledgerWriter?.end();
    });
    if (!this.tracker) return;
    const every = this.config.report.flushIntervalMs;
    if (every > 0 && !this.flushTimer) {
      this.flushTimer = setInterval(() => this.flushGhostReport('interval', true), every);
      this.flushTimer.unref();
    }
  }

  stop(): void {
    void this.ledgerWriter?.close();
    this.ledgerWriter = undefined;
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = undefined;
    this.tracker?.stopRearming();
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
      this.addSourceLines(report);
      // Those lookups were this container's; a later container's beans must not leave its list by their names.
      this.lookups.clear();
      this.latest = report;
      // A process already ready (an analysis that waited for its turn past listen) gets its section at once.
      if (this.startupPublished) this.addStartupSection();
      this.tracker?.setFramework(ready.framework);
      if (ready.libraryClass !== undefined && !this.libraryClasses.includes(ready.libraryClass))
        this.libraryClasses.push(ready.libraryClass);
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
          `ghost candidates: ${report.ghostCandidates.count} of ${report.summary.applicationBeans} application beans${sharedCandidates(report)}; report written to ${this.diagReportPath}`,
        );
      } catch (err) {
        safeLog('warn', `could not write ${this.diagReportPath}: ${(err as Error).message}`);
      }
      for (const l of this.listeners) this.guard(() => l.containerReady?.(report, phase1));
      // One push interval after the container is ready: by then the application has finished starting (its
      // hooks, routes, listen), so loading ioredis and deflating the inventory never land on the boot path.
      if (this.config.ledger.url !== undefined) {
        setTimeout(
          () => this.ledgerWriter === undefined && this.feedLedger(this.latest ?? report),
          this.config.ledger.pushIntervalMs,
        ).unref();
      }
      // The page (half a megabyte with its script) can wait until the bootstrap has returned, on turns of its
      // own: its writer loaded on one (60 ms on Vendure under a profiler), the page written on the next, so that
      // a request that reached the process meanwhile is served between them.
      setImmediate(() => {
        reportPage();
        setImmediate(() => this.writeReportPage()).unref();
      }).unref();
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
   * Hands the ledger this container's inventory (the writer is made at the first one: by then the SDK has its
   * resource). Runs one push interval after the analysis, never on the boot path; a failure is a warning.
   */
  private feedLedger(report: DiagReport): void {
    try {
      if (this.ledgerWriter === undefined) {
        this.ledgerWriter =
          ledger().startLedgerWriter(
            this.config.ledger,
            this.tracker !== undefined,
            this.host.resource?.(),
            this.thresholds(),
          ) ?? null;
        for (const [name, at] of this.touchedAt) this.ledgerWriter?.touched(name, at);
        for (const [name, methods] of Object.entries(this.tracker?.snapshot().methods ?? {}))
          for (const [method, at] of Object.entries(methods))
            if (at !== null) this.ledgerWriter?.memberTouched(name, method, Date.parse(at));
      }
      const writer = this.ledgerWriter;
      if (!writer) return;
      const snapshot = this.tracker?.snapshot();
      const lookups = this.memberEvidence(report).lookups ?? {};
      const methods = snapshot?.methods;
      const handlers = handlersOf(report);
      writer.inventoryReady({
        framework: report.framework,
        tracking: this.tracker !== undefined,
        ...ledger().withMembers(
          ledger().applicationBeans(report, snapshot, this.classLines()),
          reportEndpoints(report),
          {
            ...lookups,
            methodsOf: (name) =>
              methods?.[name] !== undefined
                ? Object.keys(methods[name]).filter((m) => this.isApplicationMethod(name, m, handlers))
                : undefined,
          },
        ),
      });
    } catch (err) {
      safeLog('warn', `ghost ledger: inventory not written: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  /** The evidence a verdict needs (never the ledger's URL: it may hold a password). */
  private thresholds(): Required<EvidenceThresholds> {
    return {
      minDays: this.config.ledger.minDays,
      minProcessHours: this.config.ledger.minProcessHours,
      minTrackedShare: this.config.ledger.minTrackedShare,
      lastUseResolutionMs: this.config.ghostTracking.lastUseResolutionMs,
    };
  }

  /** The ledger this process writes to, by address only (never the URL: it may hold a password). */
  private ledgerAddress(): string | undefined {
    if (this.ledgerWriter) return this.ledgerWriter.address;
    const url = this.config.ledger.url;
    if (url === undefined) return undefined;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a URL's parser, only with a ledger
      return (require('../shared/redis') as typeof RedisModule).parseRedisUrl(url).address;
    } catch {
      return undefined;
    }
  }

  /**
   * A ghost candidate's class line, for the `check` gate's SARIF and words: only the candidates (a few files read
   * on the analysis's turn, not one per bean); the other beans' lines come with the verdicts, when asked. And for a
   * bean with no file of its own: an application class its module's file declares without exporting it is found
   * there; otherwise (a library's class the application registers, Nest's `Logger` in a module's providers on a
   * trial; a value; an application class declared elsewhere and not exported) its module's file and the line naming
   * it there.
   */
  private addSourceLines(report: DiagReport): void {
    const candidates = new Set(report.ghostCandidates.beans);
    const lineOf = this.classLines();
    let modules: Map<string, ReportNode> | undefined;
    for (const node of report.graph.nodes) {
      if (node.framework || node.role === 'module') continue;
      if (node.source === undefined) {
        if (node.module === undefined) continue;
        modules ??= new Map(report.graph.nodes.filter((n) => n.role === 'module').map((n) => [n.name, n]));
        const file = node.moduleSource ?? modules.get(node.module)?.source;
        if (file === undefined) continue;
        const find = (this.memberSources ??= verdictParts().memberSourceFinder());
        const ownClass = node.kind === 'class' && node.libraryClass !== true ? node.className : undefined;
        if (ownClass !== undefined && find(file, ownClass) !== undefined) {
          node.source = file;
        } else {
          const line = find(file, node.module, undefined, node.className ?? node.token)?.line;
          node.registeredIn = { file, ...(line !== undefined ? { line } : {}) };
          continue;
        }
      }
      if (!candidates.has(node.name)) continue;
      const line = lineOf(node.source, node.className ?? node.token);
      if (line !== undefined) node.line = line;
    }
  }

  /**
   * Where each bean's class is declared in its file, for the findings code scanning annotates (an untouched bean
   * has no method line to stand for it). Read after ready, each class once (member-source.ts keeps the answers).
   */
  private classLines(): (file: string, className: string) => number | undefined {
    const find = (this.memberSources ??= verdictParts().memberSourceFinder());
    return (file, className) => find(file, className)?.line;
  }

  /** The verdicts on this run's evidence alone, in the ledger's shape. */
  private thisRun(report: DiagReport, now: number): LedgerAnswer {
    const parts = verdictParts();
    const identity = parts.ledgerIdentity(this.config.ledger.service, this.host.resource?.());
    return parts.thisProcessLedger(
      identity.serviceName ?? 'this process',
      parts.applicationBeans(report, this.tracker?.snapshot(), this.classLines()),
      this.touchedAt,
      this.tracker !== undefined,
      this.thresholds(),
      now,
      Math.round(performance.timeOrigin),
      process.uptime() / 3600,
      this.ledgerAddress(),
      this.memberEvidence(report),
    );
  }

  /**
   * What the verdicts below the beans need (method depth): each bean's methods (from `methods`, a merged ghost
   * report's, else the live tracker's), the inventory's endpoints, and where each method is and whether it is kept.
   */
  private memberEvidence(
    report: DiagReport,
    methods?: GhostReport['methods'],
  ): MemberEvidence & { methodsOf?: (name: string) => MethodCalls | undefined } {
    const tracker = this.tracker;
    if (tracker === undefined || tracker.depth !== 'method') return {};
    const parts = verdictParts();
    const patterns = parts.keptPatterns(this.config.ghostTracking.kept);
    const nodes = new Map(report.graph.nodes.map((n) => [n.name, n]));
    const find = (this.memberSources ??= parts.memberSourceFinder());
    const endpoints = reportEndpoints(report);
    const handlers = handlersOf(report);
    const schema = parts.schemaKeeps(endpoints);
    return {
      methodsOf: (name) => {
        const merged = methods?.[name];
        const calls =
          merged === undefined
            ? tracker.methodsOf(name)
            : new Map(Object.entries(merged).map(([k, at]) => [k, at === null ? undefined : Date.parse(at)]));
        return calls === undefined ? undefined : this.applicationMethods(name, calls, handlers);
      },
      ...(endpoints !== undefined ? { endpoints } : {}),
      lookups: {
        source: (bean, method) => {
          const node = nodes.get(bean);
          if (node === undefined) return undefined;
          const proto = tracker.prototypeOf(bean);
          const base = proto === undefined ? undefined : parts.inheritedFrom(proto, method, this.origins);
          if (base !== undefined) return find(base.file ?? node.source, base.className, method);
          return find(node.source, node.className ?? node.token, method);
        },
        kept: (bean, method) =>
          parts.keptReason(tracker.prototypeOf(bean), method) ??
          parts.keptBy(patterns, `${bean}#${method}`) ??
          schema.method(bean, method),
        keptEndpoint: (e) => parts.keptBy(patterns, ...parts.keptNames(e)) ?? schema.endpoint(e),
      },
    };
  }

  /**
   * The methods of `bean` that are the application's code, the ones a team can delete: its class chain's, less
   * those a library defined (ConfigService's private helpers on an application's `providers: [ConfigService]`, the
   * `logIn` that `AuthGuard('jwt')` inherits from @nestjs/passport: 12 of 31 "never-called methods" on a real
   * boilerplate, none the application's to remove). A method the framework serves as an endpoint stays, whoever
   * defined it: a route a library's base controller declares is still the application's API. Still tracked: a
   * call of a library method touches its bean as before.
   */
  private applicationMethods(bean: string, calls: MethodCalls, handlers: ReadonlySet<string>): MethodCalls {
    const kept = new Map([...calls].filter(([method]) => this.isApplicationMethod(bean, method, handlers)));
    return kept.size === calls.size ? calls : kept;
  }

  private isApplicationMethod(bean: string, method: string, handlers: ReadonlySet<string>): boolean {
    if (handlers.has(`${bean}\0${method}`)) return true;
    const proto = this.tracker?.prototypeOf(bean);
    if (proto === undefined) return true;
    const parts = verdictParts();
    this.libraryMethods ??= new parts.LibraryMethods(this.origins, this.libraryClasses);
    return !this.libraryMethods.defines(proto, method, (className) => {
      const source = this.latest?.graph.nodes.find((n) => n.name === bean)?.source;
      const find = (this.memberSources ??= parts.memberSourceFinder());
      return source !== undefined && find(source, className) !== undefined;
    });
  }

  /**
   * Methods and endpoints per verdict (method depth), for metrics: the ledger's last answer when there is one,
   * else this run's, computed at most once a minute (a scrape must not judge every method each time).
   */
  memberCounts(): MemberCounts | undefined {
    const latest = this.latest;
    if (latest === undefined || this.tracker?.depth !== 'method') return undefined;
    const now = Date.now();
    const fleet = this.cachedLedgerAnswer(METRICS_LEDGER_MAX_AGE_MS)?.memberCounts;
    if (fleet !== undefined) return fleet;
    if (this.localMembers === undefined || now - this.localMembers.at > 60_000) {
      this.localMembers = { at: now, counts: this.thisRun(latest, now).memberCounts };
    }
    return this.localMembers.counts;
  }

  /** The ledger writer's state, for metrics; undefined without a ledger. */
  ledgerStatus(): LedgerWriterStatus | undefined {
    return this.ledgerWriter?.status();
  }

  /**
   * The service's verdicts with their provenance: read from the ledger when one is configured (reused for ten
   * seconds), else this process's own run, in the same shape.
   * @throws LedgerReadError when the ledger's Redis does not answer.
   */
  async ledgerAnswer(maxAgeMs = LEDGER_READ_TTL_MS): Promise<LedgerAnswer | undefined> {
    const latest = this.latest;
    if (latest === undefined) return undefined;
    // Asked before the writer's own start (one push interval after ready): the answer is the ledger's all the same.
    if (this.ledgerWriter === undefined && this.config.ledger.url !== undefined) this.feedLedger(latest);
    const writer = this.ledgerWriter;
    const now = Date.now();
    if (!writer) return this.thisRun(latest, now);
    // For a person asking (the actuator, the page), a read older than this process's last write, or than its
    // last use, is stale too: what it wrote or saw must show in its own answer (a read lays the uses its writer
    // has not written yet over the ledger's). The metrics' reads keep their five minutes.
    const person = maxAgeMs <= LEDGER_READ_TTL_MS;
    const wroteSince = person && (writer.status().lastWriteAt ?? 0) > (this.ledgerRead?.at ?? 0);
    const usedSince = person && writer.uses !== this.ledgerRead?.uses;
    if (!this.ledgerRead || now - this.ledgerRead.at > maxAgeMs || wroteSince || usedSince) {
      const answer = withTimeout(
        writer.read(),
        LEDGER_READ_TIMEOUT_MS,
        () =>
          new (ledger().LedgerReadError)(
            `could not read the ghost ledger of ${writer.service}: Redis at ${writer.address} did not answer within ${LEDGER_READ_TIMEOUT_MS / 1000} s; ` +
              "check that it runs and that the ledger's URL (DIAG_GHOST_TRACKING_LEDGER_URL) names it",
          ),
      );
      answer.then(
        (a) => (this.lastLedgerAnswer = a),
        () => undefined,
      );
      this.ledgerRead = { at: now, answer, uses: writer.uses };
    }
    return this.ledgerRead.answer;
  }

  /**
   * The last answer read from the ledger, without waiting (the metrics); a new read starts when it is older than
   * `maxAgeMs`. Undefined without a ledger or before the first read has answered.
   */
  cachedLedgerAnswer(maxAgeMs: number): LedgerAnswer | undefined {
    if (!this.ledgerWriter) return undefined;
    this.ledgerAnswer(maxAgeMs).catch(() => undefined);
    return this.lastLedgerAnswer;
  }

  /**
   * `report` with one verdict per application bean of the start-up report (module classes left out: nothing
   * to delete there on its own), judged on this run's evidence: since the process started, its uptime as
   * process-hours. A single run is the ledger of one process: the same verdicts, its evidence.
   */
  private withVerdicts(snapshot: GhostReport): GhostReport {
    // A container left unpatched tracks nothing: its empty lists say why (a trial on NestJS 9 read "0 tracked").
    const unsupported = this.host.unsupported?.() ?? [];
    const report = unsupported.length > 0 ? { ...snapshot, unsupported: [...unsupported] } : snapshot;
    const latest = this.latest;
    if (latest === undefined) return report;
    try {
      const parts = verdictParts();
      const local = parts.thisProcessLedger(
        '',
        parts.applicationBeans(latest, report, this.classLines()),
        this.touchedAt,
        true,
        this.thresholds(),
        Date.now(),
        performance.timeOrigin,
        process.uptime() / 3600,
        this.ledgerAddress(),
        this.memberEvidence(latest, report.methods),
      );
      // The ghost report keeps the verdict's own fields; the evidence lives in the ledger's answer.
      const verdicts = local.beans.map(({ firstSeen: _f, processHours: _h, className: _c, ...verdict }) => verdict);
      return { ...report, verdicts, ...(local.endpoints !== undefined ? { endpoints: [...local.endpoints] } : {}) };
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
      // The observed time in the verdicts is evidence too: the periodic rewrite also runs when it has grown by a
      // tenth since the last one (a rewrite per interval at first, then rarer), never leaving "31 seconds" for hours.
      const uptime = process.uptime();
      const stale = reason === 'interval' && uptime > this.lastFlushedUptime * 1.1;
      if (skipUnchanged && version === this.lastFlushedVersion && !stale) return;
      this.lastFlushedVersion = version;
      this.lastFlushedUptime = uptime;
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

/**
 * `, 9 of them in shared libraries (libs/shared): …` for the start-up line: a candidate whose class a monorepo's
 * sibling application may use is a registration to remove, not a class to delete (issue #44: 9 of one app's 14).
 */
function sharedCandidates(report: DiagReport): string {
  const candidates = new Set(report.ghostCandidates.beans);
  const libraries = new Set<string>();
  let count = 0;
  for (const node of report.graph.nodes) {
    if (node.sharedLibrary === undefined || !candidates.has(node.name)) continue;
    count += 1;
    libraries.add(node.sharedLibrary);
  }
  if (count === 0) return '';
  return (
    `, ${count} of them in shared ${libraries.size === 1 ? 'library' : 'libraries'} (${[...libraries].sort().join(', ')}): ` +
    'remove the registration here, not the class, if another application uses it'
  );
}
