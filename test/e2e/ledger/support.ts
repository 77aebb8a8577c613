/**
 * What the ledger's end-to-end tests share: the environment a replica of the ledger fixture (test/fixtures/apps/
 * ledger-app) is configured with, as a user would, and the `ledger` CLI run as a user runs it.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { tempDir } from '../support/app-process';

export const LEDGER_CLI = path.resolve(__dirname, '..', '..', '..', 'dist', 'ghost', 'cli', 'index.js');

/** A replica of service `shop` at `version`, writing to the ledger at `url` in rounds short enough for a test. */
export function ledgerAppEnv(url: string, version: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    LEDGER_APP_VERSION: version,
    OTEL_SERVICE_NAME: 'shop',
    OTEL_RESOURCE_ATTRIBUTES: `service.version=${version}`,
    DIAG_GHOST_TRACKING_ENABLED: 'true',
    DIAG_GHOST_TRACKING_LEDGER_URL: url,
    DIAG_GHOST_TRACKING_LEDGER_PUSH_INTERVAL_MS: '100',
    DIAG_GHOST_TRACKING_LEDGER_HEARTBEAT_INTERVAL_MS: '300',
    ...extra,
  };
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `diag-instrumentation ledger --service shop …` (or another service) with the URL in the environment (no password on the command line)
 * and no threshold of the test runner's environment: without flags it judges by the service's own.
 */
export function ledgerCli(
  url: string,
  args: readonly string[],
  cwd = tempDir('ledger-cli'),
  /** `--service`: one service, or several (`a,b`) for their joint view. */
  service = 'shop',
): CliRun {
  const env: NodeJS.ProcessEnv = { ...process.env, DIAG_GHOST_TRACKING_LEDGER_URL: url };
  for (const k of Object.keys(env)) if (/^DIAG_GHOST_TRACKING_LEDGER_MIN_/.test(k)) delete env[k];
  const run = spawnSync(process.execPath, [LEDGER_CLI, 'ledger', '--service', service, ...args], {
    cwd,
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}
