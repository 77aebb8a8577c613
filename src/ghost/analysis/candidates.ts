import type { Bean, BeanGraph } from './bean-graph';
import { errorText } from '../../shared/errors';

/**
 * Phase 1: ghost candidates from the resolved graph alone. A candidate is an application bean that was
 * created eagerly at startup, that no other bean depends on, and that shows no sign of being called by the
 * framework; in a lazy container (`Bean.resolved` set), an application binding never resolved by the time the
 * application was ready, that no entry point or resolved binding needs, and no entry point itself. The result is
 * advice with LOW confidence, never a verdict.
 */

export const GHOST_CANDIDATES_DISCLAIMER =
  'Heuristic, not proof of dead code: a candidate was created at startup, nothing injects it and no entry ' +
  'point was found in its metadata, but lookups by token made in a constructor or a factory, reflection and ' +
  'beans collected by type are invisible to this analysis; a lookup from a lifecycle hook or after start-up ' +
  '(app.get, moduleRef.get, moduleRef.resolve) takes its bean off this list when it happens (lookedUpExcluded). Confirm with Phase 2 (diag.ghost-tracking.enabled) over a realistic run ' +
  'before removing anything.';

export const LAZY_GHOST_CANDIDATES_DISCLAIMER =
  'Heuristic, not proof of dead code: a candidate is a binding of a lazy container that nothing had resolved ' +
  'by the time the application was ready (its first HTTP server listening, or diagReady()) and that no entry ' +
  'point or resolved binding needs, as far as the container metadata tells. Many bindings are ' +
  'first resolved by a request or a job later on: keep the application running under realistic traffic with ' +
  'Phase 2 (diag.ghost-tracking.enabled) and read neverResolved in the ghost report before removing anything.';

/**
 * Decides whether the framework calls into a bean on its own (a controller, a cron holder, a guard...).
 * Returns the reasons found, empty when none. An adapter that knows more than the rules (a passport strategy
 * whose name no guard uses) may instead return `{ candidate: reason }`: a candidate, with why.
 * May throw: the bean is then excluded, never listed.
 */
export type EntryPointClassifier = (bean: Bean) => readonly string[] | { readonly candidate: string };

/** Why an orphan (or a bean needed only by candidates) is or is not a candidate, per bean. */
export type OrphanVerdict =
  | {
      readonly status: 'candidate';
      readonly reason?: string;
      /** A bean something injects, but only these candidates do. */
      readonly neededOnlyBy?: readonly string[];
    }
  | { readonly status: 'not-instantiated' }
  | { readonly status: 'entry-point'; readonly reasons: readonly string[] }
  | { readonly status: 'classification-failed'; readonly error: string }
  /** A candidate the application looked up by token after start-up (see `excludeLookedUp` in reports.ts). */
  | { readonly status: 'looked-up'; readonly via: string; readonly at: string };

/** The `ghostCandidates` section of `diag-report.json`. */
export interface GhostCandidates {
  readonly confidence: 'LOW';
  readonly disclaimer: string;
  readonly count: number;
  readonly beans: string[];
  readonly entryPointsExcluded: number;
  readonly notInstantiatedExcluded: number;
  /** Orphans whose classification threw; excluded rather than listed. */
  readonly classificationFailedExcluded: number;
  /**
   * Candidates the application looked up by token after start-up: used, though nothing injects them (and the
   * candidates needed only by them, which leave with them).
   */
  readonly lookedUpExcluded: number;
  /**
   * Of `count`, the beans something injects, but only candidates do (`candidateReason` names them): dead once
   * those are, the shape of a repository injected only by a dead duplicate service (issue #44). Not orphans.
   */
  readonly neededOnlyByCandidates?: number;
}

export interface Phase1Result {
  /**
   * Application beans with no dependents (in a lazy container: never resolved by ready), whatever else holds:
   * the unfiltered list.
   */
  readonly orphans: string[];
  readonly ghostCandidates: GhostCandidates;
  /** Verdict for every orphan, by bean name. */
  readonly verdicts: ReadonlyMap<string, OrphanVerdict>;
  /** Framework and library beans, never candidates, counted only. */
  readonly frameworkBeans: number;
}

/**
 * Applies the Phase 1 rules. Every orphan ends in exactly one bucket, so
 * `orphans.length + neededOnlyByCandidates === count + entryPointsExcluded + notInstantiatedExcluded +
 * classificationFailedExcluded` (`+ lookedUpExcluded` once lookups after start-up have taken candidates off).
 */
export function findGhostCandidates(graph: BeanGraph, classify: EntryPointClassifier): Phase1Result {
  const orphans: string[] = [];
  const candidates: string[] = [];
  const verdicts = new Map<string, OrphanVerdict>();
  let entryPoints = 0;
  let notInstantiated = 0;
  let failed = 0;
  let frameworkBeans = 0;
  let lazy = false;

  const neededByLive = lazyNeededByLive(graph, classify);
  for (const bean of graph.beans()) {
    if (bean.resolved !== undefined) lazy = true;
    if (bean.framework) {
      frameworkBeans += 1;
      continue;
    }
    // A lazy container's binding: resolved by then is in use, and so is what an entry point or a resolved binding
    // needs (it is resolved with them, per request); never resolved and needed by nothing live is the orphan
    if (bean.resolved === true || neededByLive.has(bean.id)) continue;
    if (bean.resolved === undefined && graph.inDegree(bean.id) > 0) continue;
    orphans.push(bean.name);
    let verdict: OrphanVerdict;
    if (bean.resolved === undefined && (!bean.eager || bean.scope !== 'singleton')) {
      verdict = { status: 'not-instantiated' };
      notInstantiated += 1;
    } else {
      let reasons: ReturnType<EntryPointClassifier> | undefined;
      try {
        reasons = classify(bean);
      } catch (err) {
        verdict = { status: 'classification-failed', error: errorText(err) };
        failed += 1;
      }
      if (reasons !== undefined) {
        if (!Array.isArray(reasons)) {
          verdict = { status: 'candidate', reason: (reasons as { candidate: string }).candidate };
          candidates.push(bean.name);
        } else if (reasons.length > 0) {
          verdict = { status: 'entry-point', reasons: [...reasons] };
          entryPoints += 1;
        } else {
          verdict = { status: 'candidate' };
          candidates.push(bean.name);
        }
      }
    }
    verdicts.set(bean.name, verdict!);
  }

  const neededOnlyByCandidates = addNeededOnlyByCandidates(graph, classify, candidates, verdicts);
  orphans.sort();
  candidates.sort();
  return {
    orphans,
    ghostCandidates: {
      confidence: 'LOW',
      disclaimer: lazy ? LAZY_GHOST_CANDIDATES_DISCLAIMER : GHOST_CANDIDATES_DISCLAIMER,
      count: candidates.length,
      beans: candidates,
      entryPointsExcluded: entryPoints,
      notInstantiatedExcluded: notInstantiated,
      classificationFailedExcluded: failed,
      lookedUpExcluded: 0,
      ...(neededOnlyByCandidates > 0 ? { neededOnlyByCandidates } : {}),
    },
    verdicts,
    frameworkBeans,
  };
}

/**
 * In a lazy container, the bindings never resolved by ready that a live one needs, directly or through others: a
 * framework entry point's (a controller resolved per request) or a resolved binding's dependencies. An outside
 * trial's InversifyJS application had its controllers' services (`UserService`, its repository and token services)
 * listed with "Remove them": its routes build them at the first request, after ready. Empty for an eager container.
 */
function lazyNeededByLive(graph: BeanGraph, classify: EntryPointClassifier): Set<number> {
  const beans = graph.beans();
  if (!beans.some((bean) => bean.resolved !== undefined)) return new Set();
  const live: number[] = [];
  for (const bean of beans) {
    if (bean.resolved === true) {
      live.push(bean.id);
      continue;
    }
    if (bean.framework || graph.dependencies(bean.id).length === 0) continue;
    try {
      const reasons = classify(bean);
      if (Array.isArray(reasons) && reasons.length > 0) live.push(bean.id);
    } catch {
      /* classified again, and reported, if it is an orphan */
    }
  }
  const needed = new Set<number>();
  for (let queue = live; queue.length > 0;) {
    const next: number[] = [];
    for (const id of queue)
      for (const dep of graph.dependencies(id)) {
        if (needed.has(dep)) continue;
        needed.add(dep);
        next.push(dep);
      }
    queue = next;
  }
  return needed;
}

/**
 * Beans dead through their dependents: created at start-up, injected, but only by candidates, and no entry point
 * of their own. Deleting the candidates leaves them orphans, so a team deciding what to delete wants them in the
 * same list, saying which candidates hold them (a real monorepo's repository injected only by a dead duplicate
 * service was missed before issue #44). Repeated until nothing changes: a chain of them goes as one. Eager
 * containers only: in a lazy one a binding needed only by unresolved ones was never resolved itself, already an
 * orphan. A bean whose classification throws stays out, as an orphan's would. Returns how many were added.
 */
function addNeededOnlyByCandidates(
  graph: BeanGraph,
  classify: EntryPointClassifier,
  candidates: string[],
  verdicts: Map<string, OrphanVerdict>,
): number {
  if (candidates.length === 0) return 0;
  const dependents = new Map<number, number[]>();
  for (const e of graph.edges()) {
    const list = dependents.get(e.to);
    if (list === undefined) dependents.set(e.to, [e.from]);
    else if (!list.includes(e.from)) list.push(e.from);
  }
  const dead = new Set(candidates);
  let added = 0;
  for (let changed = true; changed;) {
    changed = false;
    for (const bean of graph.beans()) {
      if (bean.framework || bean.resolved !== undefined || dead.has(bean.name) || verdicts.has(bean.name)) continue;
      if (!bean.eager || bean.scope !== 'singleton') continue;
      const by = dependents.get(bean.id);
      if (by === undefined || by.length === 0) continue;
      const names = by.map((id) => graph.bean(id).name);
      if (!names.every((n) => dead.has(n))) continue;
      let reasons: ReturnType<EntryPointClassifier>;
      try {
        reasons = classify(bean);
      } catch {
        continue;
      }
      // An entry point the framework calls, or an adapter's own verdict: not dead through its dependents.
      if (!Array.isArray(reasons) || reasons.length > 0) continue;
      const neededOnlyBy = [...names].sort();
      verdicts.set(bean.name, {
        status: 'candidate',
        reason: `needed only by ${neededOnlyBy.length === 1 ? 'the candidate' : 'the candidates'} ${neededOnlyBy.join(', ')}`,
        neededOnlyBy,
      });
      dead.add(bean.name);
      candidates.push(bean.name);
      added += 1;
      changed = true;
    }
  }
  return added;
}
