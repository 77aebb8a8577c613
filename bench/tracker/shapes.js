'use strict';
// Tracked/untracked per call shape, on a real NestJS application context (bench/tracker/shapes-app.js), with
// process-level repetition: JIT decisions and object layouts differ from one process to the next, so each
// side runs in several fresh processes, sides alternating (and their order flipping) so that drift on a shared
// machine hits both alike. The ratio of a shape is the median over process pairs of tracked ÷ untracked.
//
//   npm run bench:tracker -- [--pairs 7] [--rounds 5] [--calls 20000000] [--proxy] [--json]
//
// Both sides run with DiagInstrumentation in a NodeSDK (Phase 1 on); only `diag.ghost-tracking.enabled` differs.
// `--proxy` adds a third side: no instrumentation, an ES Proxy per bean through Nest's `instrument.instanceDecorator`.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { arg, median } = require('../sketch/workload');

const root = path.resolve(__dirname, '..', '..');
const preload = path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs');

/** Runs one side in a fresh process; returns { shape: ns | { error } }. */
function runSide(variant, { rounds, calls }) {
  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-bench-shapes-'));
  try {
    const out = execFileSync(
      process.execPath,
      [...(variant === 'proxy' ? [] : ['--require', preload]), path.join(__dirname, 'shapes-app.js')],
      {
        env: {
          ...process.env,
          SHAPE_VARIANT: variant,
          SHAPE_ROUNDS: String(rounds),
          SHAPE_CALLS: String(calls),
          DIAG_REPORT_DIR: reportDir,
          DIAG_LOG_LEVEL: 'warn',
          DIAG_GHOST_TRACKING_ENABLED: variant === 'tracked' ? 'true' : 'false',
          OTEL_TRACES_EXPORTER: 'none',
          OTEL_METRICS_EXPORTER: 'none',
          OTEL_LOGS_EXPORTER: 'none',
        },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    return JSON.parse(/^SHAPES (.*)$/m.exec(out)[1]);
  } finally {
    fs.rmSync(reportDir, { recursive: true, force: true });
  }
}

/**
 * Alternating process pairs. Returns per shape: median ns of each side and the median of per-pair ratios.
 * Exported for bench/check.js.
 */
function measureShapes({ pairs = 7, rounds = 5, calls = 20_000_000, proxy = false, onPair } = {}) {
  const per = { untracked: [], tracked: [], proxy: [] };
  for (let p = 0; p < pairs; p++) {
    const order = p % 2 === 0 ? ['untracked', 'tracked'] : ['tracked', 'untracked'];
    if (proxy) order.push('proxy');
    for (const variant of order) per[variant].push(runSide(variant, { rounds, calls }));
    onPair?.(p + 1, pairs);
  }
  const shapes = Object.keys(per.untracked[0]);
  const result = {};
  for (const shape of shapes) {
    const ns = (side) => per[side].map((r) => r[shape]).filter((x) => typeof x === 'number');
    const ratios = per.tracked.map((r, i) => r[shape] / per.untracked[i][shape]).filter(Number.isFinite);
    const proxyError = per.proxy.find((r) => typeof r[shape] === 'object')?.[shape]?.error;
    result[shape] = {
      untracked: median(ns('untracked')),
      tracked: median(ns('tracked')),
      ratio: median(ratios),
      ratioRange: [Math.min(...ratios), Math.max(...ratios)],
      ...(proxy ? (proxyError ? { proxyError } : { proxy: median(ns('proxy')) }) : {}),
    };
  }
  return result;
}

module.exports = { measureShapes };

if (require.main === module) {
  const pairs = arg('pairs', 7);
  const rounds = arg('rounds', 5);
  const calls = arg('calls', 20_000_000);
  const proxy = process.argv.includes('--proxy');
  const result = measureShapes({
    pairs,
    rounds,
    calls,
    proxy,
    onPair: (i, n) => process.stderr.write(`pair ${i}/${n}\r`),
  });
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ node: process.version, pairs, rounds, calls, shapes: result }, null, 2));
  } else {
    const f = (x) => (typeof x === 'number' ? x.toFixed(2) : '—').padStart(9);
    console.log(
      `node ${process.version}; ${pairs} process pairs × ${rounds} rounds; ns per call after first touch (medians)`,
    );
    console.log(`shape              | untracked |   tracked | ${proxy ? '    Proxy | ' : ''}tracked/untracked (range)`);
    for (const [shape, r] of Object.entries(result)) {
      const px = proxy ? `${r.proxyError ? '   throws' : f(r.proxy)} | ` : '';
      console.log(
        `${shape.padEnd(18)} | ${f(r.untracked)} | ${f(r.tracked)} | ${px}${r.ratio.toFixed(3)} (${r.ratioRange[0].toFixed(2)}–${r.ratioRange[1].toFixed(2)})`,
      );
    }
  }
}
