import { parseRedisUrl, connectIORedis, RedisUrlError } from '../../shared/redis';
import { readLedger, LedgerReadError } from '../ledger/reader';
import { ledgerIdentity } from '../ledger';
import type { LedgerAnswer, LedgerBean } from '../ledger/answer';
import { VERDICT_ORDER, type Verdict } from '../verdicts';
import { addMemberResults, memberFindings, membersText } from './members';
import {
  CheckInputError,
  count,
  DEFAULT_BASELINES,
  EXIT,
  readBaseline,
  shellQuote,
  toSarif,
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
  readonly format: 'text' | 'json' | 'sarif';
  readonly baseline?: string;
  readonly updateBaseline: boolean;
  /** Lists every in-use bean too (the text table summarises them by default). */
  readonly all: boolean;
  readonly version: string;
  readonly env?: NodeJS.ProcessEnv;
}

const KIND = 'never-touched-bean';

function number(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new CheckInputError(`${name} must be a number ≥ 0 (fractions allowed), got ${raw}`);
  return n;
}

function ago(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} days`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The table a person reads: provenance first (can this evidence be trusted?), then the verdicts. */
export function ledgerText(answer: LedgerAnswer, all: boolean): string {
  const p = answer.provenance;
  const lines: string[] = [];
  const days = p.since ? (Date.parse(answer.generatedAt) - Date.parse(p.since)) / 86_400_000 : 0;
  lines.push(`ghost ledger of ${answer.service}${p.ledger ? ` at ${p.ledger}` : ''}`);
  lines.push(
    `  observed since ${p.since ?? 'never'} (${days.toFixed(days < 1 ? 2 : 1)} days): ${plural(p.processes, 'process', 'processes')}, ` +
      `${plural(p.versions, 'version')}, ${p.processHours} process-hours of tracking`,
  );
  lines.push(
    `  last write ${p.lastWriteAgoMs === null ? 'never' : `${ago(p.lastWriteAgoMs)} ago`} from ${plural(p.liveProcesses, 'live process', 'live processes')}`,
  );
  lines.push(
    `  a verdict needs ${answer.thresholds.minDays} days and ${answer.thresholds.minProcessHours} process-hours`,
  );
  if (p.silent) {
    lines.push(
      `  WARNING: the service has gone silent (${p.liveProcesses === 0 ? 'no live process' : 'no recent write'}): ` +
        'is diag.ghost-tracking.ledger.url still set where it runs? Beans of versions no process runs read as retired.',
    );
  }
  if (p.reset) lines.push(`  NOTE: the ledger was found emptied at ${p.resetAt}; its evidence starts over from then`);
  for (const verdict of VERDICT_ORDER) {
    const beans = answer.beans.filter((b) => b.verdict === verdict);
    if (beans.length === 0) continue;
    lines.push('', `${verdict} (${beans.length})`);
    if (verdict === 'in-use' && !all) {
      lines.push(`  ${plural(beans.length, 'bean')} called in production (--all lists them)`);
      continue;
    }
    for (const b of beans) lines.push(`  ${describeBean(b)}`);
  }
  return `${lines.join('\n')}\n`;
}

function describeBean(b: LedgerBean): string {
  const where = [b.module, b.source].filter(Boolean).join(', ');
  const strongest =
    b.verdict === 'never-touched' && b.ghostCandidate ? ' [also a ghost candidate: strongest signal]' : '';
  const needs =
    b.needs !== undefined
      ? ` (needs ${[b.needs.days > 0 ? `${b.needs.days} more days` : '', b.needs.processHours > 0 ? `${b.needs.processHours} more process-hours` : ''].filter(Boolean).join(' and ')})`
      : '';
  const touched =
    b.verdict === 'in-use' && b.lastTouched
      ? `: last first touch ${b.lastTouched}${b.lastTouchedBy ? ` by a process of version ${b.lastTouchedBy.version} started ${b.lastTouchedBy.processStartedAt}` : ''}` +
        (b.touchedIn && b.touchedIn.length > 0 ? `; touched in ${b.touchedIn.join(', ')}` : '')
      : b.verdict === 'in-use'
        ? ''
        : // The header gives the thresholds; what is missing follows in `needs`.
          `: ${b.verdict === 'insufficient-evidence' && b.needs ? b.why.replace(/, a verdict needs .*$/, '') : b.why}`;
  return `${b.name}${where ? ` (${where})` : ''}${strongest}${touched}${needs}`;
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
      throw new CheckInputError('no service: give --service <name> (or set OTEL_SERVICE_NAME)');
    }
    const thresholds = {
      minDays: o.minDays ?? number(env.DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS, 'DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS', 14),
      minProcessHours:
        o.minProcessHours ??
        number(env.DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS, 'DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS', 168),
    };
    const target = parseRedisUrl(url);
    // The socket's own error (ECONNREFUSED, WRONGPASS) says more than the client's "max retries" that follows it.
    let connectionError: Error | undefined;
    const client = connectIORedis(target, 10_000, (e) => (connectionError ??= e));
    disconnect = () => client.disconnect();
    const answer = await readLedger({
      client,
      service,
      thresholds,
      address: target.address,
      redact: target.redact,
    }).catch((e: unknown) => {
      throw connectionError && e instanceof LedgerReadError
        ? new LedgerReadError(
            `could not read the ghost ledger of ${service} at ${target.address}: ${target.redact(connectionError.message)}`,
          )
        : e;
    });
    if (answer.provenance.silent && answer.provenance.since !== null) {
      // No live process: every bean would read retired, and a gate would pass with nothing judged.
      out(ledgerText(answer, o.all));
      throw new CheckInputError(
        `the service ${service} has gone silent (${answer.provenance.liveProcesses === 0 ? 'no live process' : 'no recent write'}): ` +
          'a verdict needs processes writing to the ledger; check that they run with diag.ghost-tracking.ledger.url set',
      );
    }
    if (answer.provenance.since === null) {
      throw new CheckInputError(
        `nothing in the ghost ledger of ${service} at ${target.address}: no process has written to it ` +
          '(check that the app runs with diag.ghost-tracking.ledger.url set and names this service)',
      );
    }
    const findings: Finding[] = answer.beans
      .filter((b) => b.verdict === ('never-touched' satisfies Verdict))
      .map((b) => ({
        bean: b.name,
        ...(b.module !== undefined ? { module: b.module } : {}),
        ...(b.className !== undefined ? { className: b.className } : {}),
        ...(b.source !== undefined ? { source: b.source } : {}),
      }));
    // Never-touched methods and endpoints gate beside the beans, under their own keys (`Bean#method`, `http GET /x`).
    const memberFound = memberFindings(answer);
    const members = new Set(memberFound.map((f) => f.key));
    for (const f of memberFound) findings.push({ bean: f.key });
    if (o.updateBaseline) {
      if (o.baseline === undefined) {
        throw new CheckInputError(
          `--update-baseline needs --baseline <file> (for example --baseline ${DEFAULT_BASELINES[KIND]})`,
        );
      }
      writeBaseline(o.baseline, KIND, findings);
      err(`baseline ${o.baseline} written: ${count(findings.length, KIND)}\n`);
      return EXIT.clean;
    }
    const known = readBaseline(o.baseline, KIND);
    const fresh = findings.filter((f) => !known.has(f.bean));
    if (o.format === 'json') out(`${JSON.stringify(answer, null, 2)}\n`);
    else if (o.format === 'sarif') {
      const sarif = toSarif(
        KIND,
        findings.filter((f) => !members.has(f.bean)),
        known,
        o.version,
      );
      out(`${JSON.stringify(addMemberResults(sarif, memberFound, known), null, 2)}\n`);
    } else {
      out(ledgerText(answer, o.all) + membersText(answer));
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
          '--baseline',
          o.baseline ?? DEFAULT_BASELINES[KIND],
          '--update-baseline',
        ];
        out(
          `\n${count(fresh.length, KIND, 'new ')} ${o.baseline ? `not in ${o.baseline}` : 'and no baseline given'}. ` +
            `Delete ${fresh.length === 1 ? 'it' : 'them'}, or accept ${fresh.length === 1 ? 'it' : 'them'} into the baseline ` +
            `(with the same --url or DIAG_GHOST_TRACKING_LEDGER_URL):\n    ${accept.map(shellQuote).join(' ')}\n`,
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
