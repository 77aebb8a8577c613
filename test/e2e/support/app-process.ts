import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { trackChild } from '../../support/children';
import { tempDir } from '../../support/temp';

/** The loading cases the package supports, each a real `node` process as a user would start it. */
export type LoadingCase = 'nest10-cjs' | 'nest11-cjs' | 'nest12-esm' | 'nest12-cjs';

/**
 * A matrix cell (scripts/matrix.js) runs these same suites against an installed tarball, another NestJS,
 * OpenTelemetry and Node version: it names its cases, its folder and its node binary in the environment.
 */
const MATRIX_DIR = process.env.DIAG_MATRIX_DIR;
const NODE_BIN = process.env.DIAG_MATRIX_NODE || process.execPath;

export const LOADING_CASES: readonly LoadingCase[] = process.env.DIAG_MATRIX_CASES
  ? (process.env.DIAG_MATRIX_CASES.split(',') as LoadingCase[])
  : ['nest11-cjs', 'nest12-esm', 'nest12-cjs'];

const FIXTURES = path.resolve(__dirname, '..', '..', 'fixtures');

/**
 * Where the compiled fixture app lives and how node must be started for it. `preload` names another file of
 * test/fixtures/telemetry than the default telemetry.cjs / telemetry.mjs.
 */
export function launchSpec(
  loading: LoadingCase,
  app = 'ghost-app',
  preload?: string,
  root?: string,
): { node: string; cwd: string; args: string[] } {
  const [nest, format] = loading.split('-') as [string, 'cjs' | 'esm'];
  const appRoot = root !== undefined ? path.join(FIXTURES, root) : (MATRIX_DIR ?? path.join(FIXTURES, nest));
  const preloads = MATRIX_DIR ?? path.join(FIXTURES, 'telemetry');
  const cwd = path.join(appRoot, `out-${format}`, app);
  const flag = format === 'esm' ? '--import' : '--require';
  const file = preload ?? (format === 'esm' ? 'telemetry.mjs' : 'telemetry.cjs');
  return { node: NODE_BIN, cwd, args: [flag, path.join(preloads, file), 'main.js'] };
}

export interface RunningApp {
  readonly proc: ChildProcess;
  readonly port: number;
  readonly reportDir: string;
  /** The working directory it was started in (a report names files relative to it). */
  readonly cwd: string;
  stdout(): string;
  stderr(): string;
  /** Sends `signal` and resolves with the exit code once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Reads a JSON file from the report directory. */
  readReport<T = any>(file?: string): T;
}

/** Environment every fixture process gets: no exporter tries to reach a collector that is not there. */
/**
 * Phase 2 with the actuator on a free port, and one run taken as enough evidence, so that a member never called
 * in the run reads never-touched rather than insufficient-evidence.
 */
export const TRACKED_ONE_RUN_ENV: Readonly<Record<string, string>> = {
  DIAG_GHOST_TRACKING_ENABLED: 'true',
  DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS: '0',
  DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS: '0',
  MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag',
  MANAGEMENT_SERVER_PORT: '0',
};

export function quietOtelEnv(): NodeJS.ProcessEnv {
  return {
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
    OTEL_SDK_DISABLED: undefined,
  };
}

export { tempDir };

/**
 * Runs a one-off script in `cwd` (to completion, 30 s at most) and returns the JSON it printed after `RESULT `,
 * with its stderr. Throws, with what the process printed, when there is no such line.
 */
export function scriptResult<T = unknown>(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): { result: T; stderr: string } {
  const run = spawnSync(NODE_BIN, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
  const line = run.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (line === undefined) throw new Error(`no RESULT line (exit ${run.status}):\n${run.stdout}\n${run.stderr}`);
  return { result: JSON.parse(line.slice('RESULT '.length)) as T, stderr: run.stderr };
}

export interface StartOptions {
  readonly app?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Start without the instrumentation (no preload), for side-by-side comparisons. */
  readonly bare?: boolean;
  readonly reportDir?: string;
  readonly timeoutMs?: number;
  /** Resolve when this line prefix appears instead of `LISTENING `. */
  readonly readyLine?: string;
  /** Another preload of test/fixtures/telemetry (see launchSpec). */
  readonly preload?: string;
  /**
   * A folder of test/fixtures holding the compiled app (`out-<format>/<app>`) instead of the loading case's
   * NestJS folder: `inversify6`, whose own node_modules hold InversifyJS 6.
   */
  readonly root?: string;
}

/** Polls `check` every 50 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The `startup` section of the app's diag-report.json, once published (100 ms after ready, docs/startup.md). */
export async function publishedStartup(app: RunningApp, timeoutMs = 10_000): Promise<any> {
  let startup: any;
  await waitFor(async () => {
    startup = fs.existsSync(path.join(app.reportDir, 'diag-report.json')) ? app.readReport().startup : undefined;
    return startup !== undefined;
  }, timeoutMs);
  return startup;
}

async function waitForFile(file: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

/** Starts a fixture app and waits for `LISTENING <port>`; rejects with its output if it exits or times out. */
export async function startApp(loading: LoadingCase, options: StartOptions = {}): Promise<RunningApp> {
  return startSpec(launchSpec(loading, options.app, options.preload, options.root), loading, options);
}

/**
 * Starts `node <args>` in `cwd` as {@link startApp} does a fixture app (an app built by the test itself, say), with
 * `args` beginning with the preload flag and file, as {@link launchSpec} gives them.
 */
export async function startSpec(
  spec: { node: string; cwd: string; args: string[] },
  label: string,
  options: StartOptions = {},
): Promise<RunningApp> {
  const loading = label;
  const reportDir = options.reportDir ?? tempDir('report');
  const args = options.bare ? spec.args.slice(2) : spec.args;
  const proc = trackChild(
    spawn(spec.node, args, {
      cwd: spec.cwd,
      env: { ...process.env, ...quietOtelEnv(), DIAG_REPORT_DIR: reportDir, DIAG_LOG_LEVEL: 'info', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const readyLine = options.readyLine ?? 'LISTENING ';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${loading} app did not start in time\nstdout:\n${out}\nstderr:\n${err}`));
    }, options.timeoutMs ?? 30_000);
    const check = (): void => {
      const line = out.split('\n').find((l) => l.startsWith(readyLine));
      if (line) {
        clearTimeout(timer);
        resolve(Number(line.slice(readyLine.length).trim()) || 0);
      }
    };
    proc.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${loading} app exited with ${code} before it was ready\nstdout:\n${out}\nstderr:\n${err}`));
    });
  });
  // The start-up analysis runs just after bootstrap, off the application's path; by the time a test asks,
  // it has usually written its report. Wait for it briefly (an app started bare, or one whose analysis is off
  // or failed on purpose, never writes one: the test's own assertions say what it expects).
  if (!options.bare) await waitForFile(path.join(reportDir, 'diag-report.json'), 3_000);
  return {
    proc,
    port,
    reportDir,
    cwd: spec.cwd,
    stdout: () => out,
    stderr: () => err,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    readReport(file = 'diag-report.json') {
      return JSON.parse(fs.readFileSync(path.join(reportDir, file), 'utf8'));
    },
  };
}

/** Runs a fixture app to completion (for apps that are expected to exit) and returns its output. */
export async function runToExit(
  loading: LoadingCase,
  options: StartOptions = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; reportDir: string }> {
  const spec = launchSpec(loading, options.app, options.preload, options.root);
  const reportDir = options.reportDir ?? tempDir('report');
  const args = options.bare ? spec.args.slice(2) : spec.args;
  const proc = trackChild(
    spawn(spec.node, args, {
      cwd: spec.cwd,
      env: { ...process.env, ...quietOtelEnv(), DIAG_REPORT_DIR: reportDir, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 30_000);
  const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, signal: proc.signalCode, stdout, stderr, reportDir };
}

/** The side actuator's port, from the line the package logs once it listens (start with MANAGEMENT_SERVER_PORT=0). */
export function actuatorPort(app: RunningApp): number {
  const m = app.stdout().match(/actuator listening on http:\/\/127\.0\.0\.1:(\d+)\/actuator/);
  if (!m) throw new Error(`no actuator line in:\n${app.stdout()}\n${app.stderr()}`);
  return Number(m[1]);
}

export async function getJson(port: number, urlPath: string): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${urlPath}`);
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}
