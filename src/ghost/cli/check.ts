import fs from 'node:fs';
import path from 'node:path';
import { writeJsonAtomic } from '../../shared/atomic-file';
import { applicationFile, applicationPath, singleOriginalOf } from '../origins/declared-class';
import { sourceMapFor } from '../origins/source-map';
import {
  DIAG_REPORT_FILE,
  registrationOf,
  type Registration,
  type ReportNode as DiagReportNode,
} from '../reports/diag-report';
import { candidateWords } from '../verdicts';
import { contractReader } from '../contracts';
import {
  addMemberResults,
  baselineKeys,
  beanLine,
  memberWords,
  runMemberFindings,
  sourceOf,
  contractsUnread,
  withContracts,
  type CalledMethod,
  type MemberFinding,
} from './members';

/**
 * `diag-instrumentation check`: compares a report with a baseline of known findings, so a build fails when
 * a new ghost candidate (diag-report.json) appears, or in a run's diag-ghost-report.json a new untouched bean, or
 * (method depth, issue #43) a new method of a called bean or a new endpoint never called in this run.
 * Exit codes: 0 nothing new, 1 new findings, 2 bad input or usage.
 */

export const EXIT = { clean: 0, findings: 1, badInput: 2 } as const;

/** What a report yields: one rule, and the beans it finds. */
export type FindingKind = 'ghost-candidate' | 'untouched-bean' | 'never-touched-bean';

export interface Finding {
  /** The bean's name, or a member's key (`Bean#method`, `http GET /x`): what a baseline lists. */
  readonly bean: string;
  readonly module?: string;
  readonly className?: string;
  readonly source?: string;
  /** The line in `source` that stands for the bean: its class's declaration (or its first method's). */
  readonly line?: number;
  /** A method or endpoint below the beans (issue #43), with its words and line. */
  readonly member?: MemberFinding;
  /**
   * `source` and `line` are where the bean is registered, not a class file of its own: `only` when the registration
   * is what goes (a library's class it lists, a value, a factory), `class-file-unknown` when the class was not found
   * anywhere (one no module exports, or a library's the index could not tell: not known to be either).
   */
  readonly registration?: Registration;
  /** A candidate something injects, but only these candidates do: it goes with them, never alone. */
  readonly neededOnlyBy?: readonly string[];
  /** A lazy container's binding never resolved in the run (a ghost report's `neverResolved`), not an untouched bean. */
  readonly neverResolved?: true;
}

/** A finding standing at a registration, as far as a reader needs to act on it. */
interface AtRegistration {
  readonly registration?: Registration;
  readonly className?: string;
  readonly bean: string;
  readonly module?: string;
  readonly neededOnlyBy?: readonly string[];
}

/**
 * What a verdict at a registration advises (the ledger's never-touched, a Phase 1 candidate): what to take out of
 * which module's providers (a line may list several: `providers: [Logger, ...handlers]`), and, for a bean only
 * candidates inject, that it goes with them (removed alone, the module no longer resolves its dependents: a trial's
 * app failed to start). A class of unknown origin is called neither the application's nor a library's.
 */
export function registrationWords(f: AtRegistration): string {
  if (f.registration === undefined) return '';
  const what = f.className ?? f.bean.slice(f.bean.lastIndexOf('/') + 1);
  const where = f.module !== undefined && f.module !== '' ? `${f.module}'s providers` : "its module's providers";
  const also = f.registration === 'class-file-unknown' ? "; if the class is the application's, delete it too" : '';
  return `; remove ${what} from ${where} (the line shown)${withCandidates(f.neededOnlyBy)}${registrationNote(f)}${also}`;
}

/** What is not known of a class standing at its registration: whose it is, when its file was not found. */
export function registrationNote(f: AtRegistration): string {
  return f.registration === 'class-file-unknown'
    ? " (its class's file was not found: a class no module exports, or a library's)"
    : '';
}

/** `, together with A, which alone injects it`: what a bean only candidates inject goes with. */
export function withCandidates(neededOnlyBy: readonly string[] | undefined): string {
  if (neededOnlyBy === undefined || neededOnlyBy.length === 0) return '';
  return `, together with ${neededOnlyBy.join(', ')}, which alone ${neededOnlyBy.length === 1 ? 'injects' : 'inject'} it`;
}

/** A ledger bean's or report node's registration, as a finding carries it. */
export function ledgerRegistration(bean: {
  readonly registered?: boolean;
  readonly classFileUnknown?: boolean;
}): Registration | undefined {
  if (bean.registered !== true) return undefined;
  return bean.classFileUnknown === true ? 'class-file-unknown' : 'only';
}

/** The baseline file: the findings a team has accepted, by kind. */
export interface Baseline {
  readonly tool: 'diag-instrumentation';
  readonly kind: FindingKind;
  readonly beans: string[];
  /** Methods (`Bean#method`) and endpoints (`<kind> <route>`) accepted, for the kinds that have them. */
  readonly members?: string[];
}

/** A problem with the input: printed as is, exit 2. */
export class CheckInputError extends Error {}

const RULES: Record<
  FindingKind,
  {
    name: string;
    short: string;
    full: string;
    singular: string;
    plural: string;
    /** What the text output asks of new findings (`it` or `them`), before the command that accepts them. */
    act: (them: string) => string;
  }
> = {
  'ghost-candidate': {
    name: 'GhostCandidate',
    short: 'Bean created at startup that nothing injects and that shows no entry point',
    full:
      'Phase 1 of diag-instrumentation: the bean was instantiated eagerly, has no incoming edge in the resolved ' +
      'dependency graph and no entry point was found in its metadata. Heuristic (LOW confidence): lookups by ' +
      'token, reflection and beans collected by type are invisible to it; confirm with Phase 2.',
    singular: 'ghost candidate',
    plural: 'ghost candidates',
    // a heuristic whose own disclaimer asks for Phase 2 before anything goes (it ended "Remove them" all the same)
    act: (them) =>
      `Confirm ${them} with Phase 2 (diag.ghost-tracking.enabled) before removing anything, or accept ${them} into the baseline`,
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
    // one run proves nothing dead (the gate's note says so): a look, not a removal
    act: (them) => `Look into ${them} before removing anything, or accept ${them} into the baseline`,
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
    act: (them) => `Remove ${them}, or accept ${them} into the baseline`,
  },
};

/** `1 new ghost candidate`, `3 new ghost candidates`. */
export function count(n: number, kind: FindingKind, adjective = ''): string {
  return `${n} ${adjective}${n === 1 ? RULES[kind].singular : RULES[kind].plural}`;
}

/** When a member finding of this kind of report was never called: one run's, or the ledger's processes'. */
const NEVER_CALLED: Partial<Record<FindingKind, string>> = {
  'untouched-bean': 'never called in this run',
  'never-touched-bean': 'never called in any process',
};

/**
 * Findings counted in words, beans and members apart: `1 new bean untouched in this run, 2 new methods and 1 new
 * endpoint never called in this run`.
 */
export function countFindings(findings: readonly Finding[], kind: FindingKind, adjective = ''): string {
  const methods = findings.filter((f) => f.member !== undefined && f.member.endpoint === undefined).length;
  const endpoints = findings.filter((f) => f.member?.endpoint !== undefined).length;
  const unresolved = findings.filter((f) => f.neverResolved === true).length;
  const beans = findings.length - methods - endpoints - unresolved;
  const members = [
    ...(methods > 0 ? [`${methods} ${adjective}method${methods === 1 ? '' : 's'}`] : []),
    ...(endpoints > 0 ? [`${endpoints} ${adjective}endpoint${endpoints === 1 ? '' : 's'}`] : []),
  ];
  return [
    ...(beans > 0 || (members.length === 0 && unresolved === 0) ? [count(beans, kind, adjective)] : []),
    ...(unresolved > 0
      ? [`${unresolved} ${adjective}binding${unresolved === 1 ? '' : 's'} never resolved in this run`]
      : []),
    ...(members.length > 0 ? [`${members.join(' and ')} ${NEVER_CALLED[kind] ?? ''}`.trimEnd()] : []),
  ].join(', ');
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

/** The methods one run's ghost report shows called, where they are (what tells a contract still needed). */
function calledInRun(report: Record<string, unknown>): CalledMethod[] {
  const out: CalledMethod[] = [];
  for (const b of asRecords(report.verdicts)) {
    if (typeof b.name !== 'string') continue;
    for (const m of asRecords(b.methods)) {
      const source = sourceOf(m.source);
      if (typeof m.name !== 'string' || source === undefined) continue;
      if (m.lastTouched === undefined && m.verdict !== 'in-use') continue;
      out.push({ bean: b.name, method: m.name, source });
    }
  }
  return out;
}

/** The findings of a diag-report.json (ghost candidates) or a diag-ghost-report.json (untouched beans). */
export function readFindings(file: string): {
  kind: FindingKind;
  findings: Finding[];
  /** A ghost report's containers left unpatched, in words: what its empty lists do not show. */
  unseen?: string[];
  /** A ghost report that tracked no bean, and saw none it could not track. */
  trackedNothing?: boolean;
  /** Untouched beans left out because they hold a kept member, each with why (said, so none is silently absent). */
  kept?: Array<{ bean: string; reason: string }>;
} {
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
    const verdicts = new Map(
      (Array.isArray(report.verdicts) ? (report.verdicts as Array<Record<string, unknown> | null>) : [])
        .filter((v): v is Record<string, unknown> => typeof v?.name === 'string')
        .map((v) => [v.name as string, v]),
    );
    // Untouched, but judged untrackable (no call could reach it here: its endpoints were not served), or holding a
    // kept member (deleting it deletes that): no finding.
    const judged = (untouched as string[]).filter(
      (bean) => verdicts.get(bean)?.verdict !== 'untrackable' && verdicts.get(bean)?.kept === undefined,
    );
    // A lazy container's binding never resolved in the run is never called either, though untracked (a transient
    // has no first touch to watch): an outside trial's one dead interceptor was in `neverResolved` alone, and this
    // check said nothing of it.
    const untouchedToo = new Set(judged);
    const neverResolved = (Array.isArray(report.neverResolved) ? (report.neverResolved as unknown[]) : []).filter(
      (bean): bean is string =>
        typeof bean === 'string' && !untouchedToo.has(bean) && verdicts.get(bean)?.kept === undefined,
    );
    const beans = [
      ...judged.map((bean) => withLine(finding(bean, nodes), verdicts.get(bean))),
      ...neverResolved.map((bean): Finding => ({
        ...withLine(finding(bean, nodes), verdicts.get(bean)),
        neverResolved: true,
      })),
    ];
    const members = withContracts(
      runMemberFindings(report, new Set(untouched as string[])),
      calledInRun(report),
      contractReader(),
    ).map((member): Finding => ({
      bean: member.key,
      member,
    }));
    const unseen = asRecords(report.unsupported)
      .filter((u) => typeof u.package === 'string')
      .map((u) => {
        const supported = Array.isArray(u.supported) ? u.supported.filter((r) => typeof r === 'string') : [];
        const version = typeof u.version === 'string' ? ` ${u.version}` : '';
        return `${String(u.package)}${version} is outside the versions diag-instrumentation supports (${supported.join(', ')}): the run left it unpatched, so this report shows none of its beans`;
      });
    const trackedNothing = report.trackedCount === 0 && Number(report.untrackableCount ?? 0) === 0;
    const kept = (untouched as string[]).flatMap((bean) => {
      const reason = verdicts.get(bean)?.kept;
      return typeof reason === 'string' ? [{ bean, reason }] : [];
    });
    return {
      kind: 'untouched-bean',
      findings: [...beans, ...members],
      ...(unseen.length > 0 ? { unseen, trackedNothing } : {}),
      ...(kept.length > 0 ? { kept } : {}),
    };
  }
  throw new CheckInputError(
    `${file} is neither a diag-report.json (ghostCandidates.beans) nor a diag-ghost-report.json (untouched, trackedCount)`,
  );
}

type ReportNode = Record<string, unknown>;

function asRecords(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value)
    ? value.filter((v): v is Record<string, unknown> => v !== null && typeof v === 'object')
    : [];
}

function graphNodes(report: Record<string, unknown> | null | undefined): Map<string, ReportNode> {
  const nodes = new Map<string, ReportNode>();
  const list = (report?.graph as { nodes?: unknown } | undefined)?.nodes;
  if (Array.isArray(list))
    for (const n of list) if (n && typeof n.name === 'string') nodes.set(n.name, n as ReportNode);
  return nodes;
}

/** The bean's line in its file, from its verdict in the ghost report (written by the process that had the file). */
function withLine(f: Finding, verdict: Record<string, unknown> | undefined): Finding {
  if (f.source === undefined || verdict === undefined || verdict.source !== f.source) return f;
  const line = beanLine(verdict, f.source);
  return line !== undefined ? { ...f, line } : f;
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
  // A bean with no class file of the application's (a library's class it registers) stands at its registration.
  const registered = node?.registeredIn as { file?: unknown; line?: unknown } | undefined;
  const at = pick('source') === undefined && typeof registered?.file === 'string' ? registered : undefined;
  const named = pick('source') ?? (at?.file as string | undefined);
  const given = at !== undefined ? at.line : node?.line;
  const { source: original, line } =
    named !== undefined
      ? originalLocation(named, typeof given === 'number' ? given : undefined, className ?? bean)
      : { source: undefined, line: undefined };
  // (The file is parsed, not trusted: the rule compares its fields, and `at` says registeredIn is there.)
  const registration = at === undefined ? undefined : registrationOf(node as unknown as DiagReportNode);
  const neededOnlyBy = Array.isArray(node?.neededOnlyBy)
    ? node.neededOnlyBy.filter((n): n is string => typeof n === 'string')
    : undefined;
  return {
    bean,
    ...(module !== undefined ? { module } : {}),
    ...(className !== undefined ? { className } : {}),
    ...(original !== undefined ? { source: original } : {}),
    ...(line !== undefined ? { line } : {}),
    ...(registration !== undefined ? { registration } : {}),
    ...(neededOnlyBy !== undefined && neededOnlyBy.length > 0 ? { neededOnlyBy } : {}),
  };
}

/**
 * The file and line the user edits. A report names a compiled file (`dist/app.js:28`) when the application ran
 * without its TypeScript (a container holding `dist/` alone), or was written before the reports named the TypeScript
 * themselves (issue #43). When that file's map here names its one source (what tsc, SWC and esbuild write per file),
 * the source (`src/app.ts`), named as the reports name files, with the line the map gives, if the source's line
 * names `name` (the class, or the token a module registers): a map of another build than the one that ran would
 * point elsewhere. File and line go together: a source named without a line (`registered on the line shown`,
 * SARIF's region) read as the file of a trial's run without sources while its line was the compiled file's.
 */
export function originalLocation(
  source: string,
  line: number | undefined,
  name: string,
): { source: string; line: number | undefined } {
  const compiled = applicationFile(source);
  const original = singleOriginalOf(compiled);
  if (original === undefined) return { source, line };
  if (line === undefined) return { source: applicationPath(original), line: undefined };
  const at = sourceMapFor(compiled)?.originalLineStart(line);
  // (a map's sources are read resolved: an absolute path, as singleOriginalOf's answer is)
  if (at === undefined || at.source !== original) return { source, line };
  let text: string | undefined;
  try {
    text = fs.readFileSync(original, 'utf8').split('\n')[at.line - 1];
  } catch {
    text = undefined;
  }
  return text !== undefined && text.includes(name)
    ? { source: applicationPath(original), line: at.line }
    : { source, line };
}

/** The baseline's beans and members; a file that does not exist yet is an empty baseline. */
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
  const members = Array.isArray(baseline.members) ? baseline.members : [];
  return new Set([...baseline.beans, ...members].filter((b): b is string => typeof b === 'string'));
}

export function writeBaseline(file: string, kind: FindingKind, findings: readonly Finding[]): void {
  // Each finding under its own key: a shared method's other beans are not accepted for code of their own later.
  const keys = (list: readonly Finding[]) => [...new Set(list.map((f) => f.bean))].sort();
  const baseline: Baseline = {
    tool: 'diag-instrumentation',
    kind,
    beans: keys(findings.filter((f) => f.member === undefined)),
    // Members beside the beans, under their own name: a baseline a person reads says which is which.
    ...(kind in NEVER_CALLED ? { members: keys(findings.filter((f) => f.member !== undefined)) } : {}),
  };
  writeJsonAtomic(file, baseline);
}

/**
 * A SARIF message's words for a finding at a registration: the advice with a verdict; with one run's gate (no
 * verdict: nothing to remove yet) only where it stands.
 */
function atRegistration(kind: FindingKind, f: Finding): string {
  if (f.registration === undefined) return '';
  if (kind !== 'untouched-bean') return registrationWords(f);
  return `; registered ${f.line !== undefined ? 'on the line' : 'in the file'} shown${registrationNote(f)}`;
}

/**
 * The rule's short words for one finding: a ghost candidate only candidates inject is not one "nothing injects"
 * (a trial's SARIF said so of a Logger a candidate controller injects), and it goes with them.
 */
function findingShort(kind: FindingKind, f: Finding): string {
  const by = f.neededOnlyBy;
  if (kind !== 'ghost-candidate' || by === undefined || by.length === 0) return RULES[kind].short.toLowerCase();
  return `bean created at startup that only the ${by.length === 1 ? 'candidate' : 'candidates'} ${by.join(', ')} ${by.length === 1 ? 'injects' : 'inject'}`;
}

/** Whether the baseline holds `f`, under its key or, for code beans share, under another bean's (baselineKeys). */
export function inBaseline(known: ReadonlySet<string>, f: Finding): boolean {
  return f.member !== undefined ? baselineKeys(f.member).some((k) => known.has(k)) : known.has(f.bean);
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
          // A bean two modules share a token of is already named `Module/token`: its module is not said twice.
          const inModule = f.module !== undefined && f.module !== '' && !f.bean.startsWith(`${f.module}/`);
          const qualified = inModule ? `${f.module}/${f.bean}` : f.bean;
          const logical = { name: f.className ?? f.bean, fullyQualifiedName: qualified, kind: 'type' };
          return {
            ruleId: kind,
            ruleIndex: 0,
            level: 'warning',
            message: {
              text: `${f.bean}${inModule ? ` (${f.module})` : ''}: ${findingShort(kind, f)}${atRegistration(kind, f)}.`,
            },
            locations: [
              f.source
                ? {
                    physicalLocation: {
                      artifactLocation: { uri: f.source },
                      ...(f.line !== undefined ? { region: { startLine: f.line } } : {}),
                    },
                    logicalLocations: [logical],
                  }
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

/**
 * `sarif` with `notes` as its run's tool notifications (SARIF's `invocations[].toolExecutionNotifications`), so that
 * a code-scanning view shows what the run could not see beside its results.
 */
export function withNotes(sarif: object, notes: readonly string[] | undefined, successful = true): object {
  if (notes === undefined || notes.length === 0) return sarif;
  const run = (sarif as { runs: Array<Record<string, unknown>> }).runs[0]!;
  run.invocations = [
    {
      executionSuccessful: successful,
      toolExecutionNotifications: notes.map((text) => ({ level: 'warning', message: { text } })),
    },
  ];
  return sarif;
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
    const { kind, findings, unseen, trackedNothing, kept } = readFindings(o.report);
    // On stderr, so that SARIF on stdout stays whole (which carries them as notifications): a clean result over a
    // container never seen is no clean bill.
    for (const line of unseen ?? []) err(`diag-instrumentation check: note: ${line}\n`);
    // Nothing tracked at all because of it (a NestJS 9 app, on a trial): the gate has nothing to say, and says so.
    if (unseen !== undefined && trackedNothing === true)
      throw new CheckInputError(
        `${o.report} tracked nothing: every container this run loaded was left unpatched (see the note above), so there is no gate to pass`,
      );
    if (o.updateBaseline) {
      if (o.baseline === undefined)
        throw new CheckInputError(
          `--update-baseline needs --baseline <file> (for this report: --baseline ${DEFAULT_BASELINES[kind]})`,
        );
      writeBaseline(o.baseline, kind, findings);
      err(`baseline ${o.baseline} written: ${countFindings(findings, kind)}\n`);
      return EXIT.clean;
    }
    const known = readBaseline(o.baseline, kind);
    const fresh = findings.filter((f) => !inBaseline(known, f));
    const members = findings.filter((f) => f.member !== undefined);
    if (o.format === 'sarif') {
      const beans = toSarif(
        kind,
        findings.filter((f) => f.member === undefined),
        known,
        o.version,
      );
      const sarif =
        kind in NEVER_CALLED
          ? addMemberResults(
              beans,
              members.map((f) => f.member!),
              known,
              'run',
            )
          : beans;
      // Without the sources, no method says it stays: a code-scanning reader must know that was not looked at.
      const unread = contractsUnread(members.map((f) => f.member!));
      const notes = [...(unseen ?? []), ...(unread !== undefined ? [unread] : [])];
      out(`${JSON.stringify(withNotes(sarif, notes.length > 0 ? notes : undefined), null, 2)}\n`);
    } else if (fresh.length === 0) {
      const also = members.length > 0 ? `, methods or endpoints ${NEVER_CALLED[kind]}` : '';
      out(
        findings.length === 0
          ? `no ${RULES[kind].plural}${also} in the report\n`
          : `no new ${RULES[kind].plural}${also} (${findings.length} in the report, all in the baseline)\n`,
      );
    } else {
      out(
        o.baseline
          ? `${countFindings(fresh, kind, 'new ')} not in ${o.baseline}:\n`
          : `no baseline given: ${countFindings(fresh, kind)}:\n`,
      );
      if (kind === 'untouched-bean') {
        // This gate is on one run, and says so: one run is no verdict.
        const what = fresh.some((f) => f.member !== undefined)
          ? 'beans, methods and endpoints'
          : fresh.some((f) => f.neverResolved === true)
            ? 'beans and bindings'
            : 'beans';
        out(
          `(a gate on this run only: one run is no verdict, so these ${what} are not known to be dead; ` +
            'the ghost ledger gives never-touched, see npx diag-instrumentation ledger --help)\n',
        );
      }
      for (const f of fresh) {
        if (f.member !== undefined) {
          out(`  ${memberWords(f.member)}\n`);
          continue;
        }
        const file = f.source !== undefined && f.line !== undefined ? `${f.source}:${f.line}` : f.source;
        const at = file !== undefined && f.registration !== undefined ? `registered at ${file}` : file;
        const detail = [f.module, at].filter(Boolean).join(', ');
        // A bean only candidates inject goes with them: said with its registration's words, or on its own.
        const words =
          f.registration !== undefined
            ? kind === 'untouched-bean'
              ? registrationNote(f)
              : registrationWords(f)
            : f.neededOnlyBy !== undefined
              ? candidateWords(f.neededOnlyBy)
              : '';
        const unresolved = f.neverResolved === true ? ' — never resolved in this run' : '';
        out(`  ${f.bean}${detail ? ` (${detail})` : ''}${words}${unresolved}\n`);
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
      const act = RULES[kind].act(fresh.length === 1 ? 'it' : 'them');
      out(`${act}:\n    ${accept.map(shellQuote).join(' ')}\n`);
    }
    // A method finding's contract could not be read here: said, so that no contract words read as "none".
    const unread = o.format === 'text' && fresh.length > 0 ? contractsUnread(members.map((f) => f.member!)) : undefined;
    if (unread !== undefined) out(`(${unread})\n`);
    // Never called, yet no finding: what each keeps, so that a bean nobody called is never silently absent.
    if (o.format === 'text') for (const k of kept ?? []) out(`kept, no finding: ${k.bean} (${k.reason})\n`);
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
