/**
 * One verdict per bean, from both phases and the evidence behind them (issue #36). The same rules serve one
 * process's run (its evidence: that run) and a ledger where every replica, restart and deploy of a service meet
 * (its evidence: weeks of them): what a team needs before deleting code is not "untouched during this run" but
 * "never called on any instance, in the time this bean has existed, with this much of it observed".
 */

import type { MethodVerdict } from './member-verdicts';

/** The verdict vocabulary; scripts and dashboards rely on these exact strings. */
export type Verdict = 'in-use' | 'dormant' | 'never-touched' | 'insufficient-evidence' | 'untrackable' | 'retired';

/** The order a reader deciding what to delete wants: the verdict first, then what is still open. */
export const VERDICT_ORDER: readonly Verdict[] = [
  'never-touched',
  'dormant',
  'insufficient-evidence',
  'untrackable',
  'in-use',
  'retired',
];

/** How much observation turns "untouched so far" into `never-touched`, and "used once" into `dormant`. */
export interface EvidenceThresholds {
  /**
   * Days since the bean first appeared (`diag.ghost-tracking.ledger.min-days`); also the window a used bean must
   * have been used within to stay `in-use`.
   */
  readonly minDays: number;
  /** Process-hours of tracking that had the bean (`diag.ghost-tracking.ledger.min-process-hours`). */
  readonly minProcessHours: number;
  /**
   * The share of the processes that had the bean which must have tracked it
   * (`diag.ghost-tracking.ledger.min-tracked-share`, default 1): a call on an untracked process is unseen.
   */
  readonly minTrackedShare?: number;
  /** How finely last use is known (`diag.ghost-tracking.last-use-resolution-ms`, default one day). */
  readonly lastUseResolutionMs?: number;
}

/** The settings' defaults, for a reader that has no service's word on them. */
export const DEFAULT_THRESHOLDS: Required<EvidenceThresholds> = {
  minDays: 14,
  minProcessHours: 168,
  minTrackedShare: 1,
  lastUseResolutionMs: 86_400_000,
};

/** Every threshold, the defaults filling what is not given. */
export function fullThresholds(t: EvidenceThresholds): Required<EvidenceThresholds> {
  return {
    minDays: t.minDays,
    minProcessHours: t.minProcessHours,
    minTrackedShare: t.minTrackedShare ?? DEFAULT_THRESHOLDS.minTrackedShare,
    lastUseResolutionMs: t.lastUseResolutionMs ?? DEFAULT_THRESHOLDS.lastUseResolutionMs,
  };
}

/** What is known of one bean. */
export interface BeanEvidence {
  readonly name: string;
  readonly module?: string;
  readonly source?: string;
  /** The line of its class's declaration in `source`, when known. */
  readonly line?: number;
  /** A Phase 1 candidate: nothing injects it and no entry point explains it, or only other candidates inject it. */
  readonly ghostCandidate: boolean;
  /** A candidate something injects, but only these candidates do (Phase 1's `neededOnlyBy`). */
  readonly neededOnlyBy?: readonly string[];
  /** Whether Phase 2 tracked it (in at least one process that had it); otherwise why not. */
  readonly tracked: boolean;
  readonly untrackableReason?: string;
  /**
   * When a tracked method of it was last used, in any process (ms since the epoch), to the last-use resolution:
   * a process re-arms its wrappers once per period, so a use in a period is seen, later ones in it are not.
   */
  readonly lastTouched?: number;
  /** The version of the process that made that use. */
  readonly lastTouchedVersion?: string;
  /** When it first appeared, in any process (ms since the epoch). */
  readonly firstSeen: number;
  /** Hours of tracking, summed over the processes that had it. */
  readonly processHours: number;
  /** Hours of the processes that had it without tracking it (Phase 2 off): their calls are unseen. */
  readonly untrackedProcessHours?: number;
  /** The processes that had it, and how many of them tracked it. Absent: every one did. */
  readonly processes?: { readonly total: number; readonly tracked: number };
  /**
   * `served`: its evidence counts only the processes that served one of its endpoints (others had it, but no call
   * could reach it there: ledger/members.ts `beanFacts`), and its words say so.
   */
  readonly countedWhere?: 'served';
  /** The versions that had it. */
  readonly versions?: readonly string[];
  /** Whether a process of the service's current code has it (a live one, or the last seen when all stopped). */
  readonly live: boolean;
}

/** A bean's verdict, with why, and what more a verdict needs when the evidence falls short. */
export interface BeanVerdict {
  readonly name: string;
  readonly verdict: Verdict;
  readonly module?: string;
  readonly source?: string;
  /** The line of its class's declaration in `source`, when known: where code scanning annotates the bean. */
  readonly line?: number;
  readonly ghostCandidate: boolean;
  /** ISO time of the last use seen (to the last-use resolution). */
  readonly lastTouched?: string;
  /** One line a person reads: the verdict in words. */
  readonly why: string;
  /** The evidence it rests on, in words: since when, how many processes of which versions, tracked hours. */
  readonly evidence: string;
  /** For `insufficient-evidence`: the days, process-hours and tracked share still missing. */
  readonly needs?: { readonly days: number; readonly processHours: number; readonly trackedShare?: number };
  /** Method depth: the verdict of each of its methods, most likely dead first (member-verdicts.ts). */
  readonly methods?: readonly MethodVerdict[];
  /**
   * A bean never called that holds a kept member (`@Kept`, `diag.ghost-tracking.kept`, a GraphQL API's only `Query`
   * field): which one and why. It keeps its verdict, but is never a finding: deleting it deletes what is kept.
   */
  readonly kept?: string;
}

const DAY_MS = 86_400_000;
/** Two decimals, or two significant digits below 0.01 (a test's thresholds in seconds must not read as 0). */
const round = (n: number): number =>
  n === 0 || Math.abs(n) >= 0.01 ? Math.round(n * 100) / 100 : Number(n.toPrecision(2));

/** A duration as a person says it: `23.2 days`, `5.1 hours`, `12 minutes`, `40 seconds`. */
export function span(ms: number): string {
  const unit = (n: number, one: string) => `${n} ${n === 1 ? one : `${one}s`}`;
  if (ms >= 2 * DAY_MS || (ms >= DAY_MS && ms % DAY_MS === 0)) return unit(Math.round((ms / DAY_MS) * 10) / 10, 'day');
  if (ms >= 2 * 3_600_000) return unit(Math.round((ms / 3_600_000) * 10) / 10, 'hour');
  if (ms >= 2 * 60_000) return unit(Math.round(ms / 60_000), 'minute');
  return unit(Math.max(0, Math.round(ms / 1000)), 'second');
}

const percent = (share: number) => `${Math.floor(share * 1000) / 10}%`;

/** How many processes tracked a bean, as a person says it: `1 of 2 processes tracked (50%)`. */
export function trackedShareText(p: { total: number; tracked: number }): string {
  return `${p.tracked} of ${p.total} ${p.total === 1 ? 'process' : 'processes'} tracked (${percent(p.tracked / p.total)})`;
}

/** Process-hours as a person reads them: `12.5`, `0.31`, `0.0021`. */
export function hoursText(h: number): string {
  // Below a tenth of an hour "0.000004 process-hours" says nothing to a person (a trial with thresholds in seconds
  // read it so): minutes, then seconds, of process time.
  const ms = h * 3_600_000;
  if (h === 0 || h >= 0.1) return `${round(h)} process-${round(h) === 1 ? 'hour' : 'hours'}`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} process-${Math.round(ms / 60_000) === 1 ? 'minute' : 'minutes'}`;
  return `${Math.max(1, Math.round(ms / 1000))} process-${Math.round(ms / 1000) <= 1 ? 'second' : 'seconds'}`;
}

/** A bean's evidence in one line: since when, how many processes of which versions, tracked process-hours. */
export function evidenceText(bean: BeanEvidence, now: number): string {
  const since = `since ${new Date(bean.firstSeen).toISOString()} (${span(now - bean.firstSeen)})`;
  const p = bean.processes;
  const count = p === undefined ? '' : `, ${p.total} ${p.total === 1 ? 'process' : 'processes'}`;
  const processes =
    p === undefined
      ? ''
      : // the processes ran Phase 2, but not on an untracked bean (its verdict says why): not "all tracked"
        !bean.tracked
        ? count
        : p.tracked === p.total
          ? `${count} (all tracked)`
          : `, ${trackedShareText(p)}`;
  const versions =
    bean.versions && bean.versions.length > 0
      ? ` of ${bean.versions.length === 1 ? 'version' : 'versions'} ${bean.versions.join(', ')}`
      : '';
  const untracked =
    (bean.untrackedProcessHours ?? 0) > 0 ? ` (and ${hoursText(bean.untrackedProcessHours!)} untracked)` : '';
  return `${since}${processes}${versions}; ${hoursText(bean.processHours)} of tracking${untracked}`;
}

/** The verdict of one bean at `now`. */
export function verdictOf(bean: BeanEvidence, thresholds: EvidenceThresholds, now: number): BeanVerdict {
  const t = fullThresholds(thresholds);
  const base = {
    name: bean.name,
    ...(bean.module !== undefined ? { module: bean.module } : {}),
    ...(bean.source !== undefined ? { source: bean.source } : {}),
    ...(bean.line !== undefined ? { line: bean.line } : {}),
    ghostCandidate: bean.ghostCandidate,
    ...(bean.lastTouched !== undefined ? { lastTouched: new Date(bean.lastTouched).toISOString() } : {}),
    evidence: evidenceText(bean, now),
  };
  if (!bean.live)
    return {
      ...base,
      verdict: 'retired',
      why: "the service's current code does not have this bean any more (deleted or renamed)",
    };
  const p = bean.processes ?? { total: 1, tracked: 1 };
  const share = p.total === 0 ? 0 : p.tracked / p.total;
  const partly = p.tracked < p.total;
  const unseen = partly
    ? `; calls on the ${p.total - p.tracked} untracked ${p.total - p.tracked === 1 ? 'process are' : 'processes are'} not seen`
    : '';
  if (bean.lastTouched !== undefined) {
    const windowMs = t.minDays * DAY_MS;
    const age = now - bean.lastTouched;
    const inVersion = bean.lastTouchedVersion !== undefined ? ` in version ${bean.lastTouchedVersion}` : '';
    // Within a last-use period the time is the period's first use, not its latest (the wrappers are put back once a
    // period): said so, since "52 seconds ago" on a bean called every second reads as a precise time.
    const last =
      age < t.lastUseResolutionMs
        ? `used ${span(Math.max(0, age))} ago (${base.lastTouched})${inVersion}, the first use of its ${span(t.lastUseResolutionMs)} last-use period: later calls within it are not seen`
        : `last used ${span(Math.max(0, age))} ago (${base.lastTouched})${inVersion}`;
    // Known to the resolution: a use up to one period after the last seen may have gone unseen, so the window is
    // widened by one period; a window shorter than a period cannot tell "not used within it" at all.
    if (windowMs >= t.lastUseResolutionMs && age > windowMs + t.lastUseResolutionMs && share >= t.minTrackedShare) {
      return {
        ...base,
        verdict: 'dormant',
        why: `used before, not within the last ${span(windowMs)}: ${last}${unseen}`,
      };
    }
    return { ...base, verdict: 'in-use', why: `${last}${unseen}` };
  }
  if (!bean.tracked) {
    return { ...base, verdict: 'untrackable', why: `Phase 2 cannot tell: ${bean.untrackableReason ?? 'not tracked'}` };
  }
  const days = (now - bean.firstSeen) / DAY_MS;
  const missingDays = Math.max(0, t.minDays - days);
  const missingHours = Math.max(0, t.minProcessHours - bean.processHours);
  const missingShare = Math.max(0, t.minTrackedShare - share);
  const never = partly
    ? `never called on the ${p.tracked} of ${p.total} processes that tracked it (${percent(share)})${unseen}`
    : bean.processes === undefined
      ? 'never called on any process that had it'
      : `never called on ${p.total === 1 ? 'the one process' : `any of the ${p.total} processes`} that ${bean.countedWhere === 'served' ? 'served it' : 'had it'}`;
  if (missingDays === 0 && missingHours === 0 && missingShare === 0) {
    return {
      ...base,
      verdict: 'never-touched',
      why: `${never}${bean.ghostCandidate ? candidateWords(bean.neededOnlyBy) : ''}`,
    };
  }
  const wanted = [
    missingDays > 0 ? `${span((t.minDays - days) * DAY_MS)} more` : '',
    missingHours > 0 ? `${hoursText(missingHours)} more of tracking` : '',
    missingShare > 0 ? `${percent(t.minTrackedShare)} of its processes tracked (min-tracked-share)` : '',
  ].filter(Boolean);
  return {
    ...base,
    verdict: 'insufficient-evidence',
    why: `${never} so far; a verdict needs ${wanted.join(' and ')}`,
    needs: {
      days: round(missingDays),
      processHours: round(missingHours),
      ...(missingShare > 0 ? { trackedShare: round(missingShare) } : {}),
    },
  };
}

/** What Phase 1 adds to a never-touched verdict: nothing injects it, or only candidates do (it goes with them). */
export function candidateWords(neededOnlyBy: readonly string[] | undefined): string {
  if (neededOnlyBy === undefined || neededOnlyBy.length === 0) return '; nothing injects it either (strongest signal)';
  const them = neededOnlyBy.length === 1 ? 'the ghost candidate' : 'the ghost candidates';
  // (Not "it goes with it": a trial read the pronouns twice. The same words as a registration's advice.)
  return `; only ${them} ${neededOnlyBy.join(', ')} ${neededOnlyBy.length === 1 ? 'injects' : 'inject'} it: remove it together with ${neededOnlyBy.length === 1 ? 'that candidate' : 'those candidates'}`;
}

/**
 * Every bean's verdict, most likely dead first: by verdict (VERDICT_ORDER), a Phase 1 candidate before the rest
 * within one, then by name.
 */
export function verdicts(beans: Iterable<BeanEvidence>, thresholds: EvidenceThresholds, now: number): BeanVerdict[] {
  const rank = (v: BeanVerdict) => VERDICT_ORDER.indexOf(v.verdict) * 2 + (v.ghostCandidate ? 0 : 1);
  return [...beans]
    .map((b) => verdictOf(b, thresholds, now))
    .sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
