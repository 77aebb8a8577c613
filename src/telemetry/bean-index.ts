import type { DiagReport } from '../ghost/reports/diag-report';

/** What telemetry attaches to a bean name: where it lives and whether Phase 1 flagged it. */
export interface BeanFacts {
  readonly module?: string;
  readonly candidate: boolean;
}

export type BeanIndex = ReadonlyMap<string, BeanFacts>;

const EMPTY: BeanIndex = new Map();
// Keyed by the report object: a report is immutable once built, and a new start-up produces a new object.
const cache = new WeakMap<DiagReport, BeanIndex>();

/**
 * Bean name → module and candidate flag, from the start-up report. Built once per report, so that a
 * collection every few seconds does not walk the graph again.
 */
export function beanIndex(report: DiagReport | undefined): BeanIndex {
  if (report === undefined) return EMPTY;
  let index = cache.get(report);
  if (index !== undefined) return index;
  const candidates = new Set(report.ghostCandidates.beans);
  const built = new Map<string, BeanFacts>();
  for (const node of report.graph.nodes) {
    built.set(node.name, {
      ...(node.module !== undefined ? { module: node.module } : {}),
      candidate: candidates.has(node.name),
    });
  }
  index = built;
  cache.set(report, index);
  return index;
}
