#!/usr/bin/env node
import { EXIT, runCheck } from './check';
import { packageVersionAt } from '../../patching/package-version';
import { PACKAGE_ROOT } from '../../shared/package-root';

const USAGE = `usage: diag-instrumentation check <diag-report.json|diag-ghost-report.json> [--baseline <file>]
                                   [--update-baseline] [--format text|sarif]

Fails (exit 1) when the report has ghost candidates (or untouched beans) the baseline does not list.
  --baseline <file>    accepted findings; a file that does not exist yet counts as empty
  --update-baseline    write the report's findings as the new baseline and exit 0
  --format sarif       print SARIF 2.1.0 on stdout, for code-scanning UIs
Exit codes: 0 nothing new, 1 new findings, 2 bad input or usage.
`;

function version(): string {
  return packageVersionAt(PACKAGE_ROOT) ?? '0.0.0';
}

function main(argv: string[]): number {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return EXIT.clean;
  }
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

process.exitCode = main(process.argv.slice(2));
