'use strict';
/*
 * Fleet-wide rate limiting on one Redis, side by side in one run: this package's Redis sketch store against
 * rate-limiter-flexible's RateLimiterRedis and @nest-lab/throttler-storage-redis (the storage behind
 * @nestjs/throttler's Redis setups), plus the local-only sketch as the latency reference.
 *
 *   npm run build && node bench/sketch/fleet.js [--processes 3] [--rate 10000] [--seconds 25] [--memory-keys 1000000]
 *                                               [--only sketch-fleet,sketch-local]
 *
 * Needs Debian's redis-server (started here on a free loopback port, no persistence). Per variant:
 * - steady load: every process hits distinct keys at --rate hits/s for --seconds: Redis CPU µs per hit (the sum
 *   of INFO commandstats usec over the phase ÷ hits), Redis network bytes per process per second (INFO stats),
 *   hit latency p50/p99 in the process (the sketch's hit is synchronous; the peers' is a round trip);
 * - memory: one process sends --memory-keys distinct keys, then INFO memory used_memory (after FLUSHALL);
 * - hot key: every process hits one key at 200 hits/s for 3 s against a limit of 100 per 60 s: admitted.
 */
const { spawn, spawnSync } = require('node:child_process');
const { freePort } = require('../free-port');
const os = require('node:os');
const path = require('node:path');
const { arg } = require('./workload');

const root = path.resolve(__dirname, '..', '..');
const PROCESSES = arg('processes', 3);
const RATE = arg('rate', 10_000);
const SECONDS = arg('seconds', 25);
const MEMORY_KEYS = arg('memory-keys', 1_000_000);
const HOT = { limit: 100, windowMs: 60_000, rate: 200, seconds: 3 };
/** The steady phase's limit: distinct keys never reach it, but a limit tells the sketch what may wait. */
const STEADY_LIMIT = 100;
const ALL_VARIANTS = ['sketch-fleet', 'sketch-local', 'rate-limiter-flexible', 'throttler-storage-redis'];
const only = process.argv.indexOf('--only');
const VARIANTS = only > 0 ? process.argv[only + 1].split(',') : ALL_VARIANTS;

if (process.argv.includes('--child')) {
  child().catch((err) => {
    console.error(err);
    process.exit(1);
  });
  return;
}

/** What one process does: builds the variant's limiter, then runs the phase it was told. */
async function child() {
  const variant = process.argv[process.argv.indexOf('--child') + 1];
  const phase = process.argv[process.argv.indexOf('--phase') + 1];
  const port = arg('port', 0);
  const offset = arg('offset', 0);
  const Redis = require('ioredis');
  const { setLogger } = require(path.join(root, 'dist', 'shared', 'logger.js'));
  setLogger(null);
  const sketch = require(path.join(root, 'dist', 'sketch'));
  const windowMs = phase === 'hot' ? HOT.windowMs : 60_000;
  const limit = phase === 'hot' ? HOT.limit : STEADY_LIMIT;
  let hit;
  let close = async () => {};
  if (variant.startsWith('sketch')) {
    let registry;
    if (variant === 'sketch-fleet') {
      const client = new Redis({ port, host: '127.0.0.1' });
      const store = new sketch.RedisSketchStore({ client });
      registry = new sketch.SketchRegistry({ store });
      close = async () => {
        await store.close();
        client.disconnect();
      };
    } else {
      registry = new sketch.SketchRegistry();
    }
    const s = registry.getOrCreate('LIMIT', windowMs);
    s.noteThreshold(limit); // what @SketchLimit({ requests: limit }) does
    hit = (key) => s.hit(key) <= limit;
  } else if (variant === 'rate-limiter-flexible') {
    const { RateLimiterRedis } = require('rate-limiter-flexible');
    const client = new Redis({ port, host: '127.0.0.1' });
    const limiter = new RateLimiterRedis({
      storeClient: client,
      points: limit,
      duration: windowMs / 1000,
      keyPrefix: 'rlf',
    });
    hit = (key) =>
      limiter.consume(key).then(
        () => true,
        (r) => (r instanceof Error ? Promise.reject(r) : false),
      );
    close = async () => client.disconnect();
  } else {
    const { ThrottlerStorageRedisService } = require('@nest-lab/throttler-storage-redis');
    const client = new Redis({ port, host: '127.0.0.1' });
    const storage = new ThrottlerStorageRedisService(client);
    hit = (key) =>
      storage.increment(key, windowMs, limit, windowMs, 'default').then((r) => !r.isBlocked && r.totalHits <= limit);
    close = async () => client.disconnect();
  }
  await new Promise((r) => setTimeout(r, 300)); // connections up, first sync done

  if (phase === 'memory') {
    let inflight = [];
    for (let i = 0; i < MEMORY_KEYS; i++) {
      const r = hit(`m:${i}`);
      if (r instanceof Promise) {
        inflight.push(r);
        if (inflight.length >= 256) {
          await Promise.all(inflight);
          inflight = [];
        }
      }
    }
    await Promise.all(inflight);
    await new Promise((r) => setTimeout(r, 500)); // the sketch's last sync rounds
    await close();
    process.stdout.write(`${JSON.stringify({ done: true })}\n`);
    return;
  }

  const rate = phase === 'hot' ? HOT.rate : RATE;
  const seconds = phase === 'hot' ? HOT.seconds : SECONDS;
  const tickMs = 10;
  const perTick = Math.max(1, Math.round((rate * tickMs) / 1000));
  const latencies = new Float64Array(Math.ceil(rate * seconds) + perTick);
  let n = 0;
  let admitted = 0;
  let next = offset;
  const started = performance.now();
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      if (performance.now() - started >= seconds * 1000) {
        clearInterval(timer);
        resolve();
        return;
      }
      for (let i = 0; i < perTick; i++) {
        const key = phase === 'hot' ? 'hot-key' : `k:${next++}`;
        const t0 = performance.now();
        const r = hit(key);
        const slot = n++;
        if (r instanceof Promise) {
          r.then((ok) => {
            latencies[slot] = performance.now() - t0;
            if (ok) admitted++;
          });
        } else {
          latencies[slot] = performance.now() - t0;
          if (r) admitted++;
        }
      }
    }, tickMs);
  });
  await new Promise((r) => setTimeout(r, 300)); // answers in flight, last sync
  const sorted = Array.from(latencies.subarray(0, n)).sort((a, b) => a - b);
  const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] * 1000;
  await close();
  process.stdout.write(`${JSON.stringify({ hits: n, admitted, p50us: pct(0.5), p99us: pct(0.99) })}\n`);
}

function redisCli(port, ...args) {
  const r = spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function info(port) {
  const text = redisCli(port, 'INFO', 'all');
  const field = (name) => Number((text.match(new RegExp(`^${name}:(\\d+)`, 'm')) || [])[1] || 0);
  let usec = 0;
  for (const m of text.matchAll(/^cmdstat_[^:]+:calls=\d+,usec=(\d+)/gm)) usec += Number(m[1]);
  return {
    usec,
    memory: field('used_memory'),
    netIn: field('total_net_input_bytes'),
    netOut: field('total_net_output_bytes'),
  };
}

function runChildren(variant, phase, port, count) {
  return Promise.all(
    Array.from(
      { length: count },
      (_, i) =>
        new Promise((resolve, reject) => {
          const args = [
            '--child',
            variant,
            '--phase',
            phase,
            '--port',
            String(port),
            '--offset',
            String(i * 1e9),
            '--rate',
            String(RATE),
            '--seconds',
            String(SECONDS),
            '--memory-keys',
            String(MEMORY_KEYS),
          ];
          const p = spawn(process.execPath, [__filename, ...args], {
            cwd: root,
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let out = '';
          p.stdout.on('data', (d) => (out += d));
          p.on('exit', (code) =>
            code === 0
              ? resolve(JSON.parse(out.trim().split('\n').pop()))
              : reject(new Error(`${variant} ${phase} exited ${code}`)),
          );
        }),
    ),
  );
}

async function main() {
  const port = await freePort();
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  try {
    await new Promise((r) => setTimeout(r, 500));
    console.log(
      `node ${process.version}, ${os.cpus()[0].model} x${os.cpus().length}, ${redisCli(port, 'INFO', 'server').match(/redis_version:(\S+)/)[1]}`,
    );
    console.log(
      `${PROCESSES} processes, ${RATE} hits/s each for ${SECONDS} s on distinct keys; memory after ${MEMORY_KEYS} keys; hot key ${HOT.rate}/s per process, limit ${HOT.limit}/${HOT.windowMs / 1000} s`,
    );
    const rows = [];
    for (const variant of VARIANTS) {
      const remote = variant !== 'sketch-local';
      redisCli(port, 'FLUSHALL');
      redisCli(port, 'CONFIG', 'RESETSTAT');
      const before = info(port);
      const steady = await runChildren(variant, 'steady', port, PROCESSES);
      const after = info(port);
      const hits = steady.reduce((a, r) => a + r.hits, 0);
      const p50 = steady.map((r) => r.p50us).sort((a, b) => a - b)[Math.floor(steady.length / 2)];
      const p99 = Math.max(...steady.map((r) => r.p99us));
      redisCli(port, 'FLUSHALL');
      const memBefore = info(port).memory;
      if (remote) await runChildren(variant, 'memory', port, 1);
      const memory = remote ? info(port).memory - memBefore : 0;
      redisCli(port, 'FLUSHALL');
      const hot = await runChildren(variant, 'hot', port, PROCESSES);
      const hotHits = hot.reduce((a, r) => a + r.hits, 0);
      const admitted = hot.reduce((a, r) => a + r.admitted, 0);
      rows.push({
        variant,
        cpuPerHitUs: remote ? (after.usec - before.usec) / hits : 0,
        netPerProcessKBs: remote
          ? (after.netIn + after.netOut - before.netIn - before.netOut) / 1024 / PROCESSES / SECONDS
          : 0,
        p50,
        p99,
        memoryMiB: memory / 1048576,
        hotAdmitted: `${admitted} of ${hotHits}`,
      });
    }
    console.log(
      '\nvariant                    Redis µs/hit  net KiB/s/proc  hit p50 µs  hit p99 µs  Redis MiB @keys  hot key admitted (limit 100)',
    );
    for (const r of rows) {
      console.log(
        `${r.variant.padEnd(26)} ${r.cpuPerHitUs.toFixed(3).padStart(12)} ${r.netPerProcessKBs.toFixed(0).padStart(15)} ${r.p50.toFixed(2).padStart(11)} ${r.p99.toFixed(2).padStart(11)} ${r.memoryMiB.toFixed(1).padStart(16)}  ${r.hotAdmitted}`,
      );
    }
    const holdBack = Math.floor(HOT.limit / (10 * PROCESSES));
    console.log(
      `\nbound for the sketch (docs/sketches.md): ${HOT.limit} + N·R·(2·S + rtt) + N·h = ${HOT.limit} + ${PROCESSES}·${HOT.rate}·0.25 + ${PROCESSES}·${holdBack}` +
        ` = ${HOT.limit + PROCESSES * HOT.rate * 0.25 + PROCESSES * holdBack}`,
    );
  } finally {
    server.kill('SIGKILL');
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
