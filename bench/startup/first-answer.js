'use strict';
// Time to first answer on a real application (issue #46): from spawning the process to its first HTTP 200, what a
// readiness probe and an autoscaler see, including whatever runs right after the listen (the analysis, the
// report files and the page) while the first request waits. Three sides alternate in fresh processes, the order
// rotating every round: NodeSDK alone, with Phase 1, with Phase 1 + 2 (the package's defaults: timeline, lookups
// and per-bean spans on; `--ledger` also configures the ghost ledger against a redis-server the script starts).
// Per side: the median and the range of the rounds, and the median of per-round ratios to NodeSDK alone.
//
// The application is not part of this repository:
// - default: Vendure's server from the npm registry (bench/startup/vendure, installed on first use as by
//   bench:vendure), asked `GET /health`;
// - `--checkout DIR`: any built NestJS application, started as `node --require <our preload> DIR/<--main>` with
//   `PORT` set, asked `GET <--path>`. The issue's application, brocoders/nestjs-boilerplate (TypeORM on
//   PostgreSQL): clone it, `npm ci && npm run build`, create its `.env` from `env-example-relational` pointing at a
//   local PostgreSQL (Debian: `postgresql`) with `APP_PORT` left out (it wins over the `PORT` this script sets),
//   run its migrations and seeds once, then (its `GET /` answers without the database; every other route is under
//   `/api/v1`)
//     node bench/startup/first-answer.js --checkout ~/nestjs-boilerplate --main dist/main.js --path /
//   (`--env KEY=VALUE`, repeatable, adds to the application's environment).
//   npm run bench:first-answer -- [--rounds 7] [--checkout DIR --main dist/main.js --path /] [--ledger] [--json]
// Wall-clock: run it on a quiet machine only.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const { freePort } = require('../free-port');
const { arg, median } = require('../sketch/workload');
const { sideEnv } = require('./run');

const root = path.resolve(__dirname, '..', '..');
const preload = path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs');
const SIDES = ['sdk', 'phase1', 'phase2'];
/** How long one start may take before the round fails (Vendure under load: ~10 s). */
const START_TIMEOUT_MS = 120_000;
const POLL_MS = 5;

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

/** Every `--env KEY=VALUE` of the command line. */
function extraEnv() {
  const env = {};
  process.argv.forEach((a, i) => {
    if (a !== '--env') return;
    const [key, ...value] = (process.argv[i + 1] ?? '').split('=');
    if (!key || value.length === 0) throw new Error(`--env takes KEY=VALUE, got ${process.argv[i + 1]}`);
    env[key] = value.join('=');
  });
  return env;
}

/** The application to start: a checkout given on the command line, or Vendure's registry-installed server. */
function target() {
  const checkout = option('checkout');
  if (checkout !== undefined) {
    const dir = path.resolve(checkout);
    const main = path.join(dir, option('main', 'dist/main.js'));
    if (!fs.existsSync(main))
      throw new Error(`${main} not found: build the application first (--main names its entry)`);
    return {
      label: path.basename(dir),
      cwd: dir,
      main,
      path: option('path', '/'),
      env: extraEnv(),
      prepare: () => ({}),
    };
  }
  const { ensureInstalled } = require('./vendure');
  const appDir = path.join(__dirname, 'vendure');
  return {
    label: "Vendure 3.7.3's server (registry)",
    cwd: appDir,
    main: path.join(appDir, 'server.js'),
    path: option('path', '/health'),
    env: extraEnv(),
    // One database file for every round, its schema created once, as bench:vendure does.
    prepare: async (dir) => {
      ensureInstalled();
      const db = path.join(dir, 'vendure.sqlite');
      execFileSync(process.execPath, [path.join(appDir, 'server.js')], {
        env: { ...process.env, VENDURE_DB: db, VENDURE_SYNC: '1', PORT: String(await freePort()) },
        stdio: 'ignore',
        timeout: START_TIMEOUT_MS,
      });
      return { VENDURE_DB: db, VENDURE_KEEP_LISTENING: '1' };
    },
  };
}

/** Resolves true on an HTTP 200 from `url`, false on any other answer or none. */
function answers200(url) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.setTimeout(2_000, () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** Ends `child` and waits for it; SIGKILL when it does not end within 10 s. */
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** One start in a fresh process: ms from spawn to the first HTTP 200. */
async function firstAnswer(app, side, env, reportDir) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}${app.path}`;
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--require', preload, app.main], {
    cwd: app.cwd,
    env: { ...sideEnv(side, reportDir), ...env, ...app.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  try {
    for (;;) {
      if (await answers200(url)) return performance.now() - t0;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${side}: the application ended before answering 200 on ${url}\n${stderr}`);
      }
      if (performance.now() - t0 > START_TIMEOUT_MS)
        throw new Error(`${side}: no 200 on ${url} within ${START_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    await stop(child);
  }
}

/** A redis-server on a free loopback port for `--ledger`, and the settings that point the ledger at it. */
async function startLedgerRedis(dir) {
  const port = await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir], {
    stdio: 'ignore',
  });
  await new Promise((resolve, reject) => {
    redis.once('error', (err) => reject(new Error(`--ledger needs redis-server on PATH: ${err.message}`)));
    setTimeout(resolve, 300);
  });
  return { redis, env: { DIAG_GHOST_TRACKING_LEDGER_URL: `redis://127.0.0.1:${port}` } };
}

/** Alternating rounds of every side; per side its times, and the per-round ratios to NodeSDK alone. */
async function measureFirstAnswer({ rounds, ledger }) {
  const app = target();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-first-answer-'));
  let redis;
  try {
    const env = await app.prepare(dir);
    if (ledger) {
      const started = await startLedgerRedis(dir);
      redis = started.redis;
      Object.assign(env, started.env);
    }
    const reportDir = path.join(dir, 'reports');
    fs.mkdirSync(reportDir);
    await firstAnswer(app, 'sdk', env, reportDir); // warms the file cache, not counted
    const ms = Object.fromEntries(SIDES.map((s) => [s, []]));
    for (let i = 0; i < rounds; i++) {
      const order = SIDES.map((_, k) => SIDES[(k + i) % SIDES.length]);
      for (const side of order) ms[side].push(await firstAnswer(app, side, env, reportDir));
    }
    const sides = {};
    for (const side of SIDES) {
      const ratios = ms[side].map((t, i) => t / ms.sdk[i]);
      sides[side] = {
        ms: ms[side],
        median: median(ms[side]),
        min: Math.min(...ms[side]),
        max: Math.max(...ms[side]),
        ratio: median(ratios),
      };
    }
    return { app: app.label, rounds, ledger, sides };
  } finally {
    if (redis) redis.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const rounds = arg('rounds', 7);
  const result = await measureFirstAnswer({ rounds, ledger: process.argv.includes('--ledger') });
  console.log(
    `node ${process.version}, ${result.app}, ${rounds} alternating rounds${result.ledger ? ', ledger configured' : ''}\n`,
  );
  console.log('| side | spawn → first 200, median (ms) | range (ms) | ÷ NodeSDK alone (median of rounds) |');
  console.log('|---|---:|---:|---:|');
  const label = { sdk: 'NodeSDK alone', phase1: 'Phase 1', phase2: 'Phase 1 + 2' };
  for (const side of SIDES) {
    const s = result.sides[side];
    console.log(
      `| ${label[side]} | ${s.median.toFixed(0)} | ${s.min.toFixed(0)}–${s.max.toFixed(0)} | ${side === 'sdk' ? '1' : `**${s.ratio.toFixed(3)}**`} |`,
    );
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(result));
}

module.exports = { measureFirstAnswer };

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
