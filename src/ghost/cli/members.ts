/**
 * The members below the beans in the `ledger` command's outputs (issue #43): never-called endpoints and each bean's
 * never-called methods for people, one SARIF result per never-touched method and endpoint, and the keys that put
 * them in the gate's baseline beside the beans. A member kept on purpose is shown with its reason, never a finding.
 */
import type { LedgerAnswer } from '../ledger/answer';
import type { MemberSource } from '../member-verdicts';

/** A never-touched method or endpoint that is not kept. */
export interface MemberFinding {
  readonly kind: 'never-touched-method' | 'never-touched-endpoint';
  /** Its key in a baseline, beside the beans': `Bean#method`, or `<kind> <route>` for an endpoint. */
  readonly key: string;
  readonly bean: string;
  readonly method: string;
  readonly source?: MemberSource;
}

/** Every never-touched method and endpoint of the answer that is not kept, endpoints first. */
export function memberFindings(answer: LedgerAnswer): MemberFinding[] {
  const out: MemberFinding[] = [];
  for (const e of answer.endpoints ?? []) {
    if (e.verdict !== 'never-touched' || e.kept !== undefined) continue;
    out.push({
      kind: 'never-touched-endpoint',
      key: `${e.kind} ${e.route}`,
      bean: e.bean,
      method: e.method,
      ...(e.source !== undefined ? { source: e.source } : {}),
    });
  }
  for (const b of answer.beans) {
    for (const m of b.methods ?? []) {
      if (m.verdict !== 'never-touched' || m.kept !== undefined) continue;
      out.push({
        kind: 'never-touched-method',
        key: `${b.name}#${m.name}`,
        bean: b.name,
        method: m.name,
        ...(m.source !== undefined ? { source: m.source } : {}),
      });
    }
  }
  return out;
}

const at = (s: MemberSource | undefined) => (s !== undefined ? ` (${s.file}:${s.line})` : '');

/** The sections a person reads after the beans: endpoints nobody calls, then each bean's never-called methods. */
export function membersText(answer: LedgerAnswer): string {
  const lines: string[] = [];
  const endpoints = answer.endpoints ?? [];
  const never = endpoints.filter((e) => e.verdict === 'never-touched' && e.kept === undefined);
  const waiting = endpoints.filter((e) => e.verdict === 'insufficient-evidence' && e.kept === undefined);
  const kept = endpoints.filter((e) => e.kept !== undefined);
  if (endpoints.length > 0) {
    lines.push('', `never-called endpoints (${never.length} of ${endpoints.length})`);
    for (const e of never) lines.push(`  ${e.kind} ${e.route} → ${e.bean}.${e.method}${at(e.source)}`);
    for (const e of waiting)
      lines.push(`  not judged yet: ${e.kind} ${e.route}${e.why !== undefined ? `: ${e.why}` : ''}`);
    for (const e of kept) lines.push(`  kept: ${e.kind} ${e.route}: ${e.kept}`);
  }
  const beans = answer.beans.filter((b) => (b.methods ?? []).some((m) => m.verdict === 'never-touched' || m.kept));
  if (beans.length > 0) {
    lines.push('', 'never-called methods, per bean');
    for (const b of beans) {
      const methods = b.methods!;
      const dead = methods.filter((m) => m.verdict === 'never-touched' && m.kept === undefined);
      lines.push(`  ${b.name} (${b.verdict}): ${dead.length} of ${methods.length} methods never called`);
      for (const m of dead) lines.push(`    ${m.name}${at(m.source)}`);
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
} as const;

/**
 * Adds the members' rules and one result per finding to a SARIF log made by `toSarif` (its first run), each at
 * its file and line so that code scanning annotates the method.
 */
export function addMemberResults(
  sarif: object,
  findings: readonly MemberFinding[],
  known: ReadonlySet<string>,
): object {
  const run = (sarif as { runs: Array<{ tool: { driver: { rules: object[] } }; results: object[] }> }).runs[0]!;
  const first = run.tool.driver.rules.length;
  const ids = Object.keys(MEMBER_RULES) as Array<keyof typeof MEMBER_RULES>;
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
    run.results.push({
      ruleId: f.kind,
      ruleIndex: first + ids.indexOf(f.kind),
      level: 'warning',
      message: { text: `${f.key}: ${MEMBER_RULES[f.kind].text.toLowerCase()}.` },
      locations: [
        f.source !== undefined
          ? {
              physicalLocation: { artifactLocation: { uri: f.source.file }, region: { startLine: f.source.line } },
              logicalLocations: [logical],
            }
          : { logicalLocations: [logical] },
      ],
      partialFingerprints: { 'diagMember/v1': f.key },
      baselineState: known.has(f.key) ? 'unchanged' : 'new',
    });
  }
  return sarif;
}
