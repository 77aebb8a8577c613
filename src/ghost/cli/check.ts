import fs from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from '../../shared/atomic-file';
import { DIAG_REPORT_FILE } from '../reports/diag-report';

/**
 * `diag-instrumentation check`: compares a report with a baseline of known findings, so a build fails when
 * a new ghost candidate (diag-report.json) or a new untouched bean (diag-ghost-report.json) appears.
 * Exit codes: 0 nothing new, 1 new findings, 2 bad input or usage.
 */

export const EXIT = { clean: 0, findings: 1, badInput: 2 } as const;

/** What a report yields: one rule, and the beans it finds. */
export type FindingKind = 'ghost-candidate' | 'untouched-bean' | 'never-touched-bean';

export interface Finding {
  readonly bean: string;
  readonly module?: string;
  readonly className?: string;
  readonly source?: string;
}

/** The baseline file: the findings a team has accepted, by kind. */
export interface Baseline {
  readonly tool: 'diag-instrumentation';
  readonly kind: FindingKind;
  readonly beans: string[];
}

/** A problem with the input: printed as is, exit 2. */
export class CheckInputError extends Error {}

const RULES: Record<FindingKind, { name: string; short: string; full: string; singular: string; plural: string }> = {
  'ghost-candidate': {
    name: 'GhostCandidate',
    short: 'Bean created at startup that nothing injects and that shows no entry point',
    full:
      'Phase 1 of diag-instrumentation: the bean was instantiated eagerly, has no incoming edge in the resolved ' +
      'dependency graph and no entry point was found in its metadata. Heuristic (LOW confidence): lookups by ' +
      'token, reflection and beans collected by type are invisible to it; confirm with Phase 2.',
    singular: 'ghost candidate',
    plural: 'ghost candidates',
  },
  'untouched-bean': {
    name: 'UntouchedBean',
    short: 'Tracked bean whose methods were never called during this run',
    full:
      'Phase 2 of diag-instrumentation: no tracked method of the bean was invoked during the recorded run. ' +
      'Untouched in this run is not unused, and no verdict: the report calls such a bean insufficient-evidence; ' +
      'the ghost ledger (every replica, restart and deploy, for weeks) gives never-touched.',
    singular: 'bean untouched in this run',
    plural: 'beans untouched in this run',
  },
  'never-touched-bean': {
    name: 'NeverTouchedBean',
    short: 'Bean never called on the processes that tracked it, observed long enough for a verdict',
    full:
      'The ghost ledger of diag-instrumentation: Phase 2 tracked the bean in at least the required share of the ' +
      'processes that had it (all, by default), across replicas, restarts and deploys, and none of them ever called ' +
      'it, over at least the configured days and process-hours. Evidence-based (HIGH confidence when it is also a ' +
      'ghost candidate); a path that runs rarer than the observation window (a yearly job), or only on untracked ' +
      'processes, is what it cannot see.',
    singular: 'never-touched bean',
    plural: 'never-touched beans',
  },
};

/** `1 new ghost candidate`, `3 new ghost candidates`. */
export function count(n: number, kind: FindingKind, adjective = ''): string {
  return `${n} ${adjective}${n === 1 ? RULES[kind].singular : RULES[kind].plural}`;
}

/** The baseline suggested when none is given: one per kind of report, in the working directory. */
export const DEFAULT_BASELINES: Record<FindingKind, string> = {
  'ghost-candidate': 'diag-baseline.json',
  'untouched-bean': 'diag-ghost-baseline.json',
  'never-touched-bean': 'diag-ledger-baseline.json',
};

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CheckInputError(
      `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CheckInputError(
      `${what} ${file} is not valid JSON (${text.trim() === '' ? 'empty' : 'truncated or corrupt'}): ${(err as Error).message}`,
    );
  }
}

/** The findings of a diag-report.json (ghost candidates) or a diag-ghost-report.json (untouched beans). */
export function readFindings(file: string): { kind: FindingKind; findings: Finding[] } {
  const report = readJson(file, 'report') as Record<string, unknown> | null;
  const candidates = (report?.ghostCandidates as { beans?: unknown } | undefined)?.beans;
  if (
    report &&
    typeof report === 'object' &&
    Array.isArray(candidates) &&
    candidates.every((b) => typeof b === 'string')
  ) {
    const nodes = graphNodes(report);
    return { kind: 'ghost-candidate', findings: (candidates as string[]).map((bean) => finding(bean, nodes)) };
  }
  const untouched = report?.untouched;
  if (
    report &&
    typeof report === 'object' &&
    Array.isArray(untouched) &&
    typeof report.trackedCount === 'number' &&
    untouched.every((b) => typeof b === 'string')
  ) {
    // A ghost report names beans only: their module and file come from the start-up report beside it.
    const nodes = graphNodes(siblingDiagReport(file));
    return { kind: 'untouched-bean', findings: (untouched as string[]).map((bean) => finding(bean, nodes)) };
  }
  throw new CheckInputError(
    `${file} is neither a diag-report.json (ghostCandidates.beans) nor a diag-ghost-report.json (untouched, trackedCount)`,
  );
}

type ReportNode = Record<string, unknown>;

function graphNodes(report: Record<string, unknown> | null | undefined): Map<string, ReportNode> {
  const nodes = new Map<string, ReportNode>();
  const list = (report?.graph as { nodes?: unknown } | undefined)?.nodes;
  if (Array.isArray(list))
    for (const n of list) if (n && typeof n.name === 'string') nodes.set(n.name, n as ReportNode);
  return nodes;
}

/** `diag-report.json` in the ghost report's directory, when there is one (the reports are written together). */
function siblingDiagReport(ghostReport: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(path.dirname(ghostReport), DIAG_REPORT_FILE), 'utf8')) as Record<
      string,
      unknown
    >;
  } catch {
    return undefined;
  }
}

function finding(bean: string, nodes: ReadonlyMap<string, ReportNode>): Finding {
  const node = nodes.get(bean);
  const pick = (key: string) => (typeof node?.[key] === 'string' ? (node[key] as string) : undefined);
  const module = pick('module');
  const className = pick('className');
  const source = pick('source');
  return {
    bean,
    ...(module !== undefined ? { module } : {}),
    ...(className !== undefined ? { className } : {}),
    ...(source !== undefined ? { source: originalSource(source) } : {}),
  };
}

/**
 * The file the user edits: the report names where a class was loaded from (`dist/app.js`); when that file ships a
 * source map with one source (what tsc, SWC and esbuild write per file), the map's source (`src/app.ts`), relative
 * to the working directory like the report's path. Otherwise the path as the report gives it.
 */
export function originalSource(source: string): string {
  try {
    const compiled = path.resolve(source);
    const text = fs.readFileSync(compiled, 'utf8');
    const url = /\/\/[#@] sourceMappingURL=(\S+)\s*$/.exec(text.slice(-4096))?.[1];
    if (url === undefined) return source;
    let map: { sources?: unknown; sourceRoot?: unknown };
    let mapDir = path.dirname(compiled);
    const inline = /^data:application\/json(?:;charset=[^;,]+)?;base64,(.*)$/.exec(url);
    if (inline) {
      map = JSON.parse(Buffer.from(inline[1]!, 'base64').toString('utf8')) as typeof map;
    } else {
      const mapFile = path.resolve(mapDir, decodeURIComponent(url));
      map = JSON.parse(fs.readFileSync(mapFile, 'utf8')) as typeof map;
      mapDir = path.dirname(mapFile);
    }
    if (!Array.isArray(map.sources) || map.sources.length !== 1 || typeof map.sources[0] !== 'string') return source;
    const root = typeof map.sourceRoot === 'string' ? map.sourceRoot : '';
    const original = path.resolve(mapDir, root, map.sources[0]);
    if (!fs.existsSync(original)) return source;
    const relative = path.relative(process.cwd(), original);
    return (relative.startsWith('..') ? original : relative).split(path.sep).join('/');
  } catch {
    return source;
  }
}

/** The baseline's beans; a file that does not exist yet is an empty baseline. */
export function readBaseline(file: string | undefined, kind: FindingKind): Set<string> {
  if (file === undefined || !fs.existsSync(file)) return new Set();
  const baseline = readJson(file, 'baseline') as Partial<Baseline> | null;
  if (
    !baseline ||
    baseline.tool !== 'diag-instrumentation' ||
    !Array.isArray(baseline.beans) ||
    !(baseline.kind! in RULES)
  ) {
    throw new CheckInputError(`baseline ${file} is not a diag-instrumentation baseline ({ "tool", "kind", "beans" })`);
  }
  if (baseline.kind !== kind) {
    throw new CheckInputError(
      `baseline ${file} lists ${RULES[baseline.kind!].plural}, the report lists ${RULES[kind].plural}`,
    );
  }
  return new Set(baseline.beans.filter((b): b is string => typeof b === 'string'));
}

export function writeBaseline(file: string, kind: FindingKind, findings: readonly Finding[]): void {
  const baseline: Baseline = {
    tool: 'diag-instrumentation',
    kind,
    beans: [...new Set(findings.map((f) => f.bean))].sort(),
  };
  writeJsonAtomic(file, baseline);
}

/** SARIF 2.1.0: every current finding, `baselineState` saying which are new. */
export function toSarif(
  kind: FindingKind,
  findings: readonly Finding[],
  known: ReadonlySet<string>,
  version: string,
): object {
  const rule = RULES[kind];
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'diag-instrumentation',
            version,
            informationUri: 'https://www.npmjs.com/package/diag-instrumentation',
            rules: [
              {
                id: kind,
                name: rule.name,
                shortDescription: { text: rule.short },
                fullDescription: { text: rule.full },
                defaultConfiguration: { level: 'warning' },
              },
            ],
          },
        },
        results: findings.map((f) => {
          const qualified = f.module ? `${f.module}/${f.bean}` : f.bean;
          const logical = { name: f.className ?? f.bean, fullyQualifiedName: qualified, kind: 'type' };
          return {
            ruleId: kind,
            ruleIndex: 0,
            level: 'warning',
            message: { text: `${f.bean}${f.module ? ` (${f.module})` : ''}: ${rule.short.toLowerCase()}.` },
            locations: [
              f.source
                ? { physicalLocation: { artifactLocation: { uri: f.source } }, logicalLocations: [logical] }
                : { logicalLocations: [logical] },
            ],
            partialFingerprints: { 'diagBean/v1': qualified },
            baselineState: known.has(f.bean) ? 'unchanged' : 'new',
          };
        }),
      },
    ],
  };
}

export interface CheckOptions {
  readonly report: string;
  readonly baseline?: string;
  readonly updateBaseline: boolean;
  readonly format: 'text' | 'sarif';
  readonly version: string;
}

export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Runs the check; returns the exit code and writes to the given streams. Never throws. */
export function runCheck(o: CheckOptions, out: (text: string) => void, err: (text: string) => void): number {
  try {
    const { kind, findings } = readFindings(o.report);
    if (o.updateBaseline) {
      if (o.baseline === undefined)
        throw new CheckInputError(
          `--update-baseline needs --baseline <file> (for this report: --baseline ${DEFAULT_BASELINES[kind]})`,
        );
      writeBaseline(o.baseline, kind, findings);
      err(`baseline ${o.baseline} written: ${count(findings.length, kind)}\n`);
      return EXIT.clean;
    }
    const known = readBaseline(o.baseline, kind);
    const fresh = findings.filter((f) => !known.has(f.bean));
    if (o.format === 'sarif') {
      out(`${JSON.stringify(toSarif(kind, findings, known, o.version), null, 2)}\n`);
    } else if (fresh.length === 0) {
      out(`no new ${RULES[kind].plural} (${findings.length} in the report, all in the baseline)\n`);
    } else {
      const where = o.baseline ? `not in ${o.baseline}` : 'and no baseline given';
      out(`${count(fresh.length, kind, 'new ')} ${where}:\n`);
      if (kind === 'untouched-bean') {
        // The same file calls them insufficient-evidence: this gate is on one run, and says so.
        out(
          '(a gate on this run only: the report calls these beans insufficient-evidence, not dead; ' +
            'the ghost ledger gives never-touched, see npx diag-instrumentation ledger --help)\n',
        );
      }
      for (const f of fresh) {
        const detail = [f.module, f.source].filter(Boolean).join(', ');
        out(`  ${f.bean}${detail ? ` (${detail})` : ''}\n`);
      }
      // A command that works as printed: the same report, the baseline given (or the one suggested).
      const accept = [
        'npx',
        'diag-instrumentation',
        'check',
        o.report,
        '--baseline',
        o.baseline ?? DEFAULT_BASELINES[kind],
        '--update-baseline',
      ];
      out(
        `Remove ${fresh.length === 1 ? 'it' : 'them'}, or accept ${fresh.length === 1 ? 'it' : 'them'} into the baseline:\n    ${accept.map(shellQuote).join(' ')}\n`,
      );
    }
    return fresh.length === 0 ? EXIT.clean : EXIT.findings;
  } catch (error) {
    if (error instanceof CheckInputError) {
      err(`diag-instrumentation check: ${error.message}\n`);
      return EXIT.badInput;
    }
    err(`diag-instrumentation check: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT.badInput;
  }
}
