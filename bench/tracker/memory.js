'use strict';
// Heap that Phase 2 tracking adds per bean once the application has started, on the generated application of
// bench/startup/app.js: heapUsed after two full GCs with tracking on minus with it off (Phase 1 on both
// sides), alternating fresh processes. Measured at two application sizes, so that what grows with the beans
// (the per-bean figure: the slope) is told apart from what a process pays once (code compiled for tracking,
// tables' first pages: the fixed figure). Medians over pairs.
//
//   npm run build && node bench/tracker/memory.js [--pairs 7] [--providers 1000] [--json]
//
// Measured twice: beans with one method, and beans with nine (one wrapper per method until the first touch).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { arg, median } = require('../sketch/workload');

const root = path.resolve(__dirname, '..', '..');
const preload = path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs');
const app = path.join(root, 'bench', 'startup', 'app.js');

function heapUsed(tracked, providers, extraMethods) {
  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-bench-memory-'));
  try {
    // Bytecode flushing and concurrent GC threads made heapUsed wander by ±75 KiB between identical runs;
    // without them it stays within ±25 KiB, and what tracking allocates is the same.
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '--no-flush-bytecode', '--single-threaded-gc', '--require', preload, app],
      {
        env: {
          ...process.env,
          PROVIDERS: String(providers),
          EXTRA_METHODS: String(extraMethods),
          // Until the deferred end-of-bootstrap analysis is over: it takes longer on a larger application.
          SETTLE_MS: String(Math.max(500, providers / 2)),
          DIAG_REPORT_DIR: reportDir,
          DIAG_LOG_LEVEL: 'warn',
          DIAG_GHOST_TRACKING_ENABLED: tracked ? 'true' : 'false',
          OTEL_TRACES_EXPORTER: 'none',
          OTEL_METRICS_EXPORTER: 'none',
          OTEL_LOGS_EXPORTER: 'none',
        },
        encoding: 'utf8',
      },
    );
    return Number(/HEAP_USED (\d+)/.exec(out)[1]);
  } finally {
    fs.rmSync(reportDir, { recursive: true, force: true });
  }
}

/** Heap bytes that tracking adds to one application of `providers` beans (one fresh process per side). */
function addedBytes(providers, extraMethods, trackedFirst) {
  const sides = trackedFirst ? [true, false] : [false, true];
  const [a, b] = sides.map((tracked) => heapUsed(tracked, providers, extraMethods));
  return trackedFirst ? a - b : b - a;
}

/**
 * Bytes per bean that tracking adds (the slope between `providers` and three times as many) and the fixed
 * part, medians over alternating process pairs. Exported for bench/check.js.
 */
function measureMemory({ pairs = 7, providers = 1000, extraMethods = 0 } = {}) {
  const perBean = [];
  const fixed = [];
  const large = providers * 3;
  for (let p = 0; p < pairs; p++) {
    const small = addedBytes(providers, extraMethods, p % 2 === 0);
    const big = addedBytes(large, extraMethods, p % 2 === 1);
    const slope = (big - small) / (large - providers);
    perBean.push(slope);
    fixed.push(small - slope * providers);
  }
  return {
    bytesPerBean: median(perBean),
    fixedBytes: median(fixed),
    range: [Math.min(...perBean), Math.max(...perBean)],
  };
}

module.exports = { measureMemory };

if (require.main === module) {
  const pairs = arg('pairs', 7);
  const providers = arg('providers', 1000);
  const results = {};
  for (const extraMethods of [0, 8])
    results[`${extraMethods + 1} method(s)`] = measureMemory({ pairs, providers, extraMethods });
  if (process.argv.includes('--json'))
    console.log(JSON.stringify({ node: process.version, pairs, providers, results }, null, 2));
  else {
    console.log(
      `node ${process.version}; ${providers} and ${providers * 3} providers; ${pairs} process pairs; heap added by tracking, after start-up`,
    );
    for (const [k, r] of Object.entries(results)) {
      console.log(
        `${k.padEnd(12)} ${r.bytesPerBean.toFixed(0).padStart(6)} bytes per bean (range ${r.range[0].toFixed(0)}..${r.range[1].toFixed(0)}), ` +
          `${(r.fixedBytes / 1024).toFixed(0)} KiB once`,
      );
    }
  }
}
