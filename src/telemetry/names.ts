/**
 * Every name this package emits to OpenTelemetry, in one place: docs/telemetry.md mirrors this file, and the
 * tests compare the exported data against these constants, so a rename here is a rename everywhere.
 *
 * Conventions (OpenTelemetry semantic conventions): names are lower-case, dot-separated, under `diag.`;
 * multi-word components use `_`; units are UCUM (`By`, `ms`, `1`) or an annotation in braces (`{bean}`,
 * `{call}`) for counts of things. A Prometheus exporter turns `.` into `_` and adds `_total` to counters.
 */

/** Metric names and units. */
export const METRICS = {
  /** Phase 1 ghost candidates in the latest start-up report. */
  ghostCandidates: {
    name: 'diag.ghost.candidates',
    unit: '{bean}',
    description: 'Ghost candidates found by the start-up graph analysis (Phase 1, confidence LOW)',
  },
  /** Beans wrapped by the first-touch tracker (Phase 2). */
  ghostTracked: { name: 'diag.ghost.tracked', unit: '{bean}', description: 'Beans tracked for first touch (Phase 2)' },
  ghostTouched: {
    name: 'diag.ghost.touched',
    unit: '{bean}',
    description: 'Tracked beans with at least one method call so far (Phase 2)',
  },
  ghostUntouched: {
    name: 'diag.ghost.untouched',
    unit: '{bean}',
    description: 'Tracked beans with no method call so far (Phase 2)',
  },
  ghostUntrackable: {
    name: 'diag.ghost.untrackable',
    unit: '{bean}',
    description: 'Beans that could not be tracked, for any reason (Phase 2)',
  },
  ghostFrameworkSkipped: {
    name: 'diag.ghost.framework_skipped',
    unit: '{bean}',
    description: 'Framework and library beans skipped by the tracker, counted only (Phase 2)',
  },
  /** Per tracked bean: 1 once any tracked method was called in this process, else 0. */
  beanTouched: {
    name: 'diag.bean.touched',
    unit: '1',
    description: '1 once a method of the tracked bean was called in this process, 0 until then (Phase 2)',
  },
  /** Per sketch id: native memory held. */
  sketchMemory: {
    name: 'diag.sketch.memory',
    unit: 'By',
    description: 'Native (off-heap) memory held by the sketch, windows included',
  },
  /** Per sketch id: calls counted by the sketch since it was created. */
  sketchHits: {
    name: 'diag.sketch.hits',
    unit: '{call}',
    description: 'Calls counted by the sketch since it was created',
  },
  /** Per sketch id: calls rejected because their key exceeded the threshold. */
  sketchBreaches: {
    name: 'diag.sketch.breaches',
    unit: '{call}',
    description: 'Calls rejected because their key exceeded the threshold',
  },
  /**
   * Ghost ledger (diag.ghost-tracking.ledger.url set): beans of the service per verdict, as the ledger answers
   * for the whole fleet. Every replica reports the same counts: aggregate with max, not sum. Read at most every
   * five minutes per process.
   */
  ghostFleetBeans: {
    name: 'diag.ghost.fleet.beans',
    unit: '{bean}',
    description: 'Beans of the service per verdict (diag.ghost.verdict), from the ghost ledger every replica writes',
  },
  /**
   * Method depth: methods and endpoints per kind (`diag.ghost.member.kind`) and verdict (`diag.ghost.verdict`,
   * or `kept` for those rare on purpose, and for methods `shared`: inherited code another bean ran, counted
   * apart from `never-touched`), from the ghost ledger's answer when there is one, else this run's.
   */
  ghostMembers: {
    name: 'diag.ghost.members',
    unit: '{member}',
    description:
      'Methods and endpoints per kind (diag.ghost.member.kind) and verdict (diag.ghost.verdict, or kept; for methods also shared: inherited code another bean ran), from the ledger when there is one, else this run',
  },
  /** Ghost ledger: processes of the service whose heartbeat is recent, as the ledger answers. */
  ghostFleetLiveProcesses: {
    name: 'diag.ghost.fleet.processes.live',
    unit: '{process}',
    description: 'Processes of the service writing to the ghost ledger now (recent heartbeat)',
  },
  /** Ghost ledger: this process's rounds that Redis did not take (refused, timed out, unreachable). */
  ghostFleetWriteFailures: {
    name: 'diag.ghost.fleet.write.failures',
    unit: '{round}',
    description: 'Rounds of this process that the ghost ledger’s Redis did not take since it started',
  },
  /** Ghost ledger: seconds since this process last wrote (absent before its first write). */
  ghostFleetLastWriteAge: {
    name: 'diag.ghost.fleet.last_write.age',
    unit: 's',
    description: 'Seconds since this process last wrote to the ghost ledger',
  },
  /** Per fleet sketch: 1 while estimates are the fleet's, 0 in local-fallback. */
  sketchFleetMode: {
    name: 'diag.sketch.fleet.mode',
    unit: '1',
    description: '1 while the sketch judges by the fleet’s counts through Redis, 0 in local-fallback',
  },
  /** Per fleet sketch: processes syncing it, as last seen. */
  sketchFleetNodes: {
    name: 'diag.sketch.fleet.nodes',
    unit: '{process}',
    description: 'Processes syncing the sketch through Redis, as last seen',
  },
  /** Per fleet sketch: sync rounds that failed (timeout, error, lost connection). */
  sketchSyncFailures: {
    name: 'diag.sketch.sync.failures',
    unit: '{round}',
    description: 'Sync rounds with Redis that failed since the sketch was created',
  },
  /** Per fleet sketch: duration of each sync round with Redis, answered or not. */
  sketchSyncDuration: {
    name: 'diag.sketch.sync.duration',
    unit: 's',
    description: 'Duration of one sync round with Redis (push of changed cells, read of the fleet’s)',
  },
} as const;

/** Span names. */
export const SPANS = {
  /** From the start of the container's instance creation to the end of the Phase 1 analysis. */
  containerStartup: 'diag.container.startup',
  /** One bean's creation (constructor or factory, awaited); child of the start-up span. */
  beanInstantiation: 'diag.bean.instantiation',
  /**
   * The whole process start, from process start to ready (docs/startup.md): its children are the timeline's
   * steps, named as on `{base}/startup` (`node.bootstrap`, `package.load`, `nest.scan`, `onModuleInit`…).
   */
  processStartup: 'diag.process.startup',
  /** An application's close: its phases and each bean's shutdown hooks as children. */
  processShutdown: 'diag.process.shutdown',
} as const;

/** Span event names. */
export const EVENTS = {
  /** On the span active when a tracked bean is first called: which request first used the bean. */
  beanFirstTouch: 'diag.bean.first_touch',
} as const;

/** Attribute keys, on metrics, spans and events. */
export const ATTRIBUTES = {
  beanName: 'diag.bean.name',
  beanModule: 'diag.bean.module',
  /** Boolean: the bean is a Phase 1 ghost candidate. */
  beanGhostCandidate: 'diag.bean.ghost_candidate',
  /** `singleton`, `request` or `transient`. */
  beanScope: 'diag.bean.scope',
  /** On diag.ghost.fleet.beans: `in-use`, `never-touched`, `insufficient-evidence`, `untrackable`, `retired`. */
  ghostVerdict: 'diag.ghost.verdict',
  /** On diag.ghost.members: `method` or `endpoint`. */
  ghostMemberKind: 'diag.ghost.member.kind',
  sketchId: 'diag.sketch.id',
  /** On sync durations: whether the round was answered. */
  sketchSyncOutcome: 'diag.sketch.sync.outcome',
  containerName: 'diag.container.name',
  containerVersion: 'diag.container.version',
  /** Start-up span: every bean in the container, framework ones included. */
  beanCount: 'diag.container.bean_count',
  applicationBeanCount: 'diag.container.application_bean_count',
  frameworkBeanCount: 'diag.container.framework_bean_count',
  orphanCount: 'diag.ghost.orphan_count',
  candidateCount: 'diag.ghost.candidate_count',
  /** Start-up span, Phase 2 only: the tracker's counts when start-up ended. */
  trackedCount: 'diag.ghost.tracked_count',
  touchedCount: 'diag.ghost.touched_count',
  untouchedCount: 'diag.ghost.untouched_count',
  untrackableCount: 'diag.ghost.untrackable_count',
  frameworkSkippedCount: 'diag.ghost.framework_skipped_count',
  /** Start-up timeline spans: the step's time not covered by its children, in ms. */
  startupSelfMs: 'diag.startup.self_ms',
  /** A hook's or async factory's awaited time, ms. */
  startupWaitMs: 'diag.startup.wait_ms',
  /** Boolean: on the critical path (what its parent waited for last). */
  startupCritical: 'diag.startup.critical',
  /** `package.load` spans: the package, and how many of its files that load read. */
  packageName: 'diag.package.name',
  packageFiles: 'diag.package.files',
  /** Hook spans: `onModuleInit`, `onApplicationBootstrap`, `onModuleDestroy`… */
  lifecycleHook: 'diag.lifecycle.hook',
  /** `diag.process.startup`: what made the process ready (`listen`, `init`, `listening`, `diagReady`). */
  readyCause: 'diag.startup.ready_cause',
  /** `diag.process.startup`: share of process start → ready inside some step (0-1), and what is not, in ms. */
  startupCoverage: 'diag.startup.coverage',
  startupUnattributedMs: 'diag.startup.unattributed_ms',
  /** `diag.process.startup`: the instrumentation's own cost on the start-up, ms. */
  startupDiagMs: 'diag.startup.diag_ms',
} as const;
