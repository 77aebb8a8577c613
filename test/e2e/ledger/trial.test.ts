/**
 * The ledger tried as a tech lead would (issue #45), on a real Redis with real NestJS processes and thresholds
 * shortened so that a "week" fits into seconds: a tracked and an untracked replica, a bean called only on the
 * untracked one, the CLI and the actuator judging by the service's own thresholds, a long-running replica whose
 * one early touch must not keep a bean in use, Redis restarted empty, a deploy, and every replica stopped.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeWithService } from '../../support/services';
import { freePort } from '../../support/ports';
import { RedisServer, sleep, until } from '../fleet/harness';
import { actuatorPort, getJson, startApp, tempDir, type RunningApp } from '../support/app-process';
import { ledgerAppEnv } from './support';

const CLI = path.resolve(__dirname, '..', '..', '..', 'dist', 'ghost', 'cli', 'index.js');
/** The service's window: a bean unused for this long (plus one resolution period) is dormant. */
const WINDOW_MS = 6_000;
const RESOLUTION_MS = 1_000;

interface Bean {
  name: string;
  verdict: string;
  why: string;
  evidence: string;
  lastTouched?: string;
  processes?: { total: number; tracked: number };
}
interface Answer {
  thresholds: { minDays: number; minTrackedShare: number; lastUseResolutionMs: number; source: string };
  provenance: {
    processes: number;
    trackedProcesses: number;
    liveProcesses: number;
    untrackedProcessHours: number;
    reset: boolean;
    silent: boolean;
  };
  counts: Record<string, number>;
  beans: Bean[];
}

function appEnv(url: string, version: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return ledgerAppEnv(url, version, {
    // The service's thresholds, as its processes state them: no reader is told them.
    DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS: String(WINDOW_MS / 86_400_000),
    DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS: '0',
    DIAG_GHOST_TRACKING_LAST_USE_RESOLUTION_MS: String(RESOLUTION_MS),
    DIAG_REPORT_FLUSH_INTERVAL_MS: '500',
    ...extra,
  });
}

function cli(url: string, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, DIAG_GHOST_TRACKING_LEDGER_URL: url };
  for (const k of Object.keys(env)) if (/^DIAG_GHOST_TRACKING_LEDGER_MIN_/.test(k)) delete env[k];
  const run = spawnSync(process.execPath, [CLI, 'ledger', '--service', 'shop', ...args], {
    cwd: tempDir('ledger-trial'),
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The CLI's JSON answer (exit 2 on a silent service still prints nothing in JSON: undefined then). */
function answer(url: string, args: string[] = []): Answer | undefined {
  const run = cli(url, ['--format', 'json', ...args]);
  try {
    return JSON.parse(run.stdout) as Answer;
  } catch {
    return undefined;
  }
}

const bean = (a: Answer | undefined, name: string) => a?.beans.find((b) => b.name === name);

describeWithService('redis', 'the ledger tried end to end (issue #45)', (bin) => {
  const apps: RunningApp[] = [];
  const servers: RedisServer[] = [];

  async function redisOn(port?: number): Promise<RedisServer> {
    const server = new RedisServer(bin, port ?? (await freePort()), 'trial-pw', []);
    servers.push(server);
    await server.start();
    return server;
  }

  async function app(env: NodeJS.ProcessEnv): Promise<RunningApp> {
    const started = await startApp('nest11-cjs', { app: 'ledger-app', env });
    apps.push(started);
    return started;
  }

  afterEach(async () => {
    for (const a of apps.splice(0)) await a.stop('SIGKILL');
    for (const s of servers.splice(0)) await s.stop();
  });

  it('mixed replicas, the service’s thresholds everywhere, dormant code, Redis emptied, a deploy, all stopped', async () => {
    const redis = await redisOn();
    const tracked = await app(
      appEnv(redis.url, 'v1', { MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag', MANAGEMENT_SERVER_PORT: '0' }),
    );
    // The README's old first block: Phase 2 off in production. Its calls are invisible.
    const untracked = await app(appEnv(redis.url, 'v1', { DIAG_GHOST_TRACKING_ENABLED: 'false' }));
    // One early touch of OrderService on the long-running tracked replica, then never again.
    expect((await getJson(tracked.port, '/orders')).status).toBe(200);
    // A rarely used route, called only where nothing tracks.
    for (let i = 0; i < 3; i++) expect((await getJson(untracked.port, '/reports')).status).toBe(200);

    // 1. Past the window, the never-called-as-far-as-seen bean is not never-touched: half the service was not seen.
    await sleep(WINDOW_MS + 500);
    const mixed = await until('both replicas in the ledger, past the window', 10_000, async () => {
      const now = answer(redis.url);
      return now?.provenance.liveProcesses === 2 ? now : undefined;
    });
    expect(mixed.provenance).toMatchObject({ processes: 2, trackedProcesses: 1 });
    expect(mixed.provenance.untrackedProcessHours).toBeGreaterThan(0);
    const reports = bean(mixed, 'ReportService')!;
    expect(reports.verdict).toBe('insufficient-evidence');
    expect(reports.why).toContain('1 of 2 processes');
    expect(reports.why).not.toMatch(/any instance/);
    expect(reports.processes).toEqual({ total: 2, tracked: 1 });
    expect(reports.evidence).toMatch(/1 of 2 processes tracked \(50%\) of version v1/);
    expect(mixed.counts['never-touched']).toBe(0);

    // 2. One set of thresholds: the CLI without flags judges by the service's, and so does the actuator.
    expect(mixed.thresholds).toMatchObject({
      source: 'service',
      minDays: WINDOW_MS / 86_400_000,
      minTrackedShare: 1,
      lastUseResolutionMs: RESOLUTION_MS,
    });
    const served = await until('the actuator’s answer', 10_000, async () => {
      const r = await getJson(actuatorPort(tracked), '/actuator/diag/ledger');
      return r.status === 200 ? (r.body as Answer) : undefined;
    });
    expect(served.thresholds).toEqual(mixed.thresholds);
    const verdictsOf = (a: Answer) => Object.fromEntries(a.beans.map((b) => [b.name, b.verdict]));
    expect(verdictsOf(served)).toEqual(verdictsOf(answer(redis.url)!));

    // 3. Last use: OrderService was touched once, at the start of a replica that lives on; past the window (and one
    // period) it is dormant, with when and in which version. With the share overridden, which the answer says.
    const dormant = await until('OrderService dormant', 10_000, async () => {
      const now = answer(redis.url, ['--min-tracked-share', '0.5']);
      return bean(now, 'OrderService')?.verdict === 'dormant' ? now : undefined;
    });
    expect(dormant.thresholds.source).toBe('override');
    // At the share the reader settles for, what was not seen is said with the verdict.
    expect(bean(dormant, 'ReportService')!.why).toContain('calls on the 1 untracked process are not seen');
    expect(bean(dormant, 'OrderService')!.why).toMatch(
      /^used before, not within the last 6 seconds: last used \d+ seconds ago \(.*\) in version v1/,
    );
    const text = cli(redis.url, ['--min-tracked-share', '0.5']);
    expect(text.stdout).toMatch(/judged by --min-tracked-share 0\.5 \(given here, overriding the service's own\)/);
    // a use in this period is seen again: the replica re-armed its wrappers
    expect((await getJson(tracked.port, '/orders')).status).toBe(200);
    await until('OrderService in use again', 10_000, async () =>
      bean(answer(redis.url, ['--min-tracked-share', '0.5']), 'OrderService')?.verdict === 'in-use' ? true : undefined,
    );

    // 4. The periodic ghost report keeps its observed time current though nothing was touched since.
    const reportFile = path.join(tracked.reportDir, 'diag-ghost-report.json');
    const first = await until('the ghost report', 10_000, async () =>
      fs.existsSync(reportFile) ? JSON.parse(fs.readFileSync(reportFile, 'utf8')).updatedAt : undefined,
    );
    await until('the ghost report rewritten with nothing touched', 10_000, async () =>
      JSON.parse(fs.readFileSync(reportFile, 'utf8')).updatedAt !== first ? true : undefined,
    );

    // 5. Redis away: the actuator says so in one clear line naming the server, not the client's retry internals.
    const port = redis.port;
    await redis.stop();
    servers.splice(servers.indexOf(redis), 1);
    const refused = await until('the actuator’s 503', 20_000, async () => {
      const r = await getJson(actuatorPort(tracked), '/actuator/diag/ledger');
      return r.status === 503 ? r : undefined;
    });
    expect(refused.body.message).toMatch(
      /could not read the ghost ledger of shop: Redis at redis:\/\/127\.0\.0\.1:\d+ /,
    );
    expect(refused.body.message).not.toMatch(/maxRetriesPerRequest|max retries/);
    expect(refused.text).not.toContain('trial-pw');

    // Redis restarted empty: reset, and nothing never-touched on evidence that was lost.
    const fresh = await redisOn(port);
    const reset = await until('the reset marked', 15_000, async () => {
      const now = answer(fresh.url, ['--min-tracked-share', '0.5']);
      return now?.provenance.reset && now.provenance.liveProcesses === 2 ? now : undefined;
    });
    expect(reset.counts['never-touched']).toBe(0);

    // 6. A deploy: a tracked v2 replica comes, the v1 ones go; v1's LegacyExportService retires.
    const v2 = await app(appEnv(fresh.url, 'v2'));
    expect((await getJson(v2.port, '/orders')).status).toBe(200);
    await tracked.stop('SIGTERM');
    await untracked.stop('SIGTERM');
    const deployed = await until('only v2 live', 15_000, async () => {
      const now = answer(fresh.url);
      return now?.provenance.liveProcesses === 1 && bean(now, 'LegacyExportService')?.verdict === 'retired'
        ? now
        : undefined;
    });
    expect(bean(deployed, 'OrderService')!.verdict).toBe('in-use');

    // 7. Every replica stopped: the gate fails (2) on a silent service, and silent is not deleted.
    await sleep(2_000); // v2 seen running well after the v1 replicas ended: its code is the service's last
    await v2.stop('SIGTERM');
    const silent = await until('the service silent', 10_000, async () => {
      const run = cli(fresh.url, []);
      return run.code === 2 && /gone silent/.test(run.stderr) ? run : undefined;
    });
    expect(silent.stdout).toMatch(/WARNING: the service has gone silent \(no live process\)/);
    const retired = silent.stdout.slice(silent.stdout.indexOf('retired ('));
    expect(retired).toMatch(/^retired \(1\)\n {2}LegacyExportService/);
    expect(silent.stdout).toMatch(/^in-use \(\d+\)/m);
    expect(silent.stdout).toMatch(/AuditTrailService/);
  }, 150_000);
});
