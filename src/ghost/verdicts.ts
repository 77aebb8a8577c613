/**
 * One verdict per bean, from both phases and the evidence behind them (issue #36). The same rules serve one
 * process's run (its evidence: that run) and a ledger where every replica, restart and deploy of a service meet
 * (its evidence: weeks of them): what a team needs before deleting code is not "untouched during this run" but
 * "never called on any instance, in the time this bean has existed, with this much of it observed".
 */

import type { MethodVerdict } from './member-verdicts';

/** The verdict vocabulary; scripts and dashboards rely on these exact strings. */
export type Verdict = 'in-use' | 'never-touched' | 'insufficient-evidence' | 'untrackable' | 'retired';

/** The order a reader deciding what to delete wants: the verdict first, then what is still open. */
export const VERDICT_ORDER: readonly Verdict[] = [
  'never-touched',
  'insufficient-evidence',
  'untrackable',
  'in-use',
  'retired',
];

/** How much observation turns "untouched so far" into `never-touched`. */
export interface EvidenceThresholds {
  /** Days since the bean first appeared (`diag.ghost-tracking.ledger.min-days`). */
  readonly minDays: number;
  /** Process-hours of tracking that had the bean (`diag.ghost-tracking.ledger.min-process-hours`). */
  readonly minProcessHours: number;
}

/** What is known of one bean. */
export interface BeanEvidence {
  readonly name: string;
  readonly module?: string;
  readonly source?: string;
  /** A Phase 1 candidate: nothing injects it and no entry point explains it. */
  readonly ghostCandidate: boolean;
  /** Whether Phase 2 tracked it (in at least one process that had it); otherwise why not. */
  readonly tracked: boolean;
  readonly untrackableReason?: string;
  /** When a tracked method of it was last first-touched, in any process (ms since the epoch). */
  readonly lastTouched?: number;
  /** When it first appeared, in any process (ms since the epoch). */
  readonly firstSeen: number;
  /** Hours of tracking, summed over the processes that had it. */
  readonly processHours: number;
  /** Whether a live process has it. */
  readonly live: boolean;
}

/** A bean's verdict, with why, and what more a verdict needs when the evidence falls short. */
export interface BeanVerdict {
  readonly name: string;
  readonly verdict: Verdict;
  readonly module?: string;
  readonly source?: string;
  readonly ghostCandidate: boolean;
  /** ISO time of the last first touch seen. */
  readonly lastTouched?: string;
  /** One line a person reads. */
  readonly why: string;
  /** For `insufficient-evidence`: the days and process-hours still missing. */
  readonly needs?: { readonly days: number; readonly processHours: number };
  /** Method depth: the verdict of each of its methods, most likely dead first (member-verdicts.ts). */
  readonly methods?: readonly MethodVerdict[];
}

const DAY_MS = 86_400_000;
/** Two decimals, or two significant digits below 0.01 (a test's thresholds in seconds must not read as 0). */
const round = (n: number): number =>
  n === 0 || Math.abs(n) >= 0.01 ? Math.round(n * 100) / 100 : Number(n.toPrecision(2));

/** A duration as a person says it: `23.2 days`, `5.1 hours`, `12 minutes`, `40 seconds`. */
export function span(ms: number): string {
  const unit = (n: number, one: string) => `${n} ${n === 1 ? one : `${one}s`}`;
  if (ms >= 2 * DAY_MS) return unit(Math.round((ms / DAY_MS) * 10) / 10, 'day');
  if (ms >= 2 * 3_600_000) return unit(Math.round((ms / 3_600_000) * 10) / 10, 'hour');
  if (ms >= 2 * 60_000) return unit(Math.round(ms / 60_000), 'minute');
  return unit(Math.max(0, Math.round(ms / 1000)), 'second');
}

/** The verdict of one bean at `now`. */
export function verdictOf(bean: BeanEvidence, thresholds: EvidenceThresholds, now: number): BeanVerdict {
  const base = {
    name: bean.name,
    ...(bean.module !== undefined ? { module: bean.module } : {}),
    ...(bean.source !== undefined ? { source: bean.source } : {}),
    ghostCandidate: bean.ghostCandidate,
    ...(bean.lastTouched !== undefined ? { lastTouched: new Date(bean.lastTouched).toISOString() } : {}),
  };
  if (!bean.live)
    return { ...base, verdict: 'retired', why: 'no live process has this bean any more (deleted or renamed code)' };
  if (bean.lastTouched !== undefined) return { ...base, verdict: 'in-use', why: 'a tracked method was called' };
  if (!bean.tracked) {
    return { ...base, verdict: 'untrackable', why: `Phase 2 cannot tell: ${bean.untrackableReason ?? 'not tracked'}` };
  }
  const days = (now - bean.firstSeen) / DAY_MS;
  const missingDays = Math.max(0, thresholds.minDays - days);
  const missingHours = Math.max(0, thresholds.minProcessHours - bean.processHours);
  const observed = `observed ${span(now - bean.firstSeen)}, ${round(bean.processHours)} process-hours`;
  if (missingDays === 0 && missingHours === 0) {
    return {
      ...base,
      verdict: 'never-touched',
      why: `never called on any instance; ${observed}${bean.ghostCandidate ? '; nothing injects it either (strongest signal)' : ''}`,
    };
  }
  return {
    ...base,
    verdict: 'insufficient-evidence',
    why: `never called so far; ${observed}, a verdict needs ${thresholds.minDays} days and ${thresholds.minProcessHours} process-hours`,
    needs: { days: round(missingDays), processHours: round(missingHours) },
  };
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
