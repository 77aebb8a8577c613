/**
 * The members below the beans in the `ledger` command's outputs (issue #43): never-called endpoints and each bean's
 * never-called methods for people, one SARIF result per never-touched method and endpoint, and the keys that put
 * them in the gate's baseline beside the beans. A member kept on purpose is shown with its reason, never a finding.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { endpointName, type EndpointRecord } from '../analysis/bean-graph';
import type { Contract } from '../contracts';
import type { LedgerAnswer } from '../ledger/answer';
import { codeSite, type MemberSource, type MethodContract, type MethodVerdict } from '../member-verdicts';

/**
 * A method or endpoint that is a finding: never-touched in the ledger (never called on any process, observed long
 * enough), or untouched in one run's ghost report (never called in this run: the `check` gate's, no verdict).
 */
export interface MemberFinding {
  readonly kind: 'never-touched-method' | 'never-touched-endpoint' | 'untouched-method' | 'untouched-endpoint';
  /**
   * Its key in a baseline, beside the beans': `Bean#method`, or `<kind> <route>` for an endpoint
   * (`<kind> <path> <route>` for a GraphQL field whose API is known: `graphql /shop-api Query.product`).
   */
  readonly key: string;
  readonly bean: string;
  readonly method: string;
  /** An endpoint's route as served, its kind (`http`, `graphql`, `event`…) and its GraphQL API's path. */
  readonly endpoint?: { readonly kind: string; readonly route: string; readonly path?: string };
  readonly source?: MemberSource;
  /**
   * A method whose code other beans share (an inherited method at one file and line) and never called through them
   * either: one finding for the code, under the first bean by name, naming the others (sameCodeOnce).
   */
  readonly alsoThrough?: readonly string[];
  /** A method a contract of its class declares (an interface it implements, an abstract method): see withContracts. */
  readonly contract?: MemberContract;
}

/** The contract a method finding fulfils, and the other beans whose implementation of the same member was called. */
export type MemberContract = MethodContract;

/** A method that was called, where it is: what tells a contract still needed from one nobody needs. */
export interface CalledMethod {
  readonly bean: string;
  readonly method: string;
  readonly source: MemberSource;
}

/**
 * The method findings with the contract that declares their method (`find`: src/ghost/contracts.ts, reading the
 * application's TypeScript where the CLI runs), and the beans whose own implementation of that member was called
 * (`called`): a never-called `toResponse` that `Mapper` requires goes with the interface's member, unless another
 * mapper's `toResponse` is called, when it stays while the interface requires it. Endpoints are left as they are.
 */
export function withContracts(
  findings: readonly MemberFinding[],
  called: readonly CalledMethod[],
  find: (source: MemberSource, method: string) => Contract | undefined,
): MemberFinding[] {
  const same = (a: Contract, b: Contract) => a.file === b.file && a.line === b.line;
  return findings.map((f) => {
    if (f.endpoint !== undefined || f.source === undefined) return f;
    const contract = find(f.source, f.method);
    if (contract === undefined) return f;
    const calledIn = [
      ...new Set(
        called
          .filter((c) => c.method === f.method && c.bean !== f.bean)
          .filter((c) => {
            const theirs = find(c.source, c.method);
            return theirs !== undefined && same(theirs, contract);
          })
          .map((c) => c.bean),
      ),
    ].sort();
    return { ...f, contract: calledIn.length > 0 ? { ...contract, calledIn } : contract };
  });
}

/** The methods `answer` saw called, where they are: what tells a contract still needed from one nobody needs. */
function calledMethodsOf(answer: LedgerAnswer): CalledMethod[] {
  const called: CalledMethod[] = [];
  for (const b of answer.beans)
    for (const m of b.methods ?? [])
      if ((m.verdict === 'in-use' || m.verdict === 'dormant') && m.source !== undefined)
        called.push({ bean: b.name, method: m.name, source: m.source });
  return called;
}

/**
 * The never-touched methods and endpoints of `answer` (memberFindings), each method with its contract (`find`, an
 * interface the class implements, read from the sources where it is asked) and whether another bean's
 * implementation of it was called.
 */
export function memberFindingsWithContracts(
  answer: LedgerAnswer,
  find: (source: MemberSource, method: string) => Contract | undefined,
): MemberFinding[] {
  return withContracts(memberFindings(answer), calledMethodsOf(answer), find);
}

/** The findings' contracts by `Bean#method`, on every bean whose row shares the method's code (sameCodeOnce). */
export function memberContracts(findings: readonly MemberFinding[]): Map<string, MemberContract> {
  const out = new Map<string, MemberContract>();
  for (const f of findings) {
    if (f.contract === undefined) continue;
    out.set(`${f.bean}#${f.method}`, f.contract);
    for (const other of f.alsoThrough ?? []) out.set(`${other}#${f.method}`, f.contract);
  }
  return out;
}

/**
 * The answer with each never-called method's contract (`methods[].contract`), as the CLI's text and SARIF say it:
 * a script deleting what the JSON lists, or a reader of the page, must know that `toResponse` goes with `Mapper`'s
 * member, or stays while another mapper's is called. The answer's own fields are unchanged.
 */
export function withMethodContracts(
  answer: LedgerAnswer,
  contracts: ReadonlyMap<string, MemberContract>,
): LedgerAnswer {
  if (contracts.size === 0) return answer;
  return {
    ...answer,
    beans: answer.beans.map((b) => {
      if (b.methods === undefined || !b.methods.some((m) => contracts.has(`${b.name}#${m.name}`))) return b;
      return {
        ...b,
        methods: b.methods.map((m) => {
          const contract = contracts.get(`${b.name}#${m.name}`);
          return contract === undefined ? m : { ...m, contract };
        }),
      };
    }),
  };
}

/**
 * Why the method findings carry no contract, when none could be read where this runs: their TypeScript files are not
 * here, or they are named in compiled files only (an application run without its TypeScript or its maps). Said by
 * `check`, `ledger` and the page alike, so that a method without contract words does not read as one without a
 * contract. Undefined when the sources were there to read.
 */
export function contractsUnread(findings: readonly MemberFinding[]): string | undefined {
  const located = findings.filter((f) => f.endpoint === undefined && f.source !== undefined);
  const files = [...new Set(located.map((f) => f.source!.file).filter((file) => /\.m?tsx?$/.test(file)))];
  if (files.length > 0 && !files.some((file) => fs.existsSync(path.resolve(file))))
    return `The methods' TypeScript files, such as ${files[0]}, are not under ${process.cwd()}: run from the application's repository, where its TypeScript is (npx diag-instrumentation ledger, or check on a run's report), to see which of them an interface or abstract class declares.`;
  if (files.length === 0 && located.length > 0 && located.every((f) => /\.[cm]?js$/.test(f.source!.file)))
    return `The methods are named in their compiled files, such as ${located[0]!.source!.file}: the application ran without its TypeScript or its source maps, so which interface or abstract class declares each was not read.`;
  return undefined;
}

/** What a contract means for a method finding, in a person's words (empty without one). */
export function contractWords(c: MemberContract | undefined): string {
  if (c === undefined) return '';
  const what = `${c.kind} ${c.name} (${c.file}:${c.line})`;
  if (c.calledIn === undefined || c.calledIn.length === 0) return `; declared by ${what}: remove it there too`;
  return `; declared by ${what}, which ${c.calledIn.join(', ')} also ${c.calledIn.length === 1 ? 'implements' : 'implement'}, called there: it stays while ${c.name} requires it`;
}

/**
 * Every never-touched method and endpoint of the answer that is not kept, endpoints first. A handler method is judged
 * as its endpoint, as the `check` gate does (runMemberFindings): a dead route is one finding under its route, not a
 * second under its method, and a route kept or unjudged (a yearly job) does not fail the gate through its method.
 * The methods of a bean never touched as a whole are left out, as the gate on one run leaves them: the bean is the
 * finding. Code several beans share is one finding (sameCodeOnce).
 */
export function memberFindings(answer: LedgerAnswer): MemberFinding[] {
  const out: MemberFinding[] = [];
  for (const e of answer.endpoints ?? []) {
    if (e.verdict !== 'never-touched' || e.kept !== undefined) continue;
    out.push(endpointFinding('never-touched-endpoint', e));
  }
  const handler = handlerOf(answer);
  const methods: MemberFinding[] = [];
  for (const b of answer.beans) {
    // (a bean kept for one of its members is no finding: its other never-called methods are, each)
    if (b.verdict === 'never-touched' && b.kept === undefined) continue;
    for (const m of b.methods ?? []) {
      if (m.verdict !== 'never-touched' || m.kept !== undefined || handler(b.name, m.name)) continue;
      if (m.calledThrough !== undefined) continue; // its shared code ran on another bean: nothing to delete
      methods.push(methodFinding('never-touched-method', b.name, m));
    }
  }
  return [...out, ...sameCodeOnce(methods)];
}

/**
 * One finding per piece of code: never-called methods of several beans at the same file, line and name (a base
 * class's method two repositories inherit, called through neither) are one, under the first bean by name, naming
 * the others (a trial on a real app read four code-scanning alerts and baseline keys for two lines). A method
 * without a line stands alone.
 */
export function sameCodeOnce(findings: readonly MemberFinding[]): MemberFinding[] {
  const first = new Map<string, MemberFinding>();
  const others = new Map<string, string[]>();
  const out: MemberFinding[] = [];
  const sorted = [...findings].sort((a, b) => (a.bean < b.bean ? -1 : a.bean > b.bean ? 1 : 0));
  for (const f of sorted) {
    const site = codeSite(f.method, f.source);
    const held = site === undefined ? undefined : first.get(site);
    if (held === undefined) {
      if (site !== undefined) first.set(site, f);
      out.push(f);
    } else others.set(site!, [...(others.get(site!) ?? []), f.bean]);
  }
  if (others.size === 0) return [...findings];
  const merged = new Map<MemberFinding, MemberFinding>();
  for (const [site, beans] of others) {
    const f = first.get(site)!;
    merged.set(f, { ...f, alsoThrough: beans });
  }
  // In the given order, the merged ones under their first bean.
  const kept = new Set(out);
  return findings.filter((f) => kept.has(f)).map((f) => merged.get(f) ?? f);
}

/**
 * The baseline keys a finding answers to: its own, and for one piece of code several beans share, each other bean's
 * (`Other#method`). The finding stands under the first bean by name, which changes when a bean that sorts earlier
 * comes to share the code: a baseline that accepted it under the old key must still hold it. (A baseline is written
 * with each finding's own key only: a bean that later has a method of its own under that name is a new finding.)
 */
export function baselineKeys(f: MemberFinding): string[] {
  return [f.key, ...(f.alsoThrough ?? []).map((bean) => `${bean}#${f.method}`)];
}

/** What one run's ghost report says of a member, as far as the gate reads it (the file is parsed, not trusted). */
interface ReportMember {
  readonly name?: unknown;
  readonly bean?: unknown;
  readonly method?: unknown;
  readonly kind?: unknown;
  readonly route?: unknown;
  readonly path?: unknown;
  readonly verdict?: unknown;
  readonly lastTouched?: unknown;
  readonly kept?: unknown;
  readonly why?: unknown;
  readonly source?: unknown;
  readonly calledThrough?: unknown;
}

/**
 * The methods and endpoints one run's ghost report (`diag-ghost-report.json`) shows never called in this run, for
 * the `check` gate, endpoints first: not kept, not unjudged on purpose (a job rarer than the evidence window, a
 * handler not tracked: `why` says so), not untrackable. The methods of a bean untouched as a whole are left out:
 * the bean is the finding, and its every method would repeat it; so is an endpoint's handler method, which its
 * endpoint speaks for (a route kept by its pattern, a yearly job, must not fail the gate through its method).
 */
export function runMemberFindings(
  report: Record<string, unknown>,
  untouchedBeans: ReadonlySet<string>,
): MemberFinding[] {
  const raw = (report.methods ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const calledInRun = (bean: string, method: string, m: ReportMember) =>
    m.lastTouched !== undefined || (raw[bean]?.[method] !== undefined && raw[bean]?.[method] !== null);
  const unjudged = (m: ReportMember) =>
    m.kept !== undefined ||
    m.calledThrough !== undefined ||
    m.why !== undefined ||
    (m.verdict !== 'never-touched' && m.verdict !== 'insufficient-evidence');
  const out: MemberFinding[] = [];
  const endpoints = asList<ReportMember>(report.endpoints);
  // A handler is judged as its endpoint: kept with its route, unjudged with its rare job, listed once by its route.
  const handlers = new Set(endpoints.map((e) => `${String(e.bean)}#${String(e.method)}`));
  for (const e of endpoints) {
    if (typeof e.bean !== 'string' || typeof e.method !== 'string') continue;
    if (typeof e.kind !== 'string' || typeof e.route !== 'string') continue;
    if (unjudged(e) || calledInRun(e.bean, e.method, e)) continue;
    const path = typeof e.path === 'string' ? { path: e.path } : {};
    out.push(
      endpointFinding('untouched-endpoint', {
        kind: e.kind,
        route: e.route,
        ...path,
        bean: e.bean,
        method: e.method,
        source: e.source,
      }),
    );
  }
  const methods: MemberFinding[] = [];
  for (const b of asList<{ name?: unknown; methods?: unknown; kept?: unknown }>(report.verdicts)) {
    // An untouched bean is the finding, not its methods, unless a kept member keeps it: then each of its others is.
    if (typeof b.name !== 'string' || (untouchedBeans.has(b.name) && b.kept === undefined)) continue;
    for (const m of asList<ReportMember>(b.methods)) {
      if (typeof m.name !== 'string' || handlers.has(`${b.name}#${m.name}`)) continue;
      if (unjudged(m) || calledInRun(b.name, m.name, m)) continue;
      methods.push(methodFinding('untouched-method', b.name, { name: m.name, source: m.source }));
    }
  }
  return [...out, ...sameCodeOnce(methods)];
}

/** Whether a bean's method handles one of the answer's endpoints (it is then spoken for by its endpoint). */
function handlerOf(answer: LedgerAnswer): (bean: string, method: string) => boolean {
  const handlers = new Set((answer.endpoints ?? []).map((e) => `${e.bean}#${e.method}`));
  return (bean, method) => handlers.has(`${bean}#${method}`);
}

function asList<T>(value: unknown): T[] {
  return Array.isArray(value) ? value.filter((v): v is T => v !== null && typeof v === 'object') : [];
}

/** A member's `source` as a report file has it, when it is one (the file is parsed, not trusted). */
export function sourceOf(value: unknown): MemberSource | undefined {
  const s = value as Partial<MemberSource> | undefined;
  return typeof s?.file === 'string' && typeof s.line === 'number' ? { file: s.file, line: s.line } : undefined;
}

function endpointFinding(
  kind: 'never-touched-endpoint' | 'untouched-endpoint',
  e: { kind: string; route: string; path?: string; bean: string; method: string; source?: unknown },
): MemberFinding {
  const source = sourceOf(e.source);
  const path = e.path !== undefined ? { path: e.path } : {};
  return {
    kind,
    key: endpointName({ kind: e.kind as EndpointRecord['kind'], route: e.route, ...path }),
    bean: e.bean,
    method: e.method,
    endpoint: { kind: e.kind, route: e.route, ...path },
    ...(source !== undefined ? { source } : {}),
  };
}

function methodFinding(
  kind: 'never-touched-method' | 'untouched-method',
  bean: string,
  m: { name: string; source?: unknown },
): MemberFinding {
  const source = sourceOf(m.source);
  return { kind, key: `${bean}#${m.name}`, bean, method: m.name, ...(source !== undefined ? { source } : {}) };
}

/**
 * A member finding in the gate's words: `method ItemsService.archive never called in this run (src/…:12)`,
 * `endpoint GET /items/export never called in this run → ItemsController.export (src/…:40)`; `in any process`
 * for the ledger's.
 */
export function memberWords(f: MemberFinding): string {
  const when = f.kind.startsWith('untouched') ? 'in this run' : 'in any process';
  const also = f.alsoThrough !== undefined ? `, nor through ${f.alsoThrough.join(', ')} (shared code)` : '';
  if (f.endpoint === undefined)
    return `method ${f.bean}.${f.method} never called ${when}${also}${at(f.source)}${contractWords(f.contract)}`;
  const route = f.endpoint.kind === 'http' ? f.endpoint.route : f.key;
  return `endpoint ${route} never called ${when} → ${f.bean}.${f.method}${at(f.source)}`;
}

const at = (s: MemberSource | undefined) => (s !== undefined ? ` (${s.file}:${s.line})` : '');

/**
 * The line that stands for a whole bean in `source` (an untouched bean, a never-touched one), for code scanning: its
 * class's declaration, else its first method's line in that file (a class the reader could not find by name).
 */
export function beanLine(
  bean: { readonly line?: unknown; readonly methods?: unknown },
  source: string,
): number | undefined {
  if (typeof bean.line === 'number' && bean.line > 0) return bean.line;
  const lines = asList<{ source?: unknown }>(bean.methods)
    .map((m) => sourceOf(m.source))
    .filter((s): s is MemberSource => s !== undefined && s.file === source)
    .map((s) => s.line);
  return lines.length > 0 ? Math.min(...lines) : undefined;
}

/**
 * The sections a person reads after the beans: endpoints nobody calls, then each bean's never-called methods, each
 * with what its contract means when `contracts` knows one (by `Bean#method`, from withContracts).
 */
export function membersText(answer: LedgerAnswer, contracts?: ReadonlyMap<string, MemberContract>): string {
  const lines: string[] = [];
  const endpoints = answer.endpoints ?? [];
  const never = endpoints.filter((e) => e.verdict === 'never-touched' && e.kept === undefined);
  const waiting = endpoints.filter((e) => e.verdict === 'insufficient-evidence' && e.kept === undefined);
  const kept = endpoints.filter((e) => e.kept !== undefined);
  // Said with why (not served, a handler not tracked): otherwise "1 of 10" leaves a reader counting the others.
  const untrackable = endpoints.filter((e) => e.verdict === 'untrackable' && e.kept === undefined);
  if (endpoints.length > 0) {
    lines.push('', `never-called endpoints (${never.length} of ${endpoints.length})`);
    for (const e of never) lines.push(`  ${endpointName(e)} → ${e.bean}.${e.method}${at(e.source)}`);
    for (const e of waiting)
      lines.push(`  not judged yet: ${endpointName(e)}${e.why !== undefined ? `: ${e.why}` : ''}`);
    // One line per reason: a controller's patterns an HTTP application does not serve share theirs.
    const byWhy = new Map<string, string[]>();
    for (const e of untrackable) byWhy.set(e.why ?? '', [...(byWhy.get(e.why ?? '') ?? []), endpointName(e)]);
    for (const [why, names] of byWhy)
      lines.push(`  untrackable (${names.length}): ${names.join(', ')}${why !== '' ? `: ${why}` : ''}`);
    for (const e of kept) lines.push(`  kept: ${endpointName(e)}: ${e.kept}`);
  }
  // A handler is read with its endpoint above, once, as the gates count it.
  // A bean never touched as a whole is its own finding: its methods would repeat it, as the gates leave them.
  const handler = handlerOf(answer);
  const beans = answer.beans
    .filter((b) => b.verdict !== 'never-touched' || b.kept !== undefined)
    .map((b) => ({ ...b, methods: (b.methods ?? []).filter((m) => !handler(b.name, m.name)) }))
    .filter((b) => b.methods.some((m) => m.verdict === 'never-touched' || m.kept));
  // Code several beans share, never called through any: said once, under the first bean (sameCodeOnce).
  const alsoThrough = new Map<string, readonly string[]>();
  const listedUnder = new Map<string, string>();
  for (const f of memberFindings(answer)) {
    if (f.alsoThrough === undefined) continue;
    alsoThrough.set(`${f.bean}#${f.method}`, f.alsoThrough);
    for (const other of f.alsoThrough) listedUnder.set(`${other}#${f.method}`, f.bean);
  }
  const deadLine = (bean: string, m: MethodVerdict) => {
    const under = listedUnder.get(`${bean}#${m.name}`);
    if (under !== undefined) return `    ${m.name}: the same code as ${under}.${m.name}, listed there`;
    const also = alsoThrough.get(`${bean}#${m.name}`);
    const shared = also !== undefined ? ` (shared code, never called through ${also.join(', ')} either)` : '';
    return `    ${m.name}${at(m.source)}${shared}${contractWords(contracts?.get(`${bean}#${m.name}`))}`;
  };
  if (beans.length > 0) {
    lines.push('', `never-called methods, per bean${endpoints.length > 0 ? ' (endpoint handlers above)' : ''}`);
    for (const b of beans) {
      const methods = b.methods;
      const found = (m: MethodVerdict) => m.kept === undefined && m.calledThrough === undefined;
      const dead = methods.filter((m) => m.verdict === 'never-touched' && found(m));
      // A bean named by its DI token (`WALLET_REPOSITORY`) says its class too: the methods are the class's.
      const cls = b.className !== undefined && b.className !== b.name ? `, class ${b.className}` : '';
      lines.push(`  ${b.name}${cls} (${b.verdict}): ${dead.length} of ${methods.length} methods never called`);
      for (const m of dead) lines.push(deadLine(b.name, m));
      for (const m of methods.filter((x) => x.kept === undefined && x.calledThrough !== undefined))
        lines.push(
          // `delete()`, named first: a method's name under a heading of dead code must not read as an order.
          `    ${m.name}() not called on this bean, but its shared code runs through ${m.calledThrough!.join(', ')}${at(m.source)}`,
        );
      for (const m of methods.filter((x) => x.kept !== undefined)) lines.push(`    kept: ${m.name}: ${m.kept}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

const MEMBER_RULES = {
  'never-touched-method': {
    name: 'NeverTouchedMethod',
    text: 'Method of a bean never called on any instance of its class, observed long enough for a verdict',
  },
  'never-touched-endpoint': {
    name: 'NeverTouchedEndpoint',
    text: 'Entry point (route, resolver, listener, job) whose handler was never called, observed long enough for a verdict',
  },
  'untouched-method': {
    name: 'UntouchedMethod',
    text: 'Method of a called bean never called during this run (one run is no verdict: the ledger gives never-touched)',
  },
  'untouched-endpoint': {
    name: 'UntouchedEndpoint',
    text: 'Entry point (route, resolver, listener, job) whose handler was never called during this run (one run is no verdict)',
  },
} as const;

/**
 * Adds the members' rules and one result per finding to a SARIF log made by `toSarif` (its first run), each at
 * its file and line so that code scanning annotates the method: the ledger's rules (never-touched), or one run's
 * (`run`: untouched, the `check` gate's).
 */
export function addMemberResults(
  sarif: object,
  findings: readonly MemberFinding[],
  known: ReadonlySet<string>,
  evidence: 'ledger' | 'run' = 'ledger',
): object {
  const run = (sarif as { runs: Array<{ tool: { driver: { rules: object[] } }; results: object[] }> }).runs[0]!;
  const first = run.tool.driver.rules.length;
  const ids: Array<keyof typeof MEMBER_RULES> =
    evidence === 'ledger'
      ? ['never-touched-method', 'never-touched-endpoint']
      : ['untouched-method', 'untouched-endpoint'];
  for (const id of ids) {
    run.tool.driver.rules.push({
      id,
      name: MEMBER_RULES[id].name,
      shortDescription: { text: MEMBER_RULES[id].text },
      defaultConfiguration: { level: 'warning' },
    });
  }
  for (const f of findings) {
    const logical = { name: f.method, fullyQualifiedName: `${f.bean}.${f.method}`, kind: 'function' };
    // A method another implementation of its contract still needs is said, not something to fix.
    const stays = f.contract?.calledIn !== undefined && f.contract.calledIn.length > 0;
    run.results.push({
      ruleId: f.kind,
      ruleIndex: first + ids.indexOf(f.kind),
      level: stays ? 'note' : 'warning',
      message: {
        text:
          `${f.key}: ${MEMBER_RULES[f.kind].text.toLowerCase()}` +
          (f.alsoThrough !== undefined
            ? `; shared code, never called through ${f.alsoThrough.join(', ')} either`
            : '') +
          `${contractWords(f.contract)}.`,
      },
      // Code scanning shows the contract's line beside the method's: where the rest of the change is.
      ...(f.contract !== undefined
        ? {
            relatedLocations: [
              {
                id: 1,
                physicalLocation: {
                  artifactLocation: { uri: f.contract.file },
                  region: { startLine: f.contract.line },
                },
                message: { text: `${f.contract.kind} ${f.contract.name}` },
              },
            ],
          }
        : {}),
      locations: [
        f.source !== undefined
          ? {
              physicalLocation: { artifactLocation: { uri: f.source.file }, region: { startLine: f.source.line } },
              logicalLocations: [logical],
            }
          : { logicalLocations: [logical] },
      ],
      partialFingerprints: { 'diagMember/v1': f.key },
      baselineState: baselineKeys(f).some((k) => known.has(k)) ? 'unchanged' : 'new',
    });
  }
  return sarif;
}
