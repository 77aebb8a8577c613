'use strict';
// Start-up overhead of the instrumentation on InversifyJS, tsyringe and awilix applications of 1,000 generated bindings
// (bench/startup/container-app.js): the same NodeSDK with and without DiagInstrumentation, Phase 1 and
// Phase 2, fresh processes alternating with the order rotating each run; the figure that counts is the median
// over runs of each side's ratio to the SDK alone in the same run.
//   npm run build && node bench/startup/containers.js [--runs 11] [--bindings 1000]
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { arg } = require('../sketch/workload');
const { sideEnv, summariseSides } = require('./run');
const RUNS = arg('runs', 11);
const BINDINGS = arg('bindings', 1000);
const CONTAINERS = ['inversify', 'tsyringe', 'awilix'];
const root = path.resolve(__dirname, '..', '..');
const preload = path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs');
const SIDES = ['sdk', 'phase1', 'phase2'];

/** One start in a fresh process; returns { boot, total } in ms, and the report's candidate count. */
function start(container, side, bindings) {
  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-bench-'));
  try {
    const out = execFileSync(process.execPath, ['--require', preload, path.join(__dirname, 'container-app.js')], {
      env: { ...sideEnv(side, reportDir), CONTAINER: container, BINDINGS: String(bindings) },
      encoding: 'utf8',
    });
    const report = path.join(reportDir, 'diag-report.json');
    if (side !== 'sdk' && !fs.existsSync(report)) throw new Error(`${container} ${side}: no diag-report.json written`);
    return {
      boot: Number(/BOOT_MS ([\d.]+)/.exec(out)[1]),
      total: Number(/TOTAL_MS ([\d.]+)/.exec(out)[1]),
      candidates: side === 'sdk' ? undefined : JSON.parse(fs.readFileSync(report, 'utf8')).ghostCandidates.count,
    };
  } finally {
    fs.rmSync(reportDir, { recursive: true, force: true });
  }
}

/**
 * Alternating starts of every side of one container's app, the order rotating each run; see `summariseSides`.
 * Exported for bench/check.js.
 */
function measureContainer(container, { runs = RUNS, bindings = BINDINGS } = {}) {
  const samples = Object.fromEntries(SIDES.map((s) => [s, []]));
  start(container, 'sdk', bindings); // warm the file cache
  for (let i = 0; i < runs; i++) {
    const order = SIDES.map((_, k) => SIDES[(k + i) % SIDES.length]);
    for (const side of order) samples[side].push(start(container, side, bindings));
  }
  const out = summariseSides(samples);
  for (const side of SIDES) out[side].candidates = samples[side][0].candidates;
  return out;
}

function main() {
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log(`${BINDINGS} bindings, ${RUNS} alternating runs per side, medians\n`);
  console.log(
    '| container | side | to listening, app (ms) | × SDK alone | process start to listening (ms) | × SDK alone | candidates |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const container of CONTAINERS) {
    const r = measureContainer(container);
    for (const side of SIDES) {
      const s = r[side];
      console.log(
        `| ${container} | ${side === 'sdk' ? 'NodeSDK alone' : side === 'phase1' ? '+ DiagInstrumentation' : '+ Phase 2'} | ${s.boot.toFixed(1)} | ${s.bootToSdk.toFixed(3)} | ` +
          `${s.total.toFixed(1)} | ${s.totalToSdk.toFixed(3)} | ${s.candidates ?? '—'} |`,
      );
    }
  }
}

if (require.main === module) main();

module.exports = { CONTAINERS, measureContainer };
