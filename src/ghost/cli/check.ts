import fs from 'node:fs';

import { writeJsonAtomic } from '../../shared/atomic-file';

/**
 * `diag-instrumentation check`: compares a report with a baseline of known findings, so a build fails when
 * a new ghost candidate (diag-report.json) or a new untouched bean (diag-ghost-report.json) appears.
 * Exit codes: 0 nothing new, 1 new findings, 2 bad input or usage.
 */

export const EXIT = { clean: 0, findings: 1, badInput: 2 } as const;

/** What a report yields: one rule, and the beans it finds. */
export type FindingKind = 'ghost-candidate' | 'untouched-bean';

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

const RULES: Record<FindingKind, { name: string; short: string; full: string; plural: string }> = {
  'ghost-candidate': {
    name: 'GhostCandidate',
    short: 'Bean created at startup that nothing injects and that shows no entry point',
    full:
      'Phase 1 of diag-instrumentation: the bean was instantiated eagerly, has no incoming edge in the resolved ' +
      'dependency graph and no entry point was found in its metadata. Heuristic (LOW confidence): lookups by ' +
      'token, reflection and beans collected by type are invisible to it; confirm with Phase 2.',
    plural: 'ghost candidates',
  },
  'untouched-bean': {
    name: 'UntouchedBean',
    short: 'Tracked bean whose methods were never called during the run',
    full:
      'Phase 2 of diag-instrumentation: no tracked method of the bean was invoked during the recorded run. ' +
      'Untouched is not unused: it speaks about this run only.',
    plural: 'untouched beans',
  },
};

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CheckInputError(`cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CheckInputError(`${what} ${file} is not valid JSON (${text.trim() === '' ? 'empty' : 'truncated or corrupt'}): ${(err as Error).message}`);
  }
}

/** The findings of a diag-report.json (ghost candidates) or a diag-ghost-report.json (untouched beans). */
export function readFindings(file: string): { kind: FindingKind; findings: Finding[] } {
  const report = readJson(file, 'report') as Record<string, unknown> | null;
  const candidates = (report?.ghostCandidates as { beans?: unknown } | undefined)?.beans;
  if (report && typeof report === 'object' && Array.isArray(candidates) && candidates.every((b) => typeof b === 'string')) {
    const nodes = new Map<string, Record<string, unknown>>();
    const graphNodes = (report.graph as { nodes?: unknown } | undefined)?.nodes;
    if (Array.isArray(graphNodes)) for (const n of graphNodes) if (n && typeof n.name === 'string') nodes.set(n.name, n);
    return {
      kind: 'ghost-candidate',
      findings: (candidates as string[]).map((bean) => {
        const node = nodes.get(bean);
        const pick = (key: string) => (typeof node?.[key] === 'string' ? { [key]: node[key] as string } : {});
        return { bean, ...pick('module'), ...pick('className'), ...pick('source') };
      }),
    };
  }
  const untouched = report?.untouched;
  if (report && typeof report === 'object' && Array.isArray(untouched) && typeof report.trackedCount === 'number' && untouched.every((b) => typeof b === 'string')) {
    return { kind: 'untouched-bean', findings: (untouched as string[]).map((bean) => ({ bean })) };
  }
  throw new CheckInputError(
    `${file} is neither a diag-report.json (ghostCandidates.beans) nor a diag-ghost-report.json (untouched, trackedCount)`,
  );
}

/** The baseline's beans; a file that does not exist yet is an empty baseline. */
export function readBaseline(file: string | undefined, kind: FindingKind): Set<string> {
  if (file === undefined || !fs.existsSync(file)) return new Set();
  const baseline = readJson(file, 'baseline') as Partial<Baseline> | null;
  if (!baseline || baseline.tool !== 'diag-instrumentation' || !Array.isArray(baseline.beans) || !(baseline.kind! in RULES)) {
    throw new CheckInputError(`baseline ${file} is not a diag-instrumentation baseline ({ "tool", "kind", "beans" })`);
  }
  if (baseline.kind !== kind) {
    throw new CheckInputError(`baseline ${file} lists ${RULES[baseline.kind!].plural}, the report lists ${RULES[kind].plural}`);
  }
  return new Set(baseline.beans.filter((b): b is string => typeof b === 'string'));
}

export function writeBaseline(file: string, kind: FindingKind, findings: readonly Finding[]): void {
  const baseline: Baseline = { tool: 'diag-instrumentation', kind, beans: [...new Set(findings.map((f) => f.bean))].sort() };
  writeJsonAtomic(file, baseline);
}

/** SARIF 2.1.0: every current finding, `baselineState` saying which are new. */
export function toSarif(kind: FindingKind, findings: readonly Finding[], known: ReadonlySet<string>, version: string): object {
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

/** Runs the check; returns the exit code and writes to the given streams. Never throws. */
export function runCheck(o: CheckOptions, out: (text: string) => void, err: (text: string) => void): number {
  try {
    const { kind, findings } = readFindings(o.report);
    if (o.updateBaseline) {
      if (o.baseline === undefined) throw new CheckInputError('--update-baseline needs --baseline <file>');
      writeBaseline(o.baseline, kind, findings);
      err(`baseline ${o.baseline} written: ${findings.length} ${RULES[kind].plural}\n`);
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
      out(`${fresh.length} new ${RULES[kind].plural} ${where}:\n`);
      for (const f of fresh) {
        const detail = [f.module, f.source].filter(Boolean).join(', ');
        out(`  ${f.bean}${detail ? ` (${detail})` : ''}\n`);
      }
      out(`Accept them with --update-baseline, or remove the beans.\n`);
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
