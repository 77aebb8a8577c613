/**
 * Fleet-wide sketches on a real Redis: Debian's redis-server started here on a free loopback port with a
 * password, several replicas (test/fixtures/fleet/worker.js) as separate processes configured only through
 * DIAG_SKETCH_REDIS_URL, as a user would. Redis is then paused (SIGSTOP), killed and restarted empty, or never
 * there; the password must never show in what the replicas print.
 */
import { describeWithService } from '../../support/services';
import { freePort } from '../../support/ports';
import { RedisServer, sleep, until, Worker } from './harness';

const PASSWORD = 'fleet-s3cret-pw';
const SYNC_MS = 100;
const TIMEOUT_MS = 250;

function env(url: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    DIAG_SKETCH_REDIS_URL: url,
    DIAG_SKETCH_REDIS_SYNC_INTERVAL_MS: String(SYNC_MS),
    DIAG_SKETCH_REDIS_TIMEOUT_MS: String(TIMEOUT_MS),
    ...extra,
  };
}

async function fleet(url: string, n: number, extra?: NodeJS.ProcessEnv): Promise<Worker[]> {
  const workers = Array.from({ length: n }, () => new Worker(env(url, extra)));
  await Promise.all(workers.map((w) => w.ready()));
  return workers;
}

/** Waits until every worker's sketch is in `mode`, and returns the workers' statuses. */
function allIn(workers: Worker[], mode: string, type = 'LIMIT', windowMs = 60000, ms = 10_000) {
  return until(`every replica in ${mode}`, ms, async () => {
    const statuses = await Promise.all(workers.map((w) => w.send(`status ${type} ${windowMs}`)));
    return statuses.every((s) => s.placement?.fleet?.mode === mode) ? statuses : undefined;
  });
}

describeWithService('redis', 'sketches shared by a fleet through a real Redis', (bin) => {
  let redis: RedisServer;
  const workers: Worker[] = [];
  const spawnFleet = async (n: number, extra?: NodeJS.ProcessEnv, url = redis.url) => {
    const started = await fleet(url, n, extra);
    workers.push(...started);
    return started;
  };

  /**
   * The fleet's count of a key on LIMIT_60000, as a replica joining now sees it: its one hit reads the key's
   * cells back within a sync round; that hit is taken off.
   */
  const fleetCount = async (key: string): Promise<number> => {
    const [reader] = await spawnFleet(1);
    // A threshold of 1 holds nothing back: the hit is pushed, and the key's cells read, in the next round.
    await reader!.send(`hit LIMIT 60000 ${key} 1 1`);
    const seen = await until(`a new replica to read the fleet's count of ${key}`, 5_000, async () => {
      const { estimate } = await reader!.send(`estimate LIMIT 60000 ${key}`);
      return estimate > 1 ? estimate : undefined;
    });
    return seen - 1;
  };

  beforeEach(async () => {
    redis = new RedisServer(bin, await freePort(), PASSWORD);
    await redis.start();
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.kill()));
    await redis.stop();
  });

  it('holds one limit across three replicas, within the documented over-admission bound', async () => {
    const replicas = await spawnFleet(3);
    const threshold = 60;
    const perBurst = 5; // each replica: 5 hits every 100 ms = R of 50/s
    const admitted = [0, 0, 0];
    // 3 s at 50 hits/s per replica: 450 hits on one key against a limit of 60 per 60 s.
    for (let round = 0; round < 30; round++) {
      const answers = await Promise.all(
        replicas.map((w) => w.send(`hit LIMIT 60000 shared-key ${perBurst} ${threshold}`)),
      );
      answers.forEach((a, i) => (admitted[i] += a.admitted));
      await sleep(100);
    }
    const total = admitted.reduce((a, b) => a + b, 0);
    // docs/sketches.md: admitted ≤ threshold + N·R·(2·S + round trip) + N·h, where h = ⌊threshold ÷ 10N⌋ is
    // what each replica may hold back per cell; with N 3, R 50/s, S 0.1 s, a generous 50 ms round trip on a
    // loaded machine and h 2: 60 + 3·50·0.25 + 3·2 = 103.5.
    expect(total).toBeGreaterThanOrEqual(threshold);
    expect(total).toBeLessThanOrEqual(threshold + 3 * 50 * (2 * 0.1 + 0.05) + 3 * Math.floor(threshold / 30));
    // Local sketches alone would have admitted 60 on each replica.
    expect(total).toBeLessThan(3 * threshold);
    const statuses = await allIn(replicas, 'fleet');
    for (const s of statuses) expect(s.placement).toMatchObject({ store: 'redis', fleet: { mode: 'fleet', nodes: 3 } });
  }, 60_000);

  it('falls back within 500 ms when Redis freezes, admits a fair share, and loses no count after SIGCONT', async () => {
    const replicas = await spawnFleet(2);
    // A threshold of 10 over two replicas holds nothing back (⌊10 ÷ 20⌋ = 0): every count is pushed at once.
    await Promise.all(replicas.map((w) => w.send('hit LIMIT 60000 warm-up 1 10')));
    await allIn(replicas, 'fleet');
    await Promise.all(replicas.map((w) => w.send('run counted 100')));
    await sleep(500);

    const frozenAt = Date.now();
    redis.signal('SIGSTOP');
    const statuses = await allIn(replicas, 'local-fallback', 'LIMIT', 60000, 5_000);
    for (const s of statuses) expect(s.fallbackSince - frozenAt).toBeLessThanOrEqual(500);
    // Alone, each replica admits threshold ÷ nodes last seen (2): 20 of a limit of 40.
    const fair = await Promise.all(replicas.map((w) => w.send('hit LIMIT 60000 fair-key 50 40')));
    expect(fair.map((a) => a.admitted)).toEqual([20, 20]);
    await sleep(600);

    redis.signal('SIGCONT');
    await allIn(replicas, 'fleet');
    const hits = (await Promise.all(replicas.map((w) => w.send('halt')))).reduce((a, h) => a + h.hits, 0);
    await sleep(3 * SYNC_MS);
    // Every hit, the outage's included.
    expect(await fleetCount('counted')).toBe(hits);

    for (const w of replicas) {
      expect(w.output()).toContain(
        `Redis at redis://127.0.0.1:${redis.port} stopped answering (no answer within ${TIMEOUT_MS} ms)`,
      );
      expect(w.output()).toContain('Redis answers again');
      expect(w.output()).not.toContain(PASSWORD);
    }
  }, 60_000);

  it('pushes the counts of an outage to a Redis that was killed and restarted empty', async () => {
    const replicas = await spawnFleet(2);
    // A threshold of 10 over two replicas holds nothing back (⌊10 ÷ 20⌋ = 0): every count is pushed at once.
    await Promise.all(replicas.map((w) => w.send('hit LIMIT 60000 warm-up 1 10')));
    await allIn(replicas, 'fleet');

    await redis.stop();
    await allIn(replicas, 'local-fallback');
    const during = await Promise.all(replicas.map((w) => w.send('hit LIMIT 60000 outage-key 25 1000000')));
    expect(during.map((a) => a.admitted)).toEqual([25, 25]);

    await redis.start(); // same port, empty
    await allIn(replicas, 'fleet', 'LIMIT', 60000, 15_000);
    await sleep(3 * SYNC_MS);
    expect(await fleetCount('outage-key')).toBe(2 * 25);
    for (const w of replicas) expect(w.output()).not.toContain(PASSWORD);
  }, 60_000);

  it('holds cold increments back within a tenth of the threshold, and pushes them all on shutdown', async () => {
    const replicas = await spawnFleet(2);
    // A threshold of 1000 over two replicas: each may hold ⌊1000 ÷ 20⌋ = 50 increments of a cell back.
    await Promise.all(replicas.map((w) => w.send('hit LIMIT 60000 cold 30 1000')));
    await allIn(replicas, 'fleet');
    await sleep(3 * SYNC_MS);
    // Still in each replica, so the other one judges by its own 30 alone.
    expect((await replicas[0]!.send('estimate LIMIT 60000 cold')).estimate).toBe(30);
    await Promise.all(replicas.map((w) => w.send('quit')));
    expect(await fleetCount('cold')).toBe(60);
  }, 60_000);

  it('boots without Redis in local-fallback, and exits cleanly', async () => {
    const nowhere = `redis://:${PASSWORD}@127.0.0.1:${await freePort()}`;
    const [alone] = await spawnFleet(1, {}, nowhere);
    const answer = await alone!.send('hit LIMIT 60000 k 15 10');
    expect(answer.admitted).toBe(10);
    const [status] = await allIn([alone!], 'local-fallback');
    expect(status.placement).toMatchObject({
      store: 'redis',
      fleet: { mode: 'local-fallback', nodes: 1, lastSyncAgoMs: null },
    });
    await alone!.send('quit');
    expect(await alone!.exited).toBe(0);
    expect(alone!.output()).toMatch(/WARN sketch store: Redis at redis:\/\/127\.0\.0\.1:\d+ is not reachable/);
    expect(alone!.output()).not.toContain(PASSWORD);
  }, 30_000);

  it('rejects every hit while Redis is away with fail-mode closed', async () => {
    const nowhere = `redis://127.0.0.1:${await freePort()}`;
    const [closed] = await spawnFleet(1, { DIAG_SKETCH_REDIS_FAIL_MODE: 'closed' }, nowhere);
    await closed!.send('hit LIMIT 60000 k 1 10');
    await until('the warning', 5_000, async () => (/WARN sketch store/.test(closed!.output()) ? true : undefined));
    expect((await closed!.send('hit LIMIT 60000 k 5 10')).admitted).toBe(0);
    expect(closed!.output()).toContain('reject every call (fail-mode closed)');
  }, 30_000);

  it('names a wrong password as the cause, never the password', async () => {
    const wrong = `redis://:not-the-${PASSWORD}@127.0.0.1:${redis.port}`;
    const [w] = await spawnFleet(1, {}, wrong);
    await w!.send('hit LIMIT 60000 k 1 10');
    await allIn([w!], 'local-fallback');
    await until('the warning', 5_000, async () => (/WARN sketch store/.test(w!.output()) ? true : undefined));
    expect(w!.output()).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ is not reachable \((WRONGPASS|NOAUTH|ERR)[^)]*\)/);
    expect(w!.output()).not.toContain(PASSWORD);
  }, 30_000);

  it('warns about a malformed URL, naming the setting but not its secret, and stays local', async () => {
    const [w] = await spawnFleet(1, {}, `redis://:${PASSWORD}@127.0.0.1:not-a-port`);
    expect((await w!.send('hit LIMIT 60000 k 3 2')).admitted).toBe(2);
    const status = await w!.send('status LIMIT 60000');
    expect(status.placement).toEqual({ store: 'native' });
    expect(w!.output()).toMatch(/WARN ignoring diag\.sketch\.redis\.url \(DIAG_SKETCH_REDIS_URL\): not a URL/);
    expect(w!.output()).not.toContain(PASSWORD);
  }, 30_000);

  it('keeps Redis flat in the number of keys: a few strings per sketch, whatever the keys', async () => {
    const [w] = await spawnFleet(1);
    const usedMemory = async () => Number((await redis.command('INFO', 'memory')).match(/used_memory:(\d+)/)![1]);
    const before = await usedMemory();
    await w!.send('hit LIMIT 60000 user-* 100000 10');
    // The first round pushes 65,536 cells: on a loaded machine it may outlast the timeout and land later.
    await allIn([w!], 'fleet', 'LIMIT', 60000, 15_000);
    const keys = (await redis.command('KEYS', 'diag:sketch:*')).match(/diag:sketch:\{LIMIT_60000\}:[^\r]+/g) ?? [];
    // One string per live sub-window (here the current one), the heartbeat set and the shape: never a key per user.
    expect(keys.length).toBeGreaterThanOrEqual(3);
    expect(keys.length).toBeLessThanOrEqual(6);
    const growth = (await usedMemory()) - before;
    expect(growth).toBeLessThan(8 * 1024 * 1024);
    await w!.send('quit');
  }, 30_000);
});
