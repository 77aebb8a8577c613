'use strict';
// Heap that Phase 2 tracking adds per bean once the application has started, on the generated application of
// bench/startup/app.js: heapUsed after two full GCs with tracking on minus with it off (Phase 1 on both
// sides), alternating fresh processes, median over pairs, divided by the number of providers.
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
    const out = execFileSync(process.execPath, ['--expose-gc', '--require', preload, app], {
      env: {
        ...process.env,
        PROVIDERS: String(providers),
        EXTRA_METHODS: String(extraMethods),
        DIAG_REPORT_DIR: reportDir,
        DIAG_LOG_LEVEL: 'warn',
        DIAG_GHOST_TRACKING_ENABLED: tracked ? 'true' : 'false',
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_METRICS_EXPORTER: 'none',
        OTEL_LOGS_EXPORTER: 'none',
      },
      encoding: 'utf8',
    });
    return Number(/HEAP_USED (\d+)/.exec(out)[1]);
  } finally {
    fs.rmSync(reportDir, { recursive: true, force: true });
  }
}

/** Bytes per provider that tracking adds, median over alternating process pairs. Exported for bench/check.js. */
function measureMemory({ pairs = 7, providers = 1000, extraMethods = 0 } = {}) {
  const perBean = [];
  for (let p = 0; p < pairs; p++) {
    const sides = p % 2 === 0 ? [false, true] : [true, false];
    const [a, b] = sides.map((tracked) => heapUsed(tracked, providers, extraMethods));
    const [off, on] = sides[0] ? [b, a] : [a, b];
    perBean.push((on - off) / providers);
  }
  return { bytesPerBean: median(perBean), range: [Math.min(...perBean), Math.max(...perBean)] };
}

module.exports = { measureMemory };

if (require.main === module) {
  const pairs = arg('pairs', 7);
  const providers = arg('providers', 1000);
  const results = {};
  for (const extraMethods of [0, 8]) results[`${extraMethods + 1} method(s)`] = measureMemory({ pairs, providers, extraMethods });
  if (process.argv.includes('--json')) console.log(JSON.stringify({ node: process.version, pairs, providers, results }, null, 2));
  else {
    console.log(`node ${process.version}; ${providers} providers; ${pairs} process pairs; heap added by tracking, after start-up`);
    for (const [k, r] of Object.entries(results)) {
      console.log(`${k.padEnd(12)} ${r.bytesPerBean.toFixed(0).padStart(6)} bytes per bean (range ${r.range[0].toFixed(0)}..${r.range[1].toFixed(0)})`);
    }
  }
}
