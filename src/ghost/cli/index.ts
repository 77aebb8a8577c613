#!/usr/bin/env node
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT, runCheck } from './check';
import { runLedger } from './ledger';
import { packageVersionAt } from '../../patching/package-version';
import { PACKAGE_ROOT } from '../../shared/package-root';

const EXIT_CODES = `Exit codes: 0 nothing new; 1 new findings (not in the baseline); 2 bad input or usage`;

const CHECK_HELP = `usage: npx diag-instrumentation check <diag-report.json|diag-ghost-report.json> [--baseline <file>]
                                       [--update-baseline] [--format text|sarif]

Gates a build on one run's report, against a baseline of accepted findings:
  diag-report.json         Phase 1's ghost candidates (nothing injects them, no entry point explains them)
  diag-ghost-report.json   Phase 2's beans untouched in this run, a lazy container's bindings never resolved in
                           it, and at method depth the members: each method
                           of a called bean and each endpoint (route, resolver, listener, job) never called in
                           this run ("method ItemsService.archive never called in this run (src/…:12)"); kept
                           ones (@Kept, diag.ghost-tracking.kept) and jobs rarer than the evidence window are no
                           finding. A run is no verdict (one run is no verdict); the ghost
                           ledger's never-touched is (see ledger --help)

  --baseline <file>    accepted findings (beans, and members as Bean#method or "http GET /path"); a file that
                       does not exist yet counts as empty
  --update-baseline    write the current findings (beans and members) as the new baseline and exit 0
  --format sarif       print SARIF 2.1.0 on stdout, for code-scanning UIs (default text)
  --help, --version

Reads no environment variable.
${EXIT_CODES}, an unreadable or foreign report.
`;

const LEDGER_HELP = `usage: npx diag-instrumentation ledger [--url redis://…] [--service <name>] [--baseline <file>]
                                        [--update-baseline] [--format text|json|sarif] [--all]
                                        [--min-days N] [--min-process-hours H] [--min-tracked-share S]

Prints one verdict per bean of a service from its ghost ledger in Redis, most likely dead first, each with the
evidence it rests on; fails on a never-touched bean the baseline does not list. Only reads (+@read suffices).
The verdicts are judged by the service's own thresholds, as its processes state them in the ledger (the same
as {base}/diag/ledger, the page and the metrics); a threshold given here overrides it and the answer says so.

  --url <redis-url>           the ledger; default DIAG_GHOST_TRACKING_LEDGER_URL (keeps the password off the
                              command line)
  --service <name>            the service; default DIAG_GHOST_TRACKING_LEDGER_SERVICE, then OTEL_SERVICE_NAME,
                              then service.name in OTEL_RESOURCE_ATTRIBUTES; a,b for the joint view of a
                              repository's services: per class, remove the registration (never used in a, used
                              in b) or delete the class (never used anywhere)
  --min-days N                override: days a never-called bean must have existed, and the window a used one must
                              have been used within (env DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS)
  --min-process-hours H       override: process-hours of tracking (env DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS)
  --min-tracked-share S       override: share (0 to 1) of a bean's processes that tracked it
                              (env DIAG_GHOST_TRACKING_LEDGER_MIN_TRACKED_SHARE)
  --baseline <file>           accepted never-touched beans; a file that does not exist yet counts as empty
  --update-baseline           write the current never-touched beans as the new baseline and exit 0
  --format json|sarif         json: the full answer (as {base}/diag/ledger); sarif: SARIF 2.1.0 (default text)
  --all                       list the in-use beans too
  --help, --version

Environment: DIAG_GHOST_TRACKING_LEDGER_URL, DIAG_GHOST_TRACKING_LEDGER_SERVICE, OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES, DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS, DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS,
DIAG_GHOST_TRACKING_LEDGER_MIN_TRACKED_SHARE.
${EXIT_CODES}, a ledger that cannot be read, one nothing has written to, or a service gone
silent (no live process or no recent write): an abandoned ledger must not pass a gate as "nothing to delete".
`;

const USAGE = `usage: npx diag-instrumentation <command> [options]

Commands:
  check    gate a build on one run's report (diag-report.json, diag-ghost-report.json)
  ledger   the verdicts of a service from its ghost ledger in Redis, every replica, restart and deploy

npx diag-instrumentation <command> --help prints a command's options, environment variables and exit codes.
--version prints the package's version.
`;

function version(): string {
  return packageVersionAt(PACKAGE_ROOT) ?? '0.0.0';
}

/** A problem with the command line: the message, then where to read more. */
class UsageError extends Error {}

/** A number ≥ 0 (fractions allowed), at most `max`. */
function number(raw: string | undefined, flag: string, max = Infinity): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > max) {
    throw new UsageError(
      `${flag} must be a number ${max === 1 ? 'from 0 to 1' : '≥ 0 (fractions allowed)'}, got ${raw}`,
    );
  }
  return n;
}

function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>, positionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals: positionals, strict: true });
  } catch (err) {
    // node:util's own words ("Unknown option '--x'", "Option '--url <value>' argument missing") are clear.
    throw new UsageError((err as Error).message);
  }
}

function ledgerCommand(rest: string[]): Promise<number> | number {
  const { values } = parse(rest, {
    url: { type: 'string' },
    service: { type: 'string' },
    'min-days': { type: 'string' },
    'min-process-hours': { type: 'string' },
    'min-tracked-share': { type: 'string' },
    baseline: { type: 'string' },
    'update-baseline': { type: 'boolean' },
    format: { type: 'string' },
    all: { type: 'boolean' },
  });
  const format = (values.format as string | undefined) ?? 'text';
  if (format !== 'text' && format !== 'json' && format !== 'sarif') {
    throw new UsageError('--format must be text, json or sarif');
  }
  const minDays = number(values['min-days'] as string | undefined, '--min-days');
  const minProcessHours = number(values['min-process-hours'] as string | undefined, '--min-process-hours');
  const minTrackedShare = number(values['min-tracked-share'] as string | undefined, '--min-tracked-share', 1);
  return runLedger(
    {
      ...(values.url !== undefined ? { url: values.url as string } : {}),
      ...(values.service !== undefined ? { service: values.service as string } : {}),
      ...(minDays !== undefined ? { minDays } : {}),
      ...(minProcessHours !== undefined ? { minProcessHours } : {}),
      ...(minTrackedShare !== undefined ? { minTrackedShare } : {}),
      ...(values.baseline !== undefined ? { baseline: values.baseline as string } : {}),
      format,
      updateBaseline: values['update-baseline'] === true,
      all: values.all === true,
      version: version(),
    },
    (t) => process.stdout.write(t),
    (t) => process.stderr.write(t),
  );
}

function checkCommand(rest: string[]): number {
  const { values, positionals } = parse(
    rest,
    { baseline: { type: 'string' }, 'update-baseline': { type: 'boolean' }, format: { type: 'string' } },
    true,
  );
  const format = (values.format as string | undefined) ?? 'text';
  if (format !== 'text' && format !== 'sarif') throw new UsageError('--format must be text or sarif');
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0 ? 'check needs a report file' : `unexpected argument ${positionals[1]}`,
    );
  }
  return runCheck(
    {
      report: positionals[0]!,
      ...(values.baseline !== undefined ? { baseline: values.baseline as string } : {}),
      updateBaseline: values['update-baseline'] === true,
      format,
      version: version(),
    },
    (t) => process.stdout.write(t),
    (t) => process.stderr.write(t),
  );
}

const HELP: Record<string, string> = { check: CHECK_HELP, ledger: LEDGER_HELP };

function main(argv: string[]): Promise<number> | number {
  const [command, ...rest] = argv;
  // Help and version go to standard output and exit 0, whatever else the line holds.
  if (argv.includes('--version') || argv.includes('-v')) {
    process.stdout.write(`${version()}\n`);
    return EXIT.clean;
  }
  if (argv.includes('--help') || argv.includes('-h') || command === 'help') {
    const about = command === 'help' ? rest[0] : command;
    process.stdout.write(HELP[about ?? ''] ?? USAGE);
    return EXIT.clean;
  }
  if (command === undefined || HELP[command] === undefined) {
    process.stderr.write(command === undefined ? USAGE : `unknown command ${command}\n${USAGE}`);
    return EXIT.badInput;
  }
  try {
    return command === 'ledger' ? ledgerCommand(rest) : checkCommand(rest);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(
      `diag-instrumentation ${command}: ${error.message}\n(npx diag-instrumentation ${command} --help lists the options)\n`,
    );
    return EXIT.badInput;
  }
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
