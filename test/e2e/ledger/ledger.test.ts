/**
 * The ghost ledger on a real Redis (issue #36): Debian's redis-server with a password on a free loopback port, and
 * the ledger fixture (test/fixtures/apps/ledger-app, a NestJS app in two versions) started as several processes
 * configured only through the environment, as a user would. Replicas' touches meet, a restart keeps the history,
 * a rolling deploy gives `retired`, `insufficient-evidence` and `never-touched`; Redis paused, killed and
 * restarted empty, absent at start, or given the wrong password never changes the app's answers and loses no
 * touch; the password never shows in anything printed.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { describeWithService } from '../../support/services';
import { freePort } from '../../support/ports';
import { RedisServer, sleep, until } from '../fleet/harness';
import { actuatorPort, getJson, launchSpec, startApp, tempDir, type RunningApp } from '../support/app-process';
import { ledgerAppEnv } from './support';

const PASSWORD = 'ledger-s3cret-pw';
const CLI = path.resolve(__dirname, '..', '..', '..', 'dist', 'ghost', 'cli', 'index.js');
const HEARTBEAT_MS = 300;

interface LedgerBean {
  name: string;
  verdict: string;
  ghostCandidate: boolean;
  module?: string;
  source?: string;
  lastTouched?: string;
  touchedIn?: string[];
  needs?: { days: number; processHours: number };
}
interface Answer {
  service: string;
  provenance: {
    source: string;
    since: string | null;
    processes: number;
    liveProcesses: number;
    processHours: number;
    versions: number;
    lastWriteAgoMs: number | null;
    reset: boolean;
    silent: boolean;
    versionDetails: { version: string; firstSeen: string; liveProcesses: number }[];
  };
  counts: Record<string, number>;
  beans: LedgerBean[];
}

/** The actuator on a free port, for `{base}/diag/ledger` and the page. */
const ACTUATOR = { MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag', MANAGEMENT_SERVER_PORT: '0' } as const;

function appEnv(url: string, version: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return ledgerAppEnv(url, version, {
    DIAG_GHOST_TRACKING_LEDGER_HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS),
    ...extra,
  });
}

/** The `ledger` CLI as a user runs it (the URL from the environment: no password on the command line). */
function cli(
  url: string,
  args: string[],
  cwd = tempDir('ledger-cli'),
): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [CLI, 'ledger', '--service', 'shop', ...args], {
    cwd,
    env: { ...process.env, DIAG_GHOST_TRACKING_LEDGER_URL: url },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

function answer(url: string, args: string[] = []): Answer {
  const run = cli(url, ['--format', 'json', '--min-days', '0', '--min-process-hours', '0', ...args]);
  if (run.code === 2) throw new Error(`ledger CLI failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Answer;
}

/** The answer, or undefined while the ledger is empty or Redis away (for polling). */
function answerSoon(url: string, args: string[] = []): Answer | undefined {
  try {
    return answer(url, args);
  } catch {
    return undefined;
  }
}

const bean = (a: Answer | undefined, name: string) => a?.beans.find((b) => b.name === name);

/** What an app printed, both streams: INFO goes to stdout, WARN to stderr. */
const logs = (a: RunningApp) => a.stdout() + a.stderr();

describeWithService('redis', 'the ghost ledger on a real Redis', (bin) => {
  const apps: RunningApp[] = [];
  const servers: RedisServer[] = [];
  let printed = '';

  async function redisOn(port?: number, args: string[] = []): Promise<RedisServer> {
    const server = new RedisServer(bin, port ?? (await freePort()), PASSWORD, args);
    servers.push(server);
    await server.start();
    return server;
  }

  async function app(env: NodeJS.ProcessEnv): Promise<RunningApp> {
    const started = await startApp('nest11-cjs', { app: 'ledger-app', env });
    apps.push(started);
    return started;
  }

  async function stop(a: RunningApp, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await a.stop(signal);
    printed += a.stdout() + a.stderr();
  }

  afterEach(async () => {
    for (const a of apps.splice(0)) await stop(a, 'SIGKILL');
    for (const s of servers.splice(0)) {
      printed += s.output();
      await s.stop();
    }
  });

  afterAll(() => {
    // Everything the apps and the CLI printed over the whole file: the password never once.
    expect(printed).not.toContain(PASSWORD);
  });

  it('replicas meet, a restart keeps the history, and a rolling deploy from v1 to v2 gives every verdict', async () => {
    const redis = await redisOn();
    const [a, b] = await Promise.all([app(appEnv(redis.url, 'v1')), app(appEnv(redis.url, 'v1'))]);
    expect((await getJson(a!.port, '/orders')).status).toBe(200);
    expect((await getJson(b!.port, '/reports')).status).toBe(200);
    // Touches from two replicas meet in one answer.
    const met = await until('both replicas’ touches in the ledger', 10_000, async () => {
      const now = answerSoon(redis.url);
      return now &&
        bean(now, 'OrderService')?.verdict === 'in-use' &&
        bean(now, 'ReportService')?.verdict === 'in-use' &&
        now.provenance.liveProcesses === 2
        ? now
        : undefined;
    });
    expect(met.service).toBe('shop');
    expect(met.provenance).toMatchObject({ source: 'redis', processes: 2, versions: 1, reset: false, silent: false });
    expect(bean(met, 'OrderService')).toMatchObject({ module: 'LedgerAppModule', touchedIn: ['v1'] });
    expect(bean(met, 'OrderService')!.source).toBe('beans.js');
    const firstWrite =
      /INFO ghost ledger: this process's first write for service shop \(version v1, Phase 2 on\) to redis:\/\/127\.0\.0\.1:\d+/;
    await until('the first write said', 5_000, async () => (firstWrite.test(logs(a!)) ? true : undefined));

    // A restart: the replica that touched OrderService goes, a new one comes; the history stays.
    await stop(a!);
    const a2 = await app(appEnv(redis.url, 'v1'));
    const restarted = await until('the restarted replica live', 10_000, async () => {
      const now = answerSoon(redis.url);
      return now?.provenance.liveProcesses === 2 && now.provenance.processes === 3 ? now : undefined;
    });
    expect(bean(restarted, 'OrderService')!.verdict).toBe('in-use');

    // The rolling deploy: two v2 replicas come, the v1 ones go. v2 deletes LegacyExportService and adds
    // RecommendationService; AuditTrailService stays, never called.
    await sleep(6_000); // v1's beans older than v2's by a margin the thresholds below rely on
    const c = await app(appEnv(redis.url, 'v2'));
    await app(appEnv(redis.url, 'v2'));
    expect((await getJson(c.port, '/orders')).status).toBe(200);
    await stop(a2);
    await stop(b!);
    const deployed = await until('only v2 live, its touch in', 10_000, async () => {
      const now = answerSoon(redis.url);
      if (!now) return undefined;
      const v2 = now.provenance.versionDetails.find((v) => v.version === 'v2');
      return now.provenance.liveProcesses === 2 &&
        v2?.liveProcesses === 2 &&
        bean(now, 'OrderService')?.touchedIn?.length === 2
        ? now
        : undefined;
    });
    // Thresholds between the two versions' ages: AuditTrailService (there since v1) has been observed long
    // enough, RecommendationService (since v2) has not.
    const ageOf = (v: string) =>
      Date.now() - Date.parse(deployed.provenance.versionDetails.find((d) => d.version === v)!.firstSeen);
    // Just under v1's age: AuditTrailService stays over it from here on, and RecommendationService stays under it
    // for as long as v2 is younger than that (the deploy waited 6 s for v2, so a slow machine's CLI calls have room).
    const minDays = (ageOf('v1') - 500) / 86_400_000;
    expect(ageOf('v2')).toBeLessThan(ageOf('v1') - 5_000);
    const judged = answer(redis.url, ['--min-days', String(minDays)]);
    expect(bean(judged, 'LegacyExportService')).toMatchObject({ verdict: 'retired' });
    expect(bean(judged, 'RecommendationService')).toMatchObject({ verdict: 'insufficient-evidence' });
    expect(bean(judged, 'RecommendationService')!.needs!.days).toBeGreaterThan(0);
    expect(bean(judged, 'AuditTrailService')).toMatchObject({ verdict: 'never-touched', ghostCandidate: true });
    expect(bean(judged, 'OrderService')).toMatchObject({
      verdict: 'in-use',
      touchedIn: expect.arrayContaining(['v1', 'v2']),
    });
    expect(bean(judged, 'ReportService')).toMatchObject({ verdict: 'in-use', touchedIn: ['v1'] });
    // Most likely dead first.
    expect(judged.beans[0]!.name).toBe('AuditTrailService');
    expect(judged.provenance).toMatchObject({ processes: 5, versions: 2, liveProcesses: 2 });

    // The CLI as a build gate: a new never-touched bean fails (1), accepting it passes (0), the table says why.
    const cwd = tempDir('ledger-gate');
    const gate = cli(
      redis.url,
      ['--min-days', String(minDays), '--min-process-hours', '0', '--baseline', 'ledger-baseline.json'],
      cwd,
    );
    printed += gate.stdout + gate.stderr;
    expect(gate.code).toBe(1);
    expect(gate.stdout).toMatch(
      /^never-touched \(1\)\n {2}AuditTrailService \(LedgerAppModule, [^)]*beans\.js:\d+\): [^\n]*\(strongest signal\)$/m,
    );
    // at its class's line in the compiled file the inventory names, from the ledger
    const beansJs = fs.readFileSync(path.join(launchSpec('nest11-cjs', 'ledger-app').cwd, 'beans.js'), 'utf8');
    const classAt = beansJs.split('\n').findIndex((l) => /\bclass AuditTrailService\b/.test(l)) + 1;
    expect(classAt).toBeGreaterThan(0);
    expect(gate.stdout).toContain(`beans.js:${classAt}): `);
    expect(gate.stdout).toMatch(/last write \d+ s ago from 2 live processes/);
    // The advice is a command that works as printed: run it (the URL from the environment, as before).
    const advice = /^ {4}npx diag-instrumentation (ledger .*)$/m.exec(gate.stdout)![1]!.split(' ');
    expect(advice).toEqual(expect.arrayContaining(['--min-days', String(minDays), '--update-baseline']));
    const accept = spawnSync(process.execPath, [CLI, ...advice], {
      cwd,
      env: { ...process.env, DIAG_GHOST_TRACKING_LEDGER_URL: redis.url },
      encoding: 'utf8',
    });
    expect(accept.status).toBe(0);
    // The bean, and the never-called methods and route the fixture holds (issue #43), as members beside it.
    const accepted = JSON.parse(fs.readFileSync(path.join(cwd, 'ledger-baseline.json'), 'utf8'));
    expect(accepted.beans).toEqual(['AuditTrailService']);
    // ShopController#audit handles GET /audit: the route speaks for it, once; AuditTrailService, never touched as a
    // whole, is the finding, not its methods again
    expect(accepted.members).toEqual(['OrderService#cancel', 'http GET /audit']);
    expect(
      cli(
        redis.url,
        ['--min-days', String(minDays), '--min-process-hours', '0', '--baseline', 'ledger-baseline.json'],
        cwd,
      ).code,
    ).toBe(0);

    // The actuator answers the same object (its own settings give the URL and the service).
    const withActuator = await app(appEnv(redis.url, 'v2', ACTUATOR));
    const served = await getJson(actuatorPort(withActuator), '/actuator/diag/ledger');
    expect(served.status).toBe(200);
    expect(served.body).toMatchObject({ service: 'shop', provenance: { source: 'redis', versions: 2 } });
    expect(served.body.beans.map((x: LedgerBean) => x.name).sort()).toEqual(judged.beans.map((x) => x.name).sort());
    expect(served.text).not.toContain(PASSWORD);
  }, 90_000);

  it("a process's own answer shows the uses it saw and has not written yet; the ledger gets them from its rounds", async () => {
    const redis = await redisOn();
    // Rounds a minute apart: after the first (the inventory, right after ready) nothing is written for a minute.
    const a = await app(
      appEnv(redis.url, 'v1', {
        DIAG_GHOST_TRACKING_LEDGER_PUSH_INTERVAL_MS: '60000',
        DIAG_GHOST_TRACKING_LEDGER_HEARTBEAT_INTERVAL_MS: '60000',
        ...ACTUATOR,
      }),
    );
    const served = async () =>
      (await getJson(actuatorPort(a), '/actuator/diag/ledger')).body?.beans?.find(
        (x: LedgerBean) => x.name === 'OrderService',
      );
    // (a person's first read starts the writer, whose first round writes the inventory at once)
    expect((await served())?.verdict).not.toBe('in-use');
    await until('the inventory in the ledger', 15_000, async () => bean(answerSoon(redis.url), 'OrderService'));
    expect((await getJson(a.port, '/orders')).status).toBe(200);
    // at once, from this process: its touch laid over the ledger's read, not written
    const seen = await served();
    expect(seen).toMatchObject({ verdict: 'in-use' });
    // and the method it called, its method's use laid over as well
    expect(seen.methods.find((m: { name: string }) => m.name === 'list')).toMatchObject({ verdict: 'in-use' });
    expect(bean(answer(redis.url), 'OrderService')!.verdict).not.toBe('in-use');
    // and its end writes it, as before (the service silent then: the gate's exit 2, the answer printed all the same)
    await stop(a);
    const after = cli(redis.url, ['--format', 'json', '--min-days', '0', '--min-process-hours', '0']);
    expect(bean(JSON.parse(after.stdout) as Answer, 'OrderService')!.verdict).toBe('in-use');
  }, 60_000);

  it('replicas of one version with different beans (a worker, a flag, a version not bumped): each bean set kept, each bean judged on its own', async () => {
    const redis = await redisOn();
    // Both replicas say service.version=1.0.0, but one runs v1's code and the other v2's.
    const same = { OTEL_RESOURCE_ATTRIBUTES: 'service.version=1.0.0' };
    const a = await app({ ...appEnv(redis.url, 'v1'), ...same });
    await sleep(1500); // v1's beans have existed longer than v2's
    const b = await app({ ...appEnv(redis.url, 'v2'), ...same });
    expect((await getJson(b.port, '/orders')).status).toBe(200);
    const both = await until('both bean sets in the ledger', 10_000, async () => {
      const now = answerSoon(redis.url);
      return now?.provenance.liveProcesses === 2 &&
        bean(now, 'RecommendationService') &&
        bean(now, 'LegacyExportService')
        ? now
        : undefined;
    });
    expect(both.provenance).toMatchObject({ versions: 1 });
    // Neither replica's beans hide the other's, and none is retired while its replica lives.
    expect(bean(both, 'LegacyExportService')!.verdict).not.toBe('retired');
    expect(bean(both, 'RecommendationService')!.verdict).not.toBe('retired');
    // The bean that came with the second replica is judged from when it came, not from the version's start.
    const recommendation = Date.parse((both.beans.find((x) => x.name === 'RecommendationService') as any).firstSeen);
    const audit = Date.parse((both.beans.find((x) => x.name === 'AuditTrailService') as any).firstSeen);
    expect(recommendation - audit).toBeGreaterThan(1000);
    await stop(a);
    const after = await until('the v1 bean retired with its replica', 10_000, async () => {
      const now = answerSoon(redis.url);
      return bean(now, 'LegacyExportService')?.verdict === 'retired' ? now : undefined;
    });
    expect(bean(after, 'AuditTrailService')!.verdict).not.toBe('retired');
  }, 60_000);

  it("a bean's module and file are the running code's, not those of a later variant whose processes stopped", async () => {
    const redis = await redisOn();
    const moduleOf = (name: string) => async () => {
      const now = answerSoon(redis.url);
      return now?.provenance.liveProcesses === 1 && bean(now, 'OrderService')?.module === name ? now : undefined;
    };
    // The code as usual, then the same version another way (a build started without its sources, say), then the
    // usual again: the answer must name what runs now, not what was first seen last.
    const first = await app(appEnv(redis.url, 'v1'));
    await until('the first variant written', 10_000, moduleOf('LedgerAppModule'));
    await stop(first);
    const other = await app(appEnv(redis.url, 'v1', { LEDGER_APP_MODULE: 'ElsewhereModule' }));
    await until('the other variant written', 10_000, moduleOf('ElsewhereModule'));
    await stop(other);
    await app(appEnv(redis.url, 'v1'));
    const now = await until('the running variant named', 15_000, moduleOf('LedgerAppModule'));
    expect(now.provenance.versions).toBe(1);
  }, 60_000);

  it('touch records lost from Redis (evicted): counted missing, and no bean is called never-touched meanwhile', async () => {
    const redis = await redisOn();
    const a = await app(appEnv(redis.url, 'v1'));
    expect((await getJson(a.port, '/orders')).status).toBe(200);
    await until('OrderService in the ledger', 10_000, async () =>
      bean(answerSoon(redis.url), 'OrderService')?.verdict === 'in-use' ? true : undefined,
    );
    const buckets = Array.from({ length: 64 }, (_, i) => `diag:ledger:{shop}:touched:${i}`);
    await redis.command('DEL', ...buckets);
    const lost = answer(redis.url);
    expect((lost.provenance as any).lostTouches).toBeGreaterThan(0);
    expect(lost.counts['never-touched']).toBe(0);
    expect(bean(lost, 'OrderService')!.verdict).toBe('insufficient-evidence');
    expect((bean(lost, 'OrderService') as any).why).toMatch(/touch records? (was|were) lost/);
  }, 30_000);

  it('a service gone silent fails the gate (exit 2), and silent is not deleted: no bean of its last code reads retired', async () => {
    const redis = await redisOn();
    const a = await app(appEnv(redis.url, 'v1'));
    await until('the first write', 10_000, async () => (answerSoon(redis.url) ? true : undefined));
    await stop(a);
    const run = cli(redis.url, ['--min-days', '0', '--min-process-hours', '0']);
    printed += run.stdout + run.stderr;
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/the service shop has gone silent \(no live process\)/);
    expect(run.stdout).toMatch(/WARNING: the service has gone silent/);
    expect(run.stdout).not.toMatch(/^retired/m);
    expect(run.stdout).not.toMatch(/deleted or renamed/);
    // the methods and endpoints of the code last seen running, as for a live service (a trial read only the beans)
    expect(run.stdout).toMatch(/^never-called endpoints \(4 of 4\)$/m);
    // SARIF asked: SARIF printed (a CI step writes it to a file code scanning reads), the silence in its notifications
    const sarif = cli(redis.url, ['--min-days', '0', '--min-process-hours', '0', '--format', 'sarif']);
    expect(sarif.code).toBe(2);
    const parsed = JSON.parse(sarif.stdout);
    expect(parsed.version).toBe('2.1.0');
    expect(parsed.runs[0].invocations[0].toolExecutionNotifications[0].message.text).toMatch(/has gone silent/);
    expect(parsed.runs[0].invocations[0].executionSuccessful).toBe(false);
    expect(parsed.runs[0].results.length).toBeGreaterThan(0);
  }, 30_000);

  it('Redis paused (SIGSTOP): the app answers as before, one WARN, and the kept touch is written once Redis is back', async () => {
    const redis = await redisOn();
    const a = await app(appEnv(redis.url, 'v1'));
    await until('the first write', 10_000, async () =>
      /this process's first write for service shop/.test(logs(a)) ? true : undefined,
    );
    redis.signal('SIGSTOP');
    try {
      const t0 = Date.now();
      expect((await getJson(a.port, '/orders')).body).toEqual(['order-1']);
      expect(Date.now() - t0).toBeLessThan(2_000);
      await until('the outage said', 10_000, async () => (/did not answer within/.test(logs(a)) ? true : undefined));
    } finally {
      redis.signal('SIGCONT');
    }
    await until('OrderService in the ledger', 15_000, async () =>
      bean(answerSoon(redis.url), 'OrderService')?.verdict === 'in-use' ? true : undefined,
    );
    await until('the recovery said', 10_000, async () => (/answers again/.test(logs(a)) ? true : undefined));
    expect(logs(a).match(/WARN ghost ledger for shop/g)).toHaveLength(1);
  }, 60_000);

  it('Redis killed and restarted empty: the ledger is marked reset, never "nothing was ever touched", and refilled', async () => {
    const redis = await redisOn();
    const a = await app(appEnv(redis.url, 'v1'));
    expect((await getJson(a.port, '/orders')).status).toBe(200);
    await until('OrderService in the ledger', 10_000, async () =>
      bean(answerSoon(redis.url), 'OrderService')?.verdict === 'in-use' ? true : undefined,
    );
    const port = redis.port;
    await redis.stop();
    servers.splice(servers.indexOf(redis), 1);
    expect((await getJson(a.port, '/orders')).status).toBe(200);
    const restartedAt = Date.now();
    const fresh = await redisOn(port);
    const refilled = await until('the reset marked and the touch written again', 15_000, async () => {
      const now = answerSoon(fresh.url);
      return now?.provenance.reset && bean(now, 'OrderService')?.verdict === 'in-use' ? now : undefined;
    });
    // The evidence starts over: with the default thresholds nothing can be never-touched.
    expect(Date.parse(refilled.provenance.since!)).toBeGreaterThanOrEqual(restartedAt - 1000);
    const strict = JSON.parse(cli(fresh.url, ['--format', 'json']).stdout) as Answer;
    expect(strict.counts['never-touched']).toBe(0);
    expect(bean(strict, 'AuditTrailService')!.verdict).toBe('insufficient-evidence');
    // (the CLI ran synchronously: the app's output is read once this test yields)
    await until('the reset said', 5_000, async () =>
      /WARN ghost ledger for shop: the ledger at redis:\/\/127\.0\.0\.1:\d+ was emptied/.test(logs(a))
        ? true
        : undefined,
    );
  }, 60_000);

  it('Redis absent at start: the app starts and answers, one WARN, and its touches arrive when Redis does', async () => {
    const port = await freePort();
    const url = `redis://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}`;
    const a = await app(appEnv(url, 'v1'));
    expect((await getJson(a.port, '/orders')).body).toEqual(['order-1']);
    await until('the outage said', 10_000, async () => (/is not reachable/.test(logs(a)) ? true : undefined));
    const redis = await redisOn(port);
    await until('OrderService in the ledger', 15_000, async () =>
      bean(answerSoon(redis.url), 'OrderService')?.verdict === 'in-use' ? true : undefined,
    );
    expect(logs(a).match(/WARN ghost ledger for shop/g)).toHaveLength(1);
  }, 60_000);

  it('a wrong password: the app answers as before; one WARN naming the server, never the password', async () => {
    const redis = await redisOn();
    const wrong = `redis://:${encodeURIComponent('not-the-' + PASSWORD)}@127.0.0.1:${redis.port}`;
    const a = await app(appEnv(wrong, 'v1'));
    expect((await getJson(a.port, '/orders')).body).toEqual(['order-1']);
    await until('the refusal said', 10_000, async () =>
      /WARN ghost ledger for shop: Redis at/.test(logs(a)) ? true : undefined,
    );
    expect(logs(a)).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ .*(WRONGPASS|NOAUTH|invalid)/);
    expect(logs(a)).not.toContain('not-the-');
    const run = cli(redis.url, ['--format', 'json']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/nothing in the ghost ledger of shop/);
  }, 60_000);

  it('a read-only replica: the app answers as before, one WARN saying Redis refused the write', async () => {
    const primary = await redisOn();
    const replica = await redisOn(undefined, [
      '--replicaof',
      '127.0.0.1',
      String(primary.port),
      '--masterauth',
      PASSWORD,
    ]);
    const a = await app(appEnv(replica.url, 'v1'));
    expect((await getJson(a.port, '/orders')).body).toEqual(['order-1']);
    await until('the refusal said', 10_000, async () => (/READONLY/.test(logs(a)) ? true : undefined));
    expect(logs(a)).toMatch(
      /WARN ghost ledger for shop: Redis at redis:\/\/127\.0\.0\.1:\d+ refused the write \(READONLY/,
    );
    expect(logs(a).match(/WARN ghost ledger for shop/g)).toHaveLength(1);
  }, 30_000);

  it('a Redis that may evict the ledger (maxmemory-policy allkeys-lru): one WARN at the first write', async () => {
    const redis = await redisOn(undefined, ['--maxmemory-policy', 'allkeys-lru']);
    const a = await app(appEnv(redis.url, 'v1'));
    await until('the eviction warning', 10_000, async () =>
      /WARN ghost ledger for shop: Redis at redis:\/\/127\.0\.0\.1:\d+ has maxmemory-policy allkeys-lru/.test(logs(a))
        ? true
        : undefined,
    );
  }, 30_000);

  it('a replica killed with SIGKILL: its touches of rounds before the kill are in the ledger', async () => {
    const redis = await redisOn();
    const a = await app(appEnv(redis.url, 'v1'));
    expect((await getJson(a.port, '/orders')).status).toBe(200);
    await sleep(400); // past a round of 100 ms: the bound is the last round only
    await stop(a, 'SIGKILL');
    // The only replica gone: silent (exit 2) once its heartbeat is old, the answer printed all the same.
    const run = cli(redis.url, ['--format', 'json', '--min-days', '0', '--min-process-hours', '0']);
    const after = JSON.parse(run.stdout) as Answer;
    expect(bean(after, 'OrderService')!.verdict).toBe('in-use');
  }, 30_000);

  it('no service name: one WARN, the ledger off, the app unchanged', async () => {
    const redis = await redisOn();
    const a = await app({ ...appEnv(redis.url, 'v1'), OTEL_SERVICE_NAME: '' });
    expect((await getJson(a.port, '/orders')).status).toBe(200);
    await sleep(500);
    expect(logs(a)).toMatch(/WARN diag\.ghost-tracking\.ledger\.url is set but this process names no service/);
    expect(cli(redis.url, ['--format', 'json']).code).toBe(2);
  }, 30_000);

  // awilix names its registrations as registered: camelCase.
  const named = (container: string, name: string) =>
    container === 'awilix' ? name[0]!.toLowerCase() + name.slice(1) : name;

  it.each(['inversify', 'tsyringe', 'awilix'])(
    'the %s example feeds the same ledger: its beans, its touches',
    async (container) => {
      const n = (name: string) => named(container, name);
      const redis = await redisOn();
      const service = `${container}-shop`;
      const started = await startApp('nest11-cjs', {
        app: `${container}-app`,
        env: { ...appEnv(redis.url, 'v1'), OTEL_SERVICE_NAME: service },
      });
      apps.push(started);
      expect((await getJson(started.port, '/orders')).body.orders).toEqual([{ id: 1 }, { id: 2 }]);
      const answerOf = () => {
        const run = spawnSync(
          process.execPath,
          [CLI, 'ledger', '--service', service, '--format', 'json', '--min-days', '0', '--min-process-hours', '0'],
          { env: { ...process.env, DIAG_GHOST_TRACKING_LEDGER_URL: redis.url }, encoding: 'utf8' },
        );
        return run.status === 2 ? undefined : (JSON.parse(run.stdout) as Answer);
      };
      const seen = await until(`${container}: the orders' beans in use in the ledger`, 15_000, async () => {
        const now = answerOf();
        return bean(now, n('OrdersRepository'))?.verdict === 'in-use' ? now : undefined;
      });
      expect(seen.service).toBe(service);
      expect(bean(seen, n('LegacyExporter'))).toBeDefined();
      expect(bean(seen, n('LegacyExporter'))!.verdict).not.toBe('in-use');
      expect(bean(seen, n('Clock'))!.verdict).toBe('in-use');
    },
    60_000,
  );

  describeWithService('chromium', 'the report page', (chromiumBin) => {
    let browser: Browser | undefined;
    afterAll(async () => browser?.close());

    it('opens on the verdict table, most likely dead first, with the ledger’s evidence', async () => {
      const redis = await redisOn();
      const a = await app(
        appEnv(redis.url, 'v1', {
          ...ACTUATOR,
          DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS: '0',
          DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS: '0',
        }),
      );
      expect((await getJson(a.port, '/orders')).status).toBe(200);
      const port = actuatorPort(a);
      await until('the fleet answer with the touch', 10_000, async () => {
        const served = await getJson(port, '/actuator/diag/ledger');
        return served.body?.beans?.find((x: LedgerBean) => x.name === 'OrderService')?.verdict === 'in-use'
          ? true
          : undefined;
      });
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({
        executablePath: chromiumBin,
        args: ['--no-sandbox', '--disable-gpu'],
        headless: true,
      });
      const page = await browser.newPage();
      // The page reads the ledger's last answer; a second load is sure to have it.
      await page.goto(`http://127.0.0.1:${port}/actuator/diag/view`);
      await page.waitForTimeout(300);
      await page.goto(`http://127.0.0.1:${port}/actuator/diag/view`);
      await page.waitForSelector('#verdicts');
      const first = page.locator('#verdicts tbody tr').first();
      expect(await first.getAttribute('data-verdict')).toBe('never-touched');
      expect(await first.locator('button.bean').textContent()).toBe('AuditTrailService');
      expect(await first.locator('td.verdict').textContent()).toContain('★');
      expect(await page.locator('#evidence').textContent()).toMatch(
        /Ghost ledger at redis:\/\/127\.0\.0\.1:\d+, read \S+: observed since .* 1 process \(1 tracked\), 1 version,/,
      );
      expect(await page.locator('tr[data-verdict="in-use"]').first().isHidden()).toBe(true);
      await page.locator('#show-in-use').click();
      expect(await page.locator('tr[data-verdict="in-use"] button.bean', { hasText: 'OrderService' }).isVisible()).toBe(
        true,
      );
      const html = await page.content();
      const at = html.indexOf(PASSWORD);
      expect(at < 0 ? '' : html.slice(Math.max(0, at - 300), at + 50)).toBe('');
    }, 60_000);
  });
});
