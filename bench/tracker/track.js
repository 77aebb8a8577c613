'use strict';
// What Phase 2 costs a bean at start-up: GhostTracker.track() on fresh classes (one instance each, a field and
// `methods` methods, reflect-metadata loaded as in a Nest app), cold as at boot: each fresh process tracks
// `beans` objects once. Median over processes of the mean microseconds per track().
//
//   npm run build && node bench/tracker/track.js [--processes 9] [--beans 1000] [--methods 1]
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { arg, median } = require('../sketch/workload');

const root = path.resolve(__dirname, '..', '..');

function child() {
  require('reflect-metadata');
  const { GhostTracker } = require(path.join(root, 'dist', 'ghost', 'tracking', 'tracker.js'));
  const beans = Number(process.env.BEANS);
  const methods = Number(process.env.METHODS);
  const objects = [];
  for (let i = 0; i < beans; i++) {
    const cls = {
      [`Service${i}`]: class {
        constructor() {
          this.deps = [i];
        }
      },
    }[`Service${i}`];
    for (let m = 0; m < methods; m++) {
      const method = {
        [`method${m}`](x) {
          return x + m;
        },
      }[`method${m}`];
      Object.defineProperty(cls.prototype, `method${m}`, {
        value: method,
        writable: true,
        enumerable: false,
        configurable: true,
      });
    }
    objects.push(new cls());
  }
  const tracker = new GhostTracker();
  const t0 = performance.now();
  for (let i = 0; i < beans; i++) tracker.track(`Service${i}`, objects[i]);
  console.log(`US_PER_TRACK ${(((performance.now() - t0) * 1000) / beans).toFixed(2)}`);
}

if (process.env.BENCH_TRACK_CHILD === '1') {
  child();
} else {
  const processes = arg('processes', 9);
  const beans = arg('beans', 1000);
  const methods = arg('methods', 1);
  const samples = [];
  for (let p = 0; p < processes; p++) {
    const out = execFileSync(process.execPath, [__filename], {
      env: { ...process.env, BENCH_TRACK_CHILD: '1', BEANS: String(beans), METHODS: String(methods) },
      encoding: 'utf8',
    });
    samples.push(Number(/US_PER_TRACK ([\d.]+)/.exec(out)[1]));
  }
  console.log(
    `node ${process.version}; track() on ${beans} fresh classes with ${methods} method(s), cold, ${processes} processes: ` +
      `median ${median(samples).toFixed(1)} µs per bean (range ${Math.min(...samples).toFixed(1)}..${Math.max(...samples).toFixed(1)})`,
  );
}
