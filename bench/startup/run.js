'use strict';
// Start-up overhead of the instrumentation on a NestJS app of 1,000 generated providers, and the Phase 1
// analysis time on a synthetic graph of 10,000 beans. Runs with and without the instrumentation alternate,
// so drift on a shared machine hits both sides alike; the figure that counts is the ratio of medians.
//   npm run bench:startup -- [--runs 9] [--providers 1000]
// Two apps: the 1,000 generated providers alone, and the same after loading a large dependency tree (app.js).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { arg, median } = require('../sketch/workload');
const RUNS = arg('runs', 9);
const PROVIDERS = arg('providers', 1000);
const root = path.resolve(__dirname, '..', '..');
const preload = path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs');

/**
 * The environment of one side of a start-up benchmark: `sdk` (NodeSDK, nothing of this package), `phase1`,
 * `phase2`, or `bare` (the preload is left off by the caller). Shared with bench/startup/containers.js.
 */
function sideEnv(side, reportDir) {
  return {
    ...process.env,
    DIAG_REPORT_DIR: reportDir,
    DIAG_LOG_LEVEL: 'warn',
    DIAG_GHOST_TRACKING_ENABLED: side === 'phase2' ? 'true' : 'false',
    DIAG_BENCH_SDK_ONLY: side === 'sdk' ? '1' : '0',
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
}

/** One boot in a fresh process; returns { boot, total } in ms. */
function boot(side, tree) {
  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-bench-'));
  try {
    const out = execFileSync(
      process.execPath,
      [...(side === 'bare' ? [] : ['--require', preload]), path.join(__dirname, 'app.js')],
      {
        env: { ...sideEnv(side, reportDir), PROVIDERS: String(PROVIDERS), DEPENDENCY_TREE: tree ? '1' : '0' },
        encoding: 'utf8',
      },
    );
    return {
      boot: Number(/BOOT_MS ([\d.]+)/.exec(out)[1]),
      total: Number(/TOTAL_MS ([\d.]+)/.exec(out)[1]),
      modules: Number(/MODULES (\d+)/.exec(out)[1]),
    };
  } finally {
    fs.rmSync(reportDir, { recursive: true, force: true });
  }
}

const SIDES = ['bare', 'sdk', 'phase1', 'phase2'];

/** Alternating boots of every side, the order rotating each run; see `summariseSides`. Exported for bench/check.js. */
function measureStartup({ runs = RUNS, tree = false } = {}) {
  const samples = Object.fromEntries(SIDES.map((s) => [s, []]));
  boot('bare', tree); // warm the file cache
  for (let i = 0; i < runs; i++) {
    const order = SIDES.map((_, k) => SIDES[(k + i) % SIDES.length]);
    for (const side of order) samples[side].push(boot(side, tree));
  }
  return { modules: median(samples.phase2.map((x) => x.modules)), ...summariseSides(samples) };
}

/**
 * Per side of `samples` (side → per-run `{ boot, total }`, runs aligned across sides): median boot and total
 * ms, and the median over runs of the ratio to NodeSDK alone in the same run (ratios of neighbours cancel
 * drift). Shared with bench/startup/containers.js and vendure.js.
 */
function summariseSides(samples) {
  const out = {};
  for (const [side, runs] of Object.entries(samples)) {
    const ratio = (key) => median(runs.map((x, i) => x[key] / samples.sdk[i][key]));
    out[side] = {
      boot: median(runs.map((x) => x.boot)),
      total: median(runs.map((x) => x.total)),
      bootToSdk: ratio('boot'),
      totalToSdk: ratio('total'),
    };
  }
  return out;
}

const SIDE_LABELS = {
  bare: 'without instrumentation',
  sdk: 'NodeSDK, no DiagInstrumentation',
  phase1: 'with Phase 1',
  phase2: 'with Phase 1 + Phase 2',
};

/** Prints `summariseSides`' result as a table under `title`. Shared with bench/startup/vendure.js. */
function printSides(title, result) {
  console.log(title);
  console.log('  side                            bootstrap ms  ratio to SDK | process start→ready ms  ratio to SDK');
  for (const side of SIDES.filter((s) => result[s] !== undefined)) {
    const x = result[side];
    console.log(
      `  ${SIDE_LABELS[side].padEnd(32)} ${x.boot.toFixed(1).padStart(10)}  ${x.bootToSdk.toFixed(3).padStart(12)} | ${x.total.toFixed(1).padStart(22)}  ${x.totalToSdk.toFixed(3).padStart(12)}`,
    );
  }
}

module.exports = { SIDES, measureStartup, sideEnv, summariseSides, printSides };
if (require.main !== module) return;

for (const tree of [false, true]) {
  const r = measureStartup({ tree });
  printSides(
    `NestJS start-up, ${PROVIDERS} providers${tree ? ', large dependency tree' : ''} (${r.modules} modules), ${RUNS} alternating runs, medians:`,
    r,
  );
}

const { BeanGraph } = require(path.join(root, 'dist', 'ghost', 'analysis', 'bean-graph.js'));
const { findGhostCandidates } = require(path.join(root, 'dist', 'ghost', 'analysis', 'candidates.js'));
const { buildDiagReport } = require(path.join(root, 'dist', 'ghost', 'reports', 'diag-report.js'));
const times = [];
for (let r = 0; r < RUNS; r++) {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const t0 = performance.now();
  const g = new BeanGraph();
  for (let i = 0; i < 10_000; i++) {
    g.addBean({
      token: `B${i}`,
      module: `M${i % 50}`,
      kind: 'class',
      scope: 'singleton',
      role: 'provider',
      framework: i % 10 === 0,
      eager: true,
    });
  }
  for (let i = 1; i < 10_000; i++) for (let k = 0; k < 2; k++) g.addEdge(i, Math.floor(rand() * i), 'constructor');
  const p1 = findGhostCandidates(g, (b) => (b.id % 7 === 0 ? ['controller'] : []));
  buildDiagReport({ graph: g, phase1: p1, container: { name: 'bench' }, analysisMs: 0 });
  times.push(performance.now() - t0);
}
console.log(
  `Phase 1 analysis + report for 10,000 beans (graph, rules, cycles, report object): median ${median(times).toFixed(1)} ms`,
);
