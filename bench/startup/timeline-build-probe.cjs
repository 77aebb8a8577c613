'use strict';
// For bench/startup/timeline-share.js: when the benchmark app exits at ready (DIAG_BENCH_EXIT_AT_READY), builds
// the start-up timeline from the process's record 21 times and prints the median time of one build, with the
// record's size. What a read of `{base}/startup` or the report's section costs, after the start-up.
const path = require('node:path');

const dist = path.resolve(__dirname, '..', '..', 'dist');
const { buildBootProfile } = require(path.join(dist, 'ghost', 'reports', 'boot-profile.js'));
const { bootRecord } = require(path.join(dist, 'shared', 'boot-clock.js'));

const reallyExit = process.reallyExit;
process.reallyExit = (code) => {
  const record = bootRecord();
  const times = [];
  let steps = 0;
  for (let i = 0; i < 21; i++) {
    const t0 = performance.now();
    const profile = buildBootProfile({
      ...record,
      timeOrigin: performance.timeOrigin,
      nodeEnvironment: performance.nodeTiming.environment,
      nodeBootstrapEnd: performance.nodeTiming.bootstrapComplete,
      mainFile: require.main?.filename,
      ownRoot: dist + path.sep,
      cachedFiles: Object.keys(require.cache),
      now: performance.now(),
    });
    times.push(performance.now() - t0);
    steps = profile.steps.length;
  }
  times.sort((a, b) => a - b);
  process.stdout.write(`BUILD ${JSON.stringify({ loads: record.loads.count, steps, ms: times[10] })}\n`);
  reallyExit.call(process, code);
};
