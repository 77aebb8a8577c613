/**
 * The ghost report's shape, built from a tracker's books and merged across processes: pure functions on plain
 * data. A module of its own so that the package's entry point (which exports `mergeGhostReports`) does not load the
 * tracker into a process that tracks nothing (issue #46: Phase 1 starts load neither).
 */
import type { GhostReport } from './types';

/** The ghost report's disclaimer (SPEC 3): untouched is an observation about one run, not a verdict. */
export const GHOST_DISCLAIMER =
  'Heuristic, not proof of dead code: "untouched" means no tracked method of the bean was invoked during this ' +
  'run (field access, reflection and use as a type marker are not seen), not that the bean is unused. ' +
  'Confidence grows with the length and realism of the run.';

/** A ghost report of the names given, sorted, with the fields that have something to say. */
export function buildReport(
  touched: string[],
  untouched: string[],
  untrackable: ReadonlyMap<string, string>,
  frameworkSkipped: number,
  framework?: string,
  neverResolved?: Iterable<string>,
  methods?: MethodsField,
): GhostReport {
  touched.sort();
  untouched.sort();
  const reasons: Record<string, string> = {};
  for (const name of [...untrackable.keys()].sort()) reasons[name] = untrackable.get(name)!;
  return {
    disclaimer: GHOST_DISCLAIMER,
    trackedCount: touched.length + untouched.length,
    touchedCount: touched.length,
    untouchedCount: untouched.length,
    untouched,
    touched,
    untrackableCount: untrackable.size,
    untrackable: reasons,
    frameworkSkipped,
    ...(framework !== undefined ? { framework } : {}),
    ...(neverResolved !== undefined ? neverResolvedFields([...neverResolved].sort()) : {}),
    ...(methods !== undefined ? { methods } : {}),
  };
}

/** The report's `methods`: bean name → method → ISO time of its first call, or null. */
export type MethodsField = Record<string, Record<string, string | null>>;

/** Folds one report's `methods` into `into`: a method called in any process is called, at its earliest call. */
function mergeMethods(into: MethodsField, from: MethodsField): void {
  for (const [bean, methods] of Object.entries(from)) {
    const target = (into[bean] ??= {});
    for (const [method, at] of Object.entries(methods)) {
      const before = target[method];
      target[method] = before === undefined || before === null ? at : at === null || before <= at ? before : at;
    }
  }
}

function neverResolvedFields(names: string[]): { neverResolvedCount: number; neverResolved: string[] } {
  return { neverResolvedCount: names.length, neverResolved: names };
}

/**
 * Combines the reports of several processes running the same application (cluster workers, replicas) into
 * one: a bean touched in any process is touched; a bean untrackable in any process is untrackable (first
 * reason in input order wins); `frameworkSkipped` is the largest count, since every process skips the same
 * framework beans; a binding resolved in any process is resolved (`neverResolved` keeps those no process
 * resolved). Pure: the inputs are not modified.
 */
export function mergeGhostReports(reports: Iterable<GhostReport>): GhostReport {
  const tracked = new Set<string>();
  const touchedAnywhere = new Set<string>();
  const untrackable = new Map<string, string>();
  let frameworkSkipped = 0;
  let framework: string | undefined;
  let neverResolved: Set<string> | undefined;
  let methods: MethodsField | undefined;
  for (const report of reports) {
    framework ??= report.framework;
    if (report.methods !== undefined) mergeMethods((methods ??= {}), report.methods);
    if (report.neverResolved !== undefined) {
      const here = new Set(report.neverResolved);
      neverResolved = neverResolved === undefined ? here : new Set([...neverResolved].filter((n) => here.has(n)));
    }
    for (const name of report.touched) {
      tracked.add(name);
      touchedAnywhere.add(name);
    }
    for (const name of report.untouched) tracked.add(name);
    for (const [name, reason] of Object.entries(report.untrackable)) {
      if (!untrackable.has(name)) untrackable.set(name, reason);
    }
    frameworkSkipped = Math.max(frameworkSkipped, report.frameworkSkipped);
  }
  const touched: string[] = [];
  const untouched: string[] = [];
  for (const name of tracked) {
    if (untrackable.has(name)) continue;
    (touchedAnywhere.has(name) ? touched : untouched).push(name);
  }
  return buildReport(touched, untouched, untrackable, frameworkSkipped, framework, neverResolved, methods);
}
