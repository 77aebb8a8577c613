import { parseRedisUrl, connectIORedis, RedisUrlError } from '../../shared/redis';
import { readLedger, LedgerReadError } from '../ledger/reader';
import { ledgerIdentity } from '../ledger';
import type { LedgerAnswer, LedgerBean } from '../ledger/answer';
import { span, hoursText, VERDICT_ORDER, type EvidenceThresholds, type Verdict } from '../verdicts';
import { jointText, jointView } from '../ledger/joint';
import { contractReader } from '../contracts';
import {
  addMemberResults,
  beanLine,
  memberContracts,
  memberFindingsWithContracts,
  membersText,
  contractsUnread,
  withMethodContracts,
  type MemberContract,
} from './members';
import {
  CheckInputError,
  countFindings,
  DEFAULT_BASELINES,
  EXIT,
  inBaseline,
  readBaseline,
  ledgerRegistration,
  registrationWords,
  shellQuote,
  toSarif,
  withNotes,
  writeBaseline,
  type Finding,
} from './check';

/**
 * `diag-instrumentation ledger`: the verdict table of a service from its ghost ledger, for people (text), scripts
 * (json: the contract of issue #36) and code-scanning UIs (sarif). Only reads: a read-only Redis user suffices.
 * Exit codes as `check`'s: 0 no never-touched bean outside the baseline, 1 some, 2 bad input, an unreadable
 * ledger, or a ledger nothing has written to (an empty ledger must not pass a gate as "nothing to delete").
 */

export interface LedgerCliOptions {
  readonly url?: string;
  readonly service?: string;
  readonly minDays?: number;
  readonly minProcessHours?: number;
  readonly minTrackedShare?: number;
  readonly format: 'text' | 'json' | 'sarif';
  readonly baseline?: string;
  readonly updateBaseline: boolean;
  /** Lists every in-use bean too (the text table summarises them by default). */
  readonly all: boolean;
  readonly version: string;
  readonly env?: NodeJS.ProcessEnv;
}

const KIND = 'never-touched-bean';

function number(raw: string | undefined, name: string, max = Infinity): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > max)
    throw new CheckInputError(
      `${name} must be a number ${max === 1 ? 'from 0 to 1' : '≥ 0 (fractions allowed)'}, got ${raw}`,
    );
  return n;
}

/**
 * The reader's overrides of the service's thresholds, and how each was given: a flag, else its environment
 * variable (the settings' own, so that a CI job sharing the application's environment judges as it does).
 */
function overrides(
  o: LedgerCliOptions,
  env: NodeJS.ProcessEnv,
): { values: Partial<EvidenceThresholds>; names: Partial<Record<keyof EvidenceThresholds, string>> } {
  const values: Record<string, number> = {};
  const names: Record<string, string> = {};
  const take = (
    key: keyof EvidenceThresholds,
    flag: string,
    given: number | undefined,
    variable: string,
    max?: number,
  ) => {
    const fromEnv = given === undefined ? number(env[variable], variable, max) : undefined;
    const value = given ?? fromEnv;
    if (value === undefined) return;
    values[key] = value;
    names[key] = given !== undefined ? `${flag} ${value}` : `${variable}=${value}`;
  };
  take('minDays', '--min-days', o.minDays, 'DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS');
  take('minProcessHours', '--min-process-hours', o.minProcessHours, 'DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS');
  take('minTrackedShare', '--min-tracked-share', o.minTrackedShare, 'DIAG_GHOST_TRACKING_LEDGER_MIN_TRACKED_SHARE', 1);
  return { values, names };
}

function ago(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} days`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const pct = (share: number) => `${Math.floor(share * 1000) / 10}%`;

/** The thresholds in words: `14 days, 168 process-hours and 100% of a bean's processes tracked`. */
function thresholdsText(t: Required<EvidenceThresholds>): string {
  return (
    `${span(t.minDays * 86_400_000)} of evidence, ${hoursText(t.minProcessHours)} and ${pct(t.minTrackedShare)} of a bean's processes tracked ` +
    `for never-touched; used within the last ${span(t.minDays * 86_400_000)} for in-use (last use known to ${span(t.lastUseResolutionMs)})`
  );
}

/** The table a person reads: provenance first (can this evidence be trusted?), then the verdicts. */
export function ledgerText(answer: LedgerAnswer, all: boolean): string {
  const p = answer.provenance;
  const t = answer.thresholds;
  const lines: string[] = [];
  // A silent service observed nothing since its last write: its evidence, and each bean's, ends there.
  const endsEarly = p.silent && p.lastWriteAgoMs !== null && p.lastWriteAgoMs > 0;
  const observed = p.since
    ? Date.parse(answer.generatedAt) - (endsEarly ? p.lastWriteAgoMs! : 0) - Date.parse(p.since)
    : 0;
  lines.push(`ghost ledger of ${answer.service}${p.ledger ? ` at ${p.ledger}` : ''}`);
  const untracked = p.processes - p.trackedProcesses;
  lines.push(
    `  observed since ${p.since ?? 'never'} (${span(observed)}${endsEarly ? ', to its last write' : ''}): ${plural(p.processes, 'process', 'processes')}` +
      `${untracked > 0 ? ` (${p.trackedProcesses} tracked, ${untracked} with Phase 2 off: their calls are not seen)` : ''}, ` +
      `${plural(p.versions, 'version')}; ${hoursText(p.processHours)} of tracking` +
      `${p.untrackedProcessHours > 0 ? ` and ${hoursText(p.untrackedProcessHours)} untracked` : ''}`,
  );
  lines.push(
    `  last write ${p.lastWriteAgoMs === null ? 'never' : `${ago(p.lastWriteAgoMs)} ago`} from ${plural(p.liveProcesses, 'live process', 'live processes')}`,
  );
  if (t.source === 'override') {
    lines.push(
      `  judged by ${t.overridden!.join(', ')} (given here, overriding the service's own): ${thresholdsText(t)}`,
      `  the service's own: ${thresholdsText(t.service!)}`,
    );
  } else {
    const whose =
      t.source === 'service'
        ? "the service's thresholds (the strictest its processes state)"
        : t.source === 'defaults'
          ? 'the default thresholds (no process of the service states its own)'
          : "this process's thresholds";
    lines.push(`  judged by ${whose}: ${thresholdsText(t)}`);
  }
  if (p.silent) {
    lines.push(
      `  WARNING: the service has gone silent (${p.liveProcesses === 0 ? 'no live process' : 'no recent write'}): ` +
        'the verdicts are those of its code as last seen running; is diag.ghost-tracking.ledger.url still set where it runs?',
    );
  }
  if (p.reset) lines.push(`  NOTE: the ledger was found emptied at ${p.resetAt}; its evidence starts over from then`);
  for (const verdict of VERDICT_ORDER) {
    const beans = answer.beans.filter((b) => b.verdict === verdict);
    if (beans.length === 0) continue;
    // A bean kept for a member keeps its verdict but is no finding: the heading counts it apart.
    const kept = beans.filter((b) => b.kept !== undefined).length;
    lines.push('', `${verdict} (${beans.length}${kept > 0 ? `, ${kept} kept` : ''})`);
    if (verdict === 'in-use' && !all) {
      lines.push(`  ${plural(beans.length, 'bean')} used within the window (--all lists them)`);
      continue;
    }
    for (const b of beans) lines.push(`  ${describeBean(b)}`, `      evidence: ${b.evidence}`);
  }
  return `${lines.join('\n')}\n`;
}

function describeBean(b: LedgerBean): string {
  const line = b.source !== undefined ? beanLine(b, b.source) : undefined;
  const at = line !== undefined ? `${b.source}:${line}` : b.source;
  // A bean standing at its registration says so: the line is its module's, not a class's.
  const where = [b.module, at !== undefined && b.registered ? `registered at ${at}` : at].filter(Boolean).join(', ');
  const touched = b.touchedIn && b.touchedIn.length > 0 ? `; used in ${b.touchedIn.join(', ')}` : '';
  // `why` already says what a ghost candidate adds (nothing injects it, or only the candidates that go with it).
  // (What only candidates inject goes with them: the verdict's own words say so, not repeated here.)
  // A bean holding a kept member is not to be removed: no advice how, and what is kept, why.
  if (b.kept !== undefined) return `${b.name}${where ? ` (${where})` : ''}: ${b.why}; kept: ${b.kept}`;
  const registration =
    b.verdict === 'never-touched'
      ? registrationWords({
          bean: b.name,
          registration: ledgerRegistration(b),
          className: b.className,
          module: b.module,
        })
      : '';
  return `${b.name}${where ? ` (${where})` : ''}: ${b.why}${registration}${b.verdict === 'in-use' || b.verdict === 'dormant' ? touched : ''}`;
}

/** Why the method findings carry no contract, when none could be read here (members.ts). */
function contractsUnreadOf(findings: readonly Finding[]): string | undefined {
  return contractsUnread(findings.flatMap((f) => (f.member !== undefined ? [f.member] : [])));
}

/** The members' contracts by `Bean#method`, for the text (membersText) and the JSON. */
function contractsOf(findings: readonly Finding[]): Map<string, MemberContract> {
  return memberContracts(findings.flatMap((f) => (f.member !== undefined ? [f.member] : [])));
}

/** The never-touched beans, methods and endpoints of `answer` not kept: what the gate and SARIF judge. */
function ledgerFindings(answer: LedgerAnswer): Finding[] {
  const findings: Finding[] = answer.beans
    .filter((b) => b.verdict === ('never-touched' satisfies Verdict) && b.kept === undefined)
    .map((b) => {
      const line = b.source !== undefined ? beanLine(b, b.source) : undefined;
      return {
        bean: b.name,
        ...(b.module !== undefined ? { module: b.module } : {}),
        ...(b.className !== undefined ? { className: b.className } : {}),
        ...(b.source !== undefined ? { source: b.source } : {}),
        ...(line !== undefined ? { line } : {}),
        ...(b.registered ? { registration: ledgerRegistration(b)! } : {}),
        ...(b.neededOnlyBy !== undefined && b.neededOnlyBy.length > 0 ? { neededOnlyBy: b.neededOnlyBy } : {}),
      };
    });
  // Never-touched methods and endpoints gate beside the beans, under their own keys (`Bean#method`, `http GET /x`).
  for (const f of memberFindingsWithContracts(answer, contractReader())) findings.push({ bean: f.key, member: f });
  return findings;
}

/** SARIF of the ledger's findings: the beans' results, then one per method and endpoint. */
function ledgerSarif(findings: readonly Finding[], known: ReadonlySet<string>, version: string): object {
  const sarif = toSarif(
    KIND,
    findings.filter((f) => f.member === undefined),
    known,
    version,
  );
  const members = findings.flatMap((f) => (f.member !== undefined ? [f.member] : []));
  return addMemberResults(sarif, members, known);
}

/**
 * What to do with new findings, in a person's words: delete them, except the beans that are only a registration (a
 * library's class the application lists, a value, a factory), whose registration goes instead.
 */
export function actOn(fresh: readonly Finding[], contractsUnread = false): string {
  // A method a contract declares goes with the contract's member, or stays while another implementation is called.
  const stays = (f: Finding) => (f.member?.contract?.calledIn?.length ?? 0) > 0;
  const stay = fresh.filter(stays).length;
  const go = fresh.filter((f) => f.member?.contract !== undefined && !stays(f)).length;
  const rest = fresh.filter((f) => !stays(f));
  // Contracts not read here (the note above says why): a method an interface declares may have to stay, which
  // only its TypeScript tells; a trial's reader of the closing line alone would have deleted WalletMapper.toDomain.
  const unchecked = contractsUnread && rest.some((f) => f.member !== undefined && f.member.endpoint === undefined);
  return [
    rest.length > 0 ? deleteWords(rest) : '',
    unchecked
      ? 'before deleting a method, look whether an interface or abstract class declares it (not read here)'
      : '',
    go > 0
      ? `for ${go === 1 ? 'the method' : `the ${go} methods`} a contract declares, remove ${go === 1 ? 'its' : 'their'} member there too`
      : '',
    stay > 0
      ? `${stay === 1 ? '1 method stays while its contract requires it (see its line)' : `${stay} methods stay while their contracts require them (see their lines)`}`
      : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/** Delete them, except the beans that are only a registration, whose registration goes instead. */
function deleteWords(fresh: readonly Finding[]): string {
  const registrations = fresh.filter((f) => f.registration === 'only').map((f) => f.bean);
  const them = fresh.length === 1 ? 'it' : 'them';
  if (registrations.length === 0) return `Delete ${them}`;
  if (registrations.length === fresh.length)
    return `Remove ${fresh.length === 1 ? 'its registration' : 'their registrations'}`;
  // (`Delete them; for Logger and MADE_HIDDEN, only their registrations`: a trial read the bracketed form twice.)
  const which =
    registrations.length === 1
      ? `for ${registrations[0]}, only its registration`
      : `for ${registrations.join(', ')}, only their registrations`;
  return `Delete ${them}; ${which}`;
}

/** Reads the ledger and prints it; returns the exit code. Never throws. */
export async function runLedger(
  o: LedgerCliOptions,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<number> {
  const env = o.env ?? process.env;
  let disconnect: (() => void) | undefined;
  try {
    const url = o.url ?? env.DIAG_GHOST_TRACKING_LEDGER_URL;
    if (url === undefined || url === '') {
      throw new CheckInputError('no ledger: give --url redis://… (or set DIAG_GHOST_TRACKING_LEDGER_URL)');
    }
    const service = o.service ?? ledgerIdentity(env.DIAG_GHOST_TRACKING_LEDGER_SERVICE, undefined, env).serviceName;
    if (service === undefined) {
      throw new CheckInputError(
        'no service: give --service <name> (or set DIAG_GHOST_TRACKING_LEDGER_SERVICE or OTEL_SERVICE_NAME)',
      );
    }
    const judge = overrides(o, env);
    const target = parseRedisUrl(url);
    const services = service
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (services.length > 1) {
      // --service a,b: the joint view of a repository's services (src/ghost/ledger/joint.ts)
      if (o.format === 'sarif') {
        throw new CheckInputError(
          'the joint view (--service a,b) has no SARIF: it says what to do per class across services; give one --service for SARIF, or --format json',
        );
      }
      const client = connectIORedis(target, 10_000, () => undefined);
      disconnect = () => client.disconnect();
      const answers = [];
      for (const name of services) {
        answers.push(
          await readLedger({
            client,
            service: name,
            overrides: judge.values,
            overrideNames: judge.names,
            address: target.address,
            redact: target.redact,
          }),
        );
      }
      const joint = jointView(answers);
      out(o.format === 'json' ? `${JSON.stringify(joint, null, 2)}\n` : jointText(joint));
      // As for one service: a gate must not pass, or fail as usual, on the code a silent service last ran.
      if (joint.silent !== undefined && joint.silent.length > 0) {
        throw new CheckInputError(
          `${joint.silent.join(', ')} ${joint.silent.length === 1 ? 'has' : 'have'} gone silent: the joint view is printed, ` +
            'but a gate needs every service writing to the ledger; check that they run with diag.ghost-tracking.ledger.url set',
        );
      }
      return joint.classes.some((c) => c.action !== 'keep') ? EXIT.findings : EXIT.clean;
    }
    // The socket's own error (ECONNREFUSED, WRONGPASS) says more than the client's "max retries" that follows it.
    let connectionError: Error | undefined;
    const client = connectIORedis(target, 10_000, (e) => (connectionError ??= e));
    disconnect = () => client.disconnect();
    const answer = await readLedger({
      client,
      service,
      overrides: judge.values,
      overrideNames: judge.names,
      address: target.address,
      redact: target.redact,
      connectionError: () => connectionError,
    });
    if (answer.provenance.silent && answer.provenance.since !== null) {
      // No live process: the verdicts are those of the code last seen running, and a gate must not pass on them.
      // The answer is printed as asked all the same (a script reads `provenance.silent`; SARIF says it in the run's
      // notifications), then exit 2.
      const silent =
        `the service ${service} has gone silent (${answer.provenance.liveProcesses === 0 ? 'no live process' : 'no recent write'}): ` +
        'silent is not deleted, and a gate needs processes writing to the ledger; check that they run with diag.ghost-tracking.ledger.url set';
      if (o.format === 'sarif') {
        const sarif = ledgerSarif(ledgerFindings(answer), readBaseline(o.baseline, KIND), o.version);
        // The command fails (exit 2): the run says so too, so that a code-scanning upload does not read it as clean.
        out(`${JSON.stringify(withNotes(sarif, [silent], false), null, 2)}\n`);
      } else {
        out(
          o.format === 'json'
            ? `${JSON.stringify(answer, null, 2)}\n`
            : ledgerText(answer, o.all) + membersText(answer, contractsOf(ledgerFindings(answer))),
        );
      }
      throw new CheckInputError(silent);
    }
    if (answer.provenance.since === null) {
      throw new CheckInputError(
        `nothing in the ghost ledger of ${service} at ${target.address}: no process has written to it ` +
          '(check that the app runs with diag.ghost-tracking.ledger.url set and names this service)',
      );
    }
    const findings = ledgerFindings(answer);
    if (o.updateBaseline) {
      if (o.baseline === undefined) {
        throw new CheckInputError(
          `--update-baseline needs --baseline <file> (for example --baseline ${DEFAULT_BASELINES[KIND]})`,
        );
      }
      writeBaseline(o.baseline, KIND, findings);
      err(`baseline ${o.baseline} written: ${countFindings(findings, KIND)}\n`);
      return EXIT.clean;
    }
    const known = readBaseline(o.baseline, KIND);
    const fresh = findings.filter((f) => !inBaseline(known, f));
    if (o.format === 'json') {
      // Without the sources no method carries a `contract`: a reader of the JSON is told why, as the text's reader is.
      const unread = contractsUnreadOf(findings);
      const json = withMethodContracts(answer, contractsOf(findings));
      out(`${JSON.stringify(unread === undefined ? json : { ...json, contractsUnread: unread }, null, 2)}\n`);
    } else if (o.format === 'sarif') {
      // Without the sources, no method says it stays: a code-scanning reader must know that was not looked at.
      const unread = contractsUnreadOf(findings);
      const sarif = ledgerSarif(findings, known, o.version);
      out(`${JSON.stringify(unread === undefined ? sarif : withNotes(sarif, [unread]), null, 2)}\n`);
    } else {
      const unread = contractsUnreadOf(findings);
      out(
        ledgerText(answer, o.all) +
          membersText(answer, contractsOf(findings)) +
          (unread !== undefined ? `\n(${unread})\n` : ''),
      );
      if (fresh.length > 0) {
        // The same judgement, accepted: the thresholds given are repeated, or the baseline would hold other beans.
        const accept = [
          'npx',
          'diag-instrumentation',
          'ledger',
          '--service',
          service,
          ...(o.minDays !== undefined ? ['--min-days', String(o.minDays)] : []),
          ...(o.minProcessHours !== undefined ? ['--min-process-hours', String(o.minProcessHours)] : []),
          ...(o.minTrackedShare !== undefined ? ['--min-tracked-share', String(o.minTrackedShare)] : []),
          '--baseline',
          o.baseline ?? DEFAULT_BASELINES[KIND],
          '--update-baseline',
        ];
        out(
          `\n${o.baseline ? `${countFindings(fresh, KIND, 'new ')} not in ${o.baseline}` : `No baseline given: ${countFindings(fresh, KIND)}`}. ` +
            `${actOn(fresh, unread !== undefined)}.\nOr accept ${fresh.length === 1 ? 'it' : 'them'} into the baseline ` +
            `(with the same --url or DIAG_GHOST_TRACKING_LEDGER_URL):\n    ${accept.map(shellQuote).join(' ')}\n`,
        );
      } else {
        // Said, as check says it: an exit 0 under findings listed above must not read as an oversight.
        out(
          findings.length === 0
            ? '\nNothing never-touched to act on.\n'
            : `\nNo new findings: ${countFindings(findings, KIND)}, all in ${o.baseline}.\n`,
        );
      }
    }
    return fresh.length === 0 ? EXIT.clean : EXIT.findings;
  } catch (error) {
    if (error instanceof CheckInputError || error instanceof LedgerReadError || error instanceof RedisUrlError) {
      err(`diag-instrumentation ledger: ${error.message}\n`);
      return EXIT.badInput;
    }
    if ((error as { code?: string }).code === 'MODULE_NOT_FOUND' && /ioredis/.test((error as Error).message)) {
      err('diag-instrumentation ledger: reading the ledger needs ioredis (npm install ioredis)\n');
      return EXIT.badInput;
    }
    err(`diag-instrumentation ledger: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT.badInput;
  } finally {
    disconnect?.();
  }
}
