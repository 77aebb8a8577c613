#!/usr/bin/env node
import { EXIT, runCheck } from './check';
import { runLedger } from './ledger';
import { packageVersionAt } from '../../patching/package-version';
import { PACKAGE_ROOT } from '../../shared/package-root';

const USAGE = `usage: diag-instrumentation check <diag-report.json|diag-ghost-report.json> [--baseline <file>]
                                   [--update-baseline] [--format text|sarif]
       diag-instrumentation ledger [--url redis://…] [--service <name>] [--min-days N] [--min-process-hours H]
                                   [--baseline <file>] [--update-baseline] [--format text|json|sarif] [--all]

check   fails (exit 1) when the report has ghost candidates (or untouched beans) the baseline does not list.
ledger  prints one verdict per bean of a service from its ghost ledger in Redis, never-touched first, with the
        evidence behind them; fails (exit 1) on a never-touched bean the baseline does not list. Only reads.
          --url       the ledger (default DIAG_GHOST_TRACKING_LEDGER_URL: keeps the password off the command line)
          --service   the service (default DIAG_GHOST_TRACKING_LEDGER_SERVICE, then OTEL_SERVICE_NAME); a,b for the
                      joint view of a repository's services: per class, remove the registration (never used in a,
                      used in b) or delete the class (never used anywhere)
          --min-days, --min-process-hours   the evidence a verdict needs (default 14 and 168; fractions allowed)
          --all       list the in-use beans too
  --baseline <file>    accepted findings; a file that does not exist yet counts as empty
  --update-baseline    write the current findings as the new baseline and exit 0
  --format sarif       print SARIF 2.1.0 on stdout, for code-scanning UIs; json (ledger): the full answer
Exit codes: 0 nothing new, 1 new findings, 2 bad input, usage, or a ledger that cannot be read or is empty.
`;

function version(): string {
  return packageVersionAt(PACKAGE_ROOT) ?? '0.0.0';
}

function ledgerCommand(rest: string[]): Promise<number> | number {
  const o: {
    url?: string;
    service?: string;
    minDays?: number;
    minProcessHours?: number;
    baseline?: string;
    format: 'text' | 'json' | 'sarif';
    updateBaseline: boolean;
    all: boolean;
  } = { format: 'text', updateBaseline: false, all: false };
  const value = (i: number, flag: string): string => {
    const v = rest[i];
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
    return v;
  };
  const num = (raw: string, flag: string): number => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${flag} must be a number ≥ 0 (fractions allowed), got ${raw}`);
    return n;
  };
  try {
    for (let i = 0; i < rest.length; i++) {
      const arg = rest[i]!;
      if (arg === '--url') o.url = value(++i, arg);
      else if (arg === '--service') o.service = value(++i, arg);
      else if (arg === '--min-days') o.minDays = num(value(++i, arg), arg);
      else if (arg === '--min-process-hours') o.minProcessHours = num(value(++i, arg), arg);
      else if (arg === '--baseline') o.baseline = value(++i, arg);
      else if (arg === '--update-baseline') o.updateBaseline = true;
      else if (arg === '--all') o.all = true;
      else if (arg === '--format') {
        const f = value(++i, arg);
        if (f !== 'text' && f !== 'json' && f !== 'sarif') throw new Error('--format must be text, json or sarif');
        o.format = f;
      } else throw new Error(`unexpected argument ${arg}`);
    }
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return EXIT.badInput;
  }
  return runLedger(
    { ...o, version: version() },
    (t) => process.stdout.write(t),
    (t) => process.stderr.write(t),
  );
}

function main(argv: string[]): Promise<number> | number {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(USAGE);
    return EXIT.clean;
  }
  if (command === 'ledger') return ledgerCommand(rest);
  if (command !== 'check') {
    process.stderr.write(command === undefined ? USAGE : `unknown command ${command}\n${USAGE}`);
    return EXIT.badInput;
  }
  let report: string | undefined;
  let baseline: string | undefined;
  let updateBaseline = false;
  let format: 'text' | 'sarif' = 'text';
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--baseline') baseline = rest[++i];
    else if (arg === '--update-baseline') updateBaseline = true;
    else if (arg === '--format') {
      const f = rest[++i];
      if (f !== 'text' && f !== 'sarif') {
        process.stderr.write(`--format must be text or sarif\n${USAGE}`);
        return EXIT.badInput;
      }
      format = f;
    } else if (!arg.startsWith('--') && report === undefined) report = arg;
    else {
      process.stderr.write(`unexpected argument ${arg}\n${USAGE}`);
      return EXIT.badInput;
    }
  }
  if (report === undefined || (rest.includes('--baseline') && baseline === undefined)) {
    process.stderr.write(USAGE);
    return EXIT.badInput;
  }
  return runCheck(
    { report, ...(baseline !== undefined ? { baseline } : {}), updateBaseline, format, version: version() },
    (t) => process.stdout.write(t),
    (t) => process.stderr.write(t),
  );
}

// `… | head`: the reader went away; what is left to print has no one to read it, which is no error of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

void Promise.resolve(main(process.argv.slice(2))).then((code) => {
  process.exitCode = code;
});
