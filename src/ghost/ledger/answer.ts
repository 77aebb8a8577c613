import type { InventoryBean } from './inventory';
import type { EndpointRecord } from '../analysis/bean-graph';
import {
  endpointVerdicts,
  methodVerdicts,
  sharedCode,
  silenceSaysNothing,
  unservedHandlers,
  withKeptMembers,
  withUnserved,
  type EndpointVerdict,
  type UnservedHandlers,
  type MemberFacts,
  type MemberLookups,
  type MethodCalls,
  type MethodVerdict,
} from '../member-verdicts';
import {
  fullThresholds,
  VERDICT_ORDER,
  verdicts,
  type BeanEvidence,
  type BeanVerdict,
  type EvidenceThresholds,
  type Verdict,
} from '../verdicts';

/** Since when, by how much, and how recently the ledger's evidence was collected: what every answer carries. */
export interface LedgerProvenance {
  /** Where the evidence comes from: the service's ledger in Redis, or this process's own run. */
  readonly source: 'redis' | 'this-process';
  /** The Redis server (address only, never credentials), when the source is a ledger. */
  readonly ledger?: string;
  /** ISO time the service was first observed (or the ledger last reset); null when nothing was written yet. */
  readonly since: string | null;
  /** Processes that have written, live or not (ended ones folded in by the pruner are still counted). */
  readonly processes: number;
  /** Processes whose heartbeat is recent (three heartbeat intervals) and that have not ended. */
  readonly liveProcesses: number;
  /** Process-hours observed with Phase 2 on, all versions together. */
  readonly processHours: number;
  /** Of `processes`, those that ran with Phase 2 on: calls on the others are unseen. */
  readonly trackedProcesses: number;
  /** Process-hours of processes with Phase 2 off, beside the tracked `processHours`. */
  readonly untrackedProcessHours: number;
  /** Code versions the ledger holds (`service.version`, or a digest of the inventory). */
  readonly versions: number;
  /** How long ago the last process wrote; null when none has. */
  readonly lastWriteAgoMs: number | null;
  /** Whether the ledger was found emptied (a Redis restarted without its data) and started over. */
  readonly reset: boolean;
  /** ISO time of that reset, when there was one. */
  readonly resetAt?: string;
  /**
   * Touch records missing from Redis (evicted or deleted) though the ledger counted them: while any are, no bean is
   * judged `never-touched` (a lost record would read as a bean never called).
   */
  readonly lostTouches?: number;
  /** Nothing written for three heartbeat intervals, or no live process: collection has stopped. */
  readonly silent: boolean;
  /** The heartbeat interval the writers use (ms). */
  readonly heartbeatMs?: number;
  /** One line per version, newest first. */
  readonly versionDetails: readonly LedgerVersion[];
}

/** One code version in the ledger. */
export interface LedgerVersion {
  readonly version: string;
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly processHours: number;
  readonly liveProcesses: number;
  readonly beans: number;
}

/** A bean's verdict with the evidence behind it. */
export interface LedgerBean extends BeanVerdict {
  readonly className?: string;
  /** No class file of the application's: `source` and `line` are its registration's (InventoryBean's `registered`). */
  readonly registered?: true;
  /** With `registered`: its class was found nowhere, whose it is not known (InventoryBean's `classFileUnknown`). */
  readonly classFileUnknown?: true;
  /** A ghost candidate something injects, but only these candidates do: it goes with them, never alone. */
  readonly neededOnlyBy?: readonly string[];
  /** ISO time the bean first appeared, in any version. */
  readonly firstSeen: string;
  /** Process-hours of tracking that had it. */
  readonly processHours: number;
  /** Process-hours of processes that had it without tracking it. */
  readonly untrackedProcessHours?: number;
  /** The processes that had it, and how many of them tracked it. */
  readonly processes?: { readonly total: number; readonly tracked: number };
  /** The versions that had it. */
  readonly versions?: readonly string[];
  /** The versions in which it was touched. */
  readonly touchedIn?: readonly string[];
  /** The process that made the latest first touch: when it started, which version it ran. */
  readonly lastTouchedBy?: { readonly processStartedAt: string; readonly version: string };
}

/**
 * What `diag-instrumentation ledger --format json`, `{base}/diag/ledger` and the page answer: one verdict per bean
 * of the service, most likely dead first, and the provenance of the evidence.
 */
export interface LedgerAnswer {
  readonly service: string;
  readonly generatedAt: string;
  /** What the verdicts were judged by, and whose word that is. */
  readonly thresholds: JudgedThresholds;
  readonly provenance: LedgerProvenance;
  /** How many beans have each verdict. */
  readonly counts: Readonly<Record<Verdict, number>>;
  readonly beans: readonly LedgerBean[];
  /**
   * The entry points the framework calls, each with its handler method's verdict, most likely dead first
   * (method depth: this run's inventory, or in the ledger every variant's, each endpoint judged on the variants that had it).
   */
  readonly endpoints?: readonly EndpointVerdict[];
  /**
   * How many methods and endpoints have each verdict (kept ones counted apart, under `kept`; shared code another
   * bean ran under `shared`). Every method is counted, those of beans never touched as a whole and endpoint handlers
   * included: more than the findings the CLI lists, which leave those to their bean and their endpoint.
   */
  readonly memberCounts?: MemberCounts;
}

/**
 * Counts per kind of member: methods and endpoints, by verdict, and apart from them how many are kept on purpose
 * and how many methods were not called on their bean while their shared code was on another (`calledThrough`).
 */
export interface MemberCounts {
  readonly methods: Readonly<Record<Verdict, number>> & { readonly kept: number; readonly shared: number };
  readonly endpoints: Readonly<Record<Verdict, number>> & { readonly kept: number };
}

/** What is known below the beans: each bean's methods, the endpoints, and the lookups that annotate them. */
export interface MemberEvidence {
  readonly endpoints?: readonly EndpointRecord[];
  readonly lookups?: MemberLookups;
  /** The ledger: each endpoint's own evidence (the variants that served it); one run has none apart. */
  readonly endpointFacts?: (endpoint: EndpointRecord) => MemberFacts | undefined;
}

/**
 * The thresholds an answer was judged by. They belong to the service: its processes state theirs in the ledger
 * and a reader judges by the strictest of them (`service`), so that the CLI, the actuator, the page and the
 * metrics agree; a reader's override (`--min-days`, an environment variable) says so (`override`, and the
 * service's own beside it).
 */
export interface JudgedThresholds extends Required<EvidenceThresholds> {
  /**
   * `service`: stated by the service's processes; `this-process`: this process's settings (no ledger);
   * `override`: some given by the reader (`overridden` names them); `defaults`: no process stated any.
   */
  readonly source: 'service' | 'this-process' | 'override' | 'defaults';
  /** With `override`: which were overridden, as the reader gave them (`--min-days`). */
  readonly overridden?: readonly string[];
  /** With `override`: the service's own, for comparison. */
  readonly service?: Required<EvidenceThresholds>;
}

/** Thresholds as a judged answer carries them: only the numbers (a settings group may hold a password). */
export function judgedBy(
  t: EvidenceThresholds,
  source: JudgedThresholds['source'],
  extra: { overridden?: readonly string[]; service?: EvidenceThresholds } = {},
): JudgedThresholds {
  const numbers = fullThresholds(t);
  return {
    ...numbers,
    source,
    ...(extra.overridden && extra.overridden.length > 0 ? { overridden: extra.overridden } : {}),
    ...(extra.service ? { service: fullThresholds(extra.service) } : {}),
  };
}

/** What a reader knows of one bean before judging it. */
export interface LedgerEvidence extends BeanEvidence {
  readonly className?: string;
  readonly registered?: true;
  readonly classFileUnknown?: true;
  readonly touchedIn?: readonly string[];
  readonly lastTouchedBy?: { readonly processStartedAt: number; readonly version: string };
  /** Method depth: its methods, each to its last use (ms) or undefined. */
  readonly methods?: MethodCalls;
  /** The ledger: each method's own evidence (the variants that had it), where the bean's would overstate. */
  readonly methodFacts?: ReadonlyMap<string, MemberFacts>;
  /** Injected only by these beans, none of whose endpoints were served (InventoryBean's). */
  readonly reachedOnlyThrough?: readonly string[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Judges every bean and puts the answer together. */
export function ledgerAnswer(
  service: string,
  evidence: readonly LedgerEvidence[],
  thresholds: JudgedThresholds,
  provenance: LedgerProvenance,
  now: number,
  members: MemberEvidence = {},
): LedgerAnswer {
  const byName = new Map(evidence.map((e) => [e.name, e]));
  const counts = Object.fromEntries(VERDICT_ORDER.map((v) => [v, 0])) as Record<Verdict, number>;
  const lost = provenance.lostTouches ?? 0;
  // Handlers of endpoints that were not served: their silence is no evidence (member-verdicts.ts).
  const unserved = unservedHandlers(members.endpoints ?? []);
  const judgedBeans = verdicts(evidence, thresholds, now).map((judged): LedgerBean => {
    // A lost touch record reads as a bean never called: while any is missing, "never" cannot be said.
    const lostSaid: BeanVerdict =
      lost > 0 && judged.verdict === 'never-touched'
        ? {
            ...judged,
            verdict: 'insufficient-evidence',
            why: `never called as far as the ledger shows, but ${lost} touch ${lost === 1 ? 'record was' : 'records were'} lost from Redis (evicted?): no never-touched verdict until every process has restarted or the ledger is reset`,
          }
        : judged;
    const e = byName.get(lostSaid.name)!;
    const judgedMembers =
      e.methods === undefined ? undefined : judgedMethods(e, thresholds, now, lost, members.lookups ?? {});
    const { methods, ...v } = withUnserved(
      judgedMembers !== undefined ? { ...lostSaid, methods: judgedMembers } : lostSaid,
      unserved.get(lostSaid.name),
    );
    return {
      ...v,
      ...(methods !== undefined ? { methods } : {}),
      ...(e.className !== undefined && e.className !== v.name ? { className: e.className } : {}),
      ...(e.registered ? { registered: true as const } : {}),
      ...(e.classFileUnknown ? { classFileUnknown: true as const } : {}),
      ...(e.ghostCandidate && e.neededOnlyBy !== undefined && e.neededOnlyBy.length > 0
        ? { neededOnlyBy: e.neededOnlyBy }
        : {}),
      firstSeen: iso(e.firstSeen),
      processHours: Math.round(e.processHours * 1000) / 1000,
      ...(e.untrackedProcessHours ? { untrackedProcessHours: Math.round(e.untrackedProcessHours * 1000) / 1000 } : {}),
      ...(e.processes ? { processes: e.processes } : {}),
      ...(e.versions && e.versions.length > 0 ? { versions: e.versions } : {}),
      ...(e.touchedIn && e.touchedIn.length > 0 ? { touchedIn: e.touchedIn } : {}),
      ...(e.lastTouchedBy
        ? {
            lastTouchedBy: {
              processStartedAt: iso(e.lastTouchedBy.processStartedAt),
              version: e.lastTouchedBy.version,
            },
          }
        : {}),
    };
  });
  // An inherited method one bean never called but another did is live code, no finding (member-verdicts.ts).
  const beans = sharedCode(reachedThroughUnserved(judgedBeans, byName, unserved));
  for (const b of beans) counts[b.verdict]++;
  const judgedEndpoints =
    members.endpoints !== undefined
      ? endpointVerdicts(
          members.endpoints,
          beans,
          thresholds,
          members.lookups ?? {},
          members.endpointFacts !== undefined ? { facts: members.endpointFacts, now } : undefined,
        )
      : undefined;
  // A lost record reads as an endpoint never called, as for beans and methods.
  const endpoints =
    lost === 0
      ? judgedEndpoints
      : judgedEndpoints?.map((e) =>
          e.verdict === 'never-touched' ? { ...e, verdict: 'insufficient-evidence' as const } : e,
        );
  const withMembers = beans.some((b) => b.methods !== undefined) || endpoints !== undefined;
  return {
    service,
    generatedAt: iso(now),
    thresholds,
    provenance,
    counts,
    beans: withKeptMembers(beans, endpoints),
    ...(endpoints !== undefined ? { endpoints } : {}),
    ...(withMembers ? { memberCounts: memberCounts(beans, endpoints ?? []) } : {}),
  };
}

/**
 * A bean injected only by beans judged untrackable because none of their endpoints was served (a `Logger` only the
 * command-line controller of an HTTP application injects): no call could reach it through them, so its silence says
 * nothing either; `untrackable`, with its uncalled methods, unless something called it. (Removing that `Logger` alone
 * stops the application starting: the controller still needs it. A trial of domain-driven-hexagon did.)
 */
function reachedThroughUnserved(
  beans: readonly LedgerBean[],
  evidence: ReadonlyMap<string, LedgerEvidence>,
  unserved: ReadonlyMap<string, UnservedHandlers>,
): LedgerBean[] {
  const verdictOf = new Map(beans.map((b) => [b.name, b.verdict]));
  const isUnserved = (name: string) => unserved.get(name)?.whole !== undefined && verdictOf.get(name) === 'untrackable';
  return beans.map((b) => {
    const through = evidence.get(b.name)?.reachedOnlyThrough;
    if (through === undefined || through.length === 0 || !through.every(isUnserved)) return b;
    const reason = unserved.get(through[0]!)!.whole!;
    const them = through.join(', ');
    const why =
      through.length === 1
        ? `only ${them} injects it, and ${them}'s endpoints are not served: ${reason}; no call could reach it here, so its silence says nothing`
        : `only ${them} inject it, and their endpoints are not served: ${reason}; no call could reach it here, so its silence says nothing`;
    return silenceSaysNothing(b, why, () => why);
  });
}

/** A bean's methods judged; a lost touch record forbids `never-touched` for them as for beans. */
function judgedMethods(
  e: LedgerEvidence,
  thresholds: EvidenceThresholds,
  now: number,
  lost: number,
  lookups: MemberLookups,
): MethodVerdict[] {
  const facts = e.methodFacts;
  const judged = methodVerdicts(
    e,
    e.methods!,
    thresholds,
    now,
    lookups,
    facts !== undefined ? (m) => facts.get(m) : undefined,
  );
  return lost === 0
    ? judged
    : judged.map((m) => (m.verdict === 'never-touched' ? { ...m, verdict: 'insufficient-evidence' as const } : m));
}

/** Methods and endpoints per verdict; a kept one counts under `kept` only, never as a finding. */
function memberCounts(beans: readonly LedgerBean[], endpoints: readonly EndpointVerdict[]): MemberCounts {
  const zero = () => ({
    ...(Object.fromEntries(VERDICT_ORDER.map((v) => [v, 0])) as Record<Verdict, number>),
    kept: 0,
  });
  const methods = { ...zero(), shared: 0 };
  for (const bean of beans)
    for (const m of bean.methods ?? []) {
      if (m.kept !== undefined) methods.kept++;
      else if (m.calledThrough !== undefined) methods.shared++;
      else methods[m.verdict]++;
    }
  const eps = zero();
  for (const e of endpoints) {
    if (e.kept !== undefined) eps.kept++;
    else eps[e.verdict]++;
  }
  return { methods, endpoints: eps };
}

/**
 * A single run is the ledger of one process: the same verdicts and the same answer, with the evidence of this
 * run (since the process started; its uptime as process-hours when Phase 2 is on).
 */
export function thisProcessLedger(
  service: string,
  beans: readonly InventoryBean[],
  touchedAt: ReadonlyMap<string, number>,
  tracking: boolean,
  thresholds: EvidenceThresholds,
  now: number,
  startedAt: number,
  uptimeHours: number,
  /** The ledger this process writes to, when it has one (`redis://host:port`): the answer names it. */
  ledger?: string,
  members?: MemberEvidence & { readonly methodsOf?: (name: string) => MethodCalls | undefined },
): LedgerAnswer {
  const hours = tracking ? uptimeHours : 0;
  const evidence: LedgerEvidence[] = beans.map((b) => ({
    name: b.name,
    ...(b.module !== undefined ? { module: b.module } : {}),
    ...(b.source !== undefined ? { source: b.source } : {}),
    ...(b.line !== undefined ? { line: b.line } : {}),
    ...(b.className !== undefined ? { className: b.className } : {}),
    ...(b.registered ? { registered: true as const } : {}),
    ...(b.classFileUnknown ? { classFileUnknown: true as const } : {}),
    ghostCandidate: b.ghostCandidate,
    ...(b.neededOnlyBy !== undefined ? { neededOnlyBy: b.neededOnlyBy } : {}),
    ...(b.reachedOnlyThrough !== undefined ? { reachedOnlyThrough: b.reachedOnlyThrough } : {}),
    tracked: b.tracked === true,
    ...(b.tracked !== true ? { untrackableReason: b.tracked } : {}),
    ...(touchedAt.has(b.name) ? { lastTouched: touchedAt.get(b.name)! } : {}),
    firstSeen: startedAt,
    processHours: b.tracked === true ? hours : 0,
    processes: { total: 1, tracked: tracking ? 1 : 0 },
    live: true,
    ...methodsField(b.tracked === true ? members?.methodsOf?.(b.name) : undefined),
  }));
  return ledgerAnswer(
    service,
    evidence,
    judgedBy(thresholds, 'this-process'),
    {
      source: 'this-process',
      ...(ledger !== undefined ? { ledger } : {}),
      since: iso(startedAt),
      processes: 1,
      liveProcesses: 1,
      processHours: Math.round(hours * 1000) / 1000,
      trackedProcesses: tracking ? 1 : 0,
      untrackedProcessHours: tracking ? 0 : Math.round(uptimeHours * 1000) / 1000,
      versions: 1,
      lastWriteAgoMs: 0,
      reset: false,
      silent: false,
      versionDetails: [],
    },
    now,
    members ?? {},
  );
}

const methodsField = (methods: MethodCalls | undefined): { methods?: MethodCalls } =>
  methods !== undefined ? { methods } : {};
