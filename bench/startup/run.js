'use strict';
// Start-up overhead of the instrumentation on a NestJS app of 1,000 generated providers, and the Phase 1
// analysis time on a synthetic graph of 10,000 beans. Runs with and without the instrumentation alternate,
// so drift on a shared machine hits both sides alike; the figure that counts is the ratio of medians.
//   npm run bench:startup -- [--runs 9] [--providers 1000]
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const RUNS = arg('runs', 9);
const PROVIDERS = arg('providers', 1000);
const root = path.resolve(__dirname, '..', '..');
const preload = path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function boot(instrumented, tracking, sdkOnly = false) {
  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-bench-'));
  const out = execFileSync(process.execPath, [...(instrumented ? ['--require', preload] : []), path.join(__dirname, 'app.js')], {
    env: {
      ...process.env,
      PROVIDERS: String(PROVIDERS),
      DIAG_REPORT_DIR: reportDir,
      DIAG_LOG_LEVEL: 'warn',
      DIAG_GHOST_TRACKING_ENABLED: tracking ? 'true' : 'false',
      DIAG_BENCH_SDK_ONLY: sdkOnly ? '1' : '0',
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
    },
    encoding: 'utf8',
  });
  fs.rmSync(reportDir, { recursive: true, force: true });
  return Number(/BOOT_MS ([\d.]+)/.exec(out)[1]);
}

const bare = [];
const sdkOnly = [];
const phase1 = [];
const phase2 = [];
boot(false, false); // warm the file cache
for (let i = 0; i < RUNS; i++) {
  bare.push(boot(false, false));
  sdkOnly.push(boot(true, false, true));
  phase1.push(boot(true, false));
  phase2.push(boot(true, true));
}
console.log(`NestJS start-up, ${PROVIDERS} providers, ${RUNS} alternating runs (median ms):`);
console.log(`  without instrumentation      ${median(bare).toFixed(1)}`);
const vs = (xs) => `ratio to bare ${(median(xs) / median(bare)).toFixed(3)}, to SDK only ${(median(xs) / median(sdkOnly)).toFixed(3)}`;
console.log(`  NodeSDK, no DiagInstrumentation ${median(sdkOnly).toFixed(1)}   ${vs(sdkOnly)}`);
console.log(`  with Phase 1                 ${median(phase1).toFixed(1)}   ${vs(phase1)}`);
console.log(`  with Phase 1 + Phase 2       ${median(phase2).toFixed(1)}   ${vs(phase2)}`);

const { BeanGraph } = require(path.join(root, 'dist', 'ghost', 'bean-graph.js'));
const { findGhostCandidates } = require(path.join(root, 'dist', 'ghost', 'candidates.js'));
const { buildDiagReport } = require(path.join(root, 'dist', 'ghost', 'reports.js'));
const times = [];
for (let r = 0; r < RUNS; r++) {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const t0 = performance.now();
  const g = new BeanGraph();
  for (let i = 0; i < 10_000; i++) {
    g.addBean({ token: `B${i}`, module: `M${i % 50}`, kind: 'class', scope: 'singleton', role: 'provider', framework: i % 10 === 0, eager: true });
  }
  for (let i = 1; i < 10_000; i++) for (let k = 0; k < 2; k++) g.addEdge(i, Math.floor(rand() * i), 'constructor');
  const p1 = findGhostCandidates(g, (b) => (b.id % 7 === 0 ? ['controller'] : []));
  buildDiagReport({ graph: g, phase1: p1, container: { name: 'bench' }, analysisMs: 0 });
  times.push(performance.now() - t0);
}
console.log(`Phase 1 analysis + report for 10,000 beans (graph, rules, cycles, report object): median ${median(times).toFixed(1)} ms`);
