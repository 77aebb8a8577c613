'use strict';
// Start-up overhead on a real application from the npm registry: Vendure's server (bench/startup/vendure:
// @vendure/core 3.7.3 on an SQL.js file, about 4,000 modules and 400 beans, with one plugin of 40 providers
// of the application's own). Boots without the preload, with NodeSDK alone, with Phase 1 and with Phase 1 + 2
// alternate in fresh processes, the order rotating each run; ratios are medians of per-run ratios to NodeSDK.
//   npm run bench:vendure -- [--runs 7] [--json]
// The first run installs the app's own dependencies (npm ci in bench/startup/vendure, ~170 MB, ~30 s).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const { freePort } = require('../free-port');
const os = require('node:os');
const path = require('node:path');

const { arg, median } = require('../sketch/workload');
const { SIDES, printSides, sideEnv, summariseSides } = require('./run');

const root = path.resolve(__dirname, '..', '..');
const preload = path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs');
const appDir = path.join(__dirname, 'vendure');
const server = path.join(appDir, 'server.js');

/** Installs the app's pinned dependencies once; throws with what to do when npm cannot. */
function ensureInstalled() {
  if (fs.existsSync(path.join(appDir, 'node_modules', '@vendure', 'core', 'package.json'))) return;
  console.error('bench/startup/vendure: installing Vendure (npm ci, once)…');
  try {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: appDir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } catch (err) {
    throw new Error(`could not install Vendure in ${appDir} (npm ci: ${err.message}); it needs the npm registry`);
  }
}

async function boot(side, db, reportDir) {
  const out = execFileSync(process.execPath, [...(side === 'bare' ? [] : ['--require', preload]), server], {
    env: { ...sideEnv(side, reportDir), VENDURE_DB: db, PORT: String(await freePort()) },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return {
    boot: Number(/BOOT_MS ([\d.]+)/.exec(out)[1]),
    total: Number(/TOTAL_MS ([\d.]+)/.exec(out)[1]),
    modules: Number(/MODULES (\d+)/.exec(out)[1]),
  };
}

/**
 * Per side: median boot and total ms, and the median per-run ratios to NodeSDK alone (`sides` must include
 * 'sdk'). Exported for bench/check.js.
 */
async function measureVendure({ runs = 7, sides = SIDES } = {}) {
  ensureInstalled();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-bench-vendure-'));
  try {
    const db = path.join(dir, 'vendure.sqlite');
    // Creates the schema once, so that every measured boot reads the same database.
    execFileSync(process.execPath, [server], {
      env: { ...process.env, VENDURE_DB: db, VENDURE_SYNC: '1', PORT: String(await freePort()) },
      stdio: 'ignore',
      timeout: 120_000,
    });
    const reportDir = path.join(dir, 'reports');
    fs.mkdirSync(reportDir);
    const samples = Object.fromEntries(sides.map((s) => [s, []]));
    await boot(sides[0], db, reportDir); // warm the file cache
    for (let i = 0; i < runs; i++) {
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(k + i) % sides.length];
        samples[side].push(await boot(side, db, reportDir));
      }
    }
    return { modules: median((samples.phase2 ?? samples.sdk).map((x) => x.modules)), ...summariseSides(samples) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { measureVendure, ensureInstalled };
if (require.main !== module) return;

const runs = arg('runs', 7);
measureVendure({ runs }).then(
  (r) => {
    if (process.argv.includes('--json'))
      return console.log(JSON.stringify({ node: process.version, runs, ...r }, null, 2));
    printSides(`Vendure 3.7.3 server start-up (${r.modules} modules), ${runs} alternating runs, medians:`, r);
  },
  (err) => {
    console.error(err.message);
    process.exitCode = 1;
  },
);
