'use strict';
/*
 * The cost of the sketch decorators, two ways:
 *
 * 1. ns per call of a method under @SketchLimit against the same method undecorated (no key, and a key
 *    function over 100k distinct keys), medians of rounds that each run every candidate.
 * 2. A NestJS 11 route under @SketchLimit (without and with the rate-limit fields) against the same route
 *    under @nestjs/throttler's guard (and bare),
 *    each in its own process, one autocannon run each, one after the other: `--passes` × 100k requests, the
 *    i-th carrying key `user:<i mod 100k>` in `x-key`, and both limiters key on it with the same limit (100 per
 *    60 s), so both track 100k distinct keys and admit every call. Then each process's memory after a forced gc.
 *
 *    `global` is the same limit as SketchModule.forRoot (the APP_GUARD form) instead of a decorator.
 * 3. The same on a GraphQL query and a socket.io message (bench/sketch/transports.js): `--transport-rounds`
 *    rounds, each starting every candidate afresh in a rotated order, 100k messages each; the ratio to bare is
 *    taken within a round, and the medians reported.
 *
 *   npx tsc -p tsconfig.build.json && node bench/sketch/decorators.js [--rounds 9] [--calls 1000000]
 *                                     [--keys 100000] [--passes 1] [--connections 32]
 *                                     [--order bare,sketch,sketch+fields,global,throttler]
 *                                     [--transport-rounds 3] [--transports gql,ws] [--parts 1,2,3]
 */
const { spawn } = require('node:child_process');
const path = require('node:path');
const { keysFor, median, arg } = require('./workload');
const { serveTransport, loadGraphql, loadWebSocket } = require('./transports');

const root = path.resolve(__dirname, '..', '..');
const ROUNDS = arg('rounds', 9);
const CALLS = arg('calls', 1_000_000);
const KEYS = arg('keys', 100_000);
const PASSES = arg('passes', 1);
const CONNECTIONS = arg('connections', 32);
const LIMIT = 100;
const TRANSPORT_ROUNDS = arg('transport-rounds', 3);
const PARTS = (() => {
  const i = process.argv.indexOf('--parts');
  return i > 0 ? process.argv[i + 1].split(',').map(Number) : [1, 2, 3];
})();

if (process.argv.includes('--app')) {
  const kind = process.argv[process.argv.indexOf('--app') + 1];
  (kind.includes(':') ? serveTransport(kind) : serve(kind)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

// ---------------------------------------------------------------------------------------------------------
// 1. per call

/** Applies a legacy method decorator by hand, as TypeScript's __decorate does. */
function decorate(cls, name, decorator) {
  const desc = Object.getOwnPropertyDescriptor(cls.prototype, name);
  Object.defineProperty(cls.prototype, name, decorator(cls.prototype, name, desc) || desc);
}

function perCall() {
  const { setLogger } = require(path.join(root, 'dist', 'shared', 'logger.js'));
  setLogger(null);
  const { SketchLimit, SketchRegistry } = require(path.join(root, 'dist', 'sketch'));
  const registry = new SketchRegistry();
  const big = 0xfffffffe; // every call admitted: the cost measured is the counting, not the rejection

  // the same body everywhere; each candidate its own class so V8 sees one shape per call site
  class Plain {
    work(k) {
      return k.length;
    }
  }
  class NoKey {
    work(k) {
      return k.length;
    }
  }
  class Keyed {
    work(k) {
      return k.length;
    }
  }
  decorate(NoKey, 'work', SketchLimit({ requests: big, registry }));
  decorate(Keyed, 'work', SketchLimit({ requests: big, registry, key: (k) => k }));

  const keys = keysFor(CALLS, KEYS);
  const candidates = {
    'undecorated': new Plain(),
    '@SketchLimit, no key (the method is the key)': new NoKey(),
    '@SketchLimit, key = argument, 100k distinct keys': new Keyed(),
  };
  const samples = Object.fromEntries(Object.keys(candidates).map((n) => [n, []]));
  let sink = 0;
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const [name, obj] of Object.entries(candidates)) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) sink += obj.work(keys[i]);
      const ns = Number(process.hrtime.bigint() - t0) / CALLS;
      if (round > 0) samples[name].push(ns); // round 0 warms up
    }
  }
  if (sink === 42) console.log('');
  registry.closeAll();
  const base = median(samples.undecorated);
  const rows = Object.entries(samples).map(([name, s]) => ({ name, ns: median(s), overhead: median(s) - base }));
  return { rows, base };
}

// ---------------------------------------------------------------------------------------------------------
// 2. Nest route under load

async function serve(kind) {
  require('reflect-metadata');
  const { Controller, Get, Module, Req, UseGuards } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const { setLogger } = require(path.join(root, 'dist', 'shared', 'logger.js'));
  setLogger(null);

  class Ctrl {
    hit(_req) {
      return { ok: true };
    }
    mem() {
      global.gc?.();
      global.gc?.();
      return process.memoryUsage();
    }
  }
  Req()(Ctrl.prototype, 'hit', 0);
  const imports = [];
  const providers = [];
  if (kind === 'sketch' || kind === 'sketch+fields') {
    const { SketchLimit } = require(path.join(root, 'dist', 'sketch'));
    const headers = kind === 'sketch' ? 'none' : 'standard';
    decorate(
      Ctrl,
      'hit',
      SketchLimit({ windowMs: 60_000, requests: LIMIT, key: (req) => req.headers['x-key'], headers }),
    );
  } else if (kind === 'global') {
    const { SketchModule } = require(path.join(root, 'dist', 'sketch'));
    imports.push(
      SketchModule.forRoot({ limits: { windowMs: 60_000, requests: LIMIT }, key: (req) => req.headers['x-key'] }),
    );
  } else if (kind === 'throttler') {
    const { ThrottlerGuard, ThrottlerModule } = require('@nestjs/throttler');
    imports.push(
      ThrottlerModule.forRoot({
        throttlers: [{ ttl: 60_000, limit: LIMIT }],
        getTracker: (req) => req.headers['x-key'],
      }),
    );
    decorate(Ctrl, 'hit', (t, k, d) => {
      UseGuards(ThrottlerGuard)(t, k, d);
      return d;
    });
  }
  decorate(Ctrl, 'hit', (t, k, d) => Get('hit')(t, k, d) || d);
  decorate(Ctrl, 'mem', (t, k, d) => Get('mem')(t, k, d) || d);
  Controller()(Ctrl);
  class AppModule {}
  Module({ imports, controllers: [Ctrl], providers })(AppModule);

  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  console.log(`LISTENING ${app.getHttpServer().address().port}`);
}

function startServer(kind) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--expose-gc', __filename, '--app', kind], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/LISTENING (\d+)/);
      if (m) resolve({ proc, port: Number(m[1]) });
    });
    proc.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}: ${out}`)));
  });
}

async function load(kind) {
  const autocannon = require('autocannon');
  const { proc, port } = await startServer(kind);
  const before = await (await fetch(`http://127.0.0.1:${port}/mem`)).json();
  let n = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/hit`,
    connections: CONNECTIONS,
    amount: KEYS * PASSES,
    requests: [
      {
        setupRequest(req) {
          req.headers = { ...req.headers, 'x-key': `user:${n++ % KEYS}` };
          return req;
        },
      },
    ],
  });
  const after = await (await fetch(`http://127.0.0.1:${port}/mem`)).json();
  proc.kill('SIGTERM');
  const non2xx = result.non2xx;
  return {
    kind,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx,
    duration: result.duration,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
    rssAfter: after.rss,
    rssBefore: before.rss,
  };
}

async function main() {
  const mb = (b) => (b / 1048576).toFixed(1);
  console.log(
    `node ${process.version}, ${require('node:os').cpus().length} CPUs, load average ${require('node:os')
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  if (PARTS.includes(1)) {
    console.log(`\n1. ns per call, median of ${ROUNDS} rounds of ${CALLS} calls (${KEYS} distinct keys)\n`);
    const { rows, base } = perCall();
    console.log('| candidate | ns per call | overhead (ns) | × undecorated |');
    console.log('|---|---:|---:|---:|');
    for (const r of rows)
      console.log(`| ${r.name} | ${r.ns.toFixed(1)} | ${r.overhead.toFixed(1)} | ${(r.ns / base).toFixed(1)} |`);
  }

  if (PARTS.includes(2)) {
    console.log(
      `\n2. Nest 11 route, autocannon ${CONNECTIONS} connections, ${KEYS * PASSES} requests, x-key from ${KEYS} rotating keys, limit ${LIMIT} per 60 s\n`,
    );
    const runs = [];
    const i = process.argv.indexOf('--order');
    const order = i > 0 ? process.argv[i + 1].split(',') : ['bare', 'sketch', 'sketch+fields', 'global', 'throttler'];
    for (const kind of order) runs.push(await load(kind));
    console.log('| route | req/s | p50 ms | p99 ms | requests | s | non-2xx | heapUsed after (Δ) | RSS after (Δ) |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of runs) {
      console.log(
        `| ${r.kind} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.total} | ${r.duration.toFixed(1)} | ${r.non2xx} | ` +
          `${mb(r.heapAfter)} MB (${r.heapAfter >= r.heapBefore ? '+' : ''}${mb(r.heapAfter - r.heapBefore)}) | ` +
          `${mb(r.rssAfter)} MB (${r.rssAfter >= r.rssBefore ? '+' : ''}${mb(r.rssAfter - r.rssBefore)}) |`,
      );
    }
  }

  if (PARTS.includes(3)) await transports(mb);
}

/** Part 3: every candidate of a transport in a fresh process per round, the round's order rotated. */
async function transports(mb) {
  const amount = KEYS * PASSES;
  const plans = [
    { transport: 'gql', name: 'GraphQL query', kinds: ['bare', 'sketch', 'global', 'throttler'], run: loadGraphql },
    { transport: 'ws', name: 'socket.io message', kinds: ['bare', 'sketch', 'throttler'], run: loadWebSocket },
  ];
  const only = process.argv.indexOf('--transports');
  const chosen = only > 0 ? process.argv[only + 1].split(',') : plans.map((p) => p.transport);
  for (const plan of plans.filter((p) => chosen.includes(p.transport))) {
    console.log(
      `\n3. ${plan.name}, Nest 11, ${CONNECTIONS} connections, ${amount} messages, keys from ${KEYS}, limit ${LIMIT} per 60 s; ${TRANSPORT_ROUNDS} rounds\n`,
    );
    const samples = Object.fromEntries(plan.kinds.map((k) => [k, { rate: [], ratio: [], heap: [], errors: 0 }]));
    for (let round = 0; round < TRANSPORT_ROUNDS; round++) {
      const order = plan.kinds.map((_, j) => plan.kinds[(j + round) % plan.kinds.length]);
      const rates = {};
      for (const kind of order) {
        const { proc, port } = await startServer(`${plan.transport}:${kind}`);
        try {
          const r = await plan.run(port, { amount, keys: KEYS, connections: CONNECTIONS });
          const after = await (await fetch(`http://127.0.0.1:${port}/mem`)).json();
          rates[kind] = r.rate;
          samples[kind].rate.push(r.rate);
          samples[kind].heap.push(after.heapUsed);
          samples[kind].errors += r.errors;
        } finally {
          proc.kill('SIGTERM');
        }
      }
      for (const kind of plan.kinds) samples[kind].ratio.push(rates[kind] / rates.bare);
    }
    console.log('| candidate | per s (median) | × bare (median of rounds) | heapUsed after (median) | failed |');
    console.log('|---|---:|---:|---:|---:|');
    for (const kind of plan.kinds) {
      const s = samples[kind];
      console.log(
        `| ${kind} | ${Math.round(median(s.rate))} | ${median(s.ratio).toFixed(2)} | ${mb(median(s.heap))} MB | ${s.errors} |`,
      );
    }
  }
}
