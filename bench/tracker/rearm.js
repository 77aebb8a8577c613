'use strict';
// What re-arming for last use costs (issue #45): once per `diag.ghost-tracking.last-use-resolution-ms` the tracker
// puts the first-touch wrappers back on every touched bean, so the first call after it is seen as a use.
//
//   npm run build && node bench/tracker/rearm.js [--rounds 9] [--calls 5000000] [--beans 1000] [--json]
//
// Three figures, medians over interleaved rounds (the machine is shared: run it on a quiet one):
//  - rearm():       the re-arm itself, for `--beans` touched beans of distinct classes (the period's one pause);
//  - first call:    the first call on a bean after a re-arm (wrapper, touch, the prototype given back);
//  - calls after:   ns per call for `--calls` calls right after a re-arm and its first call, against the same loop
//                   in steady state before it: whether the prototype's change leaves the call site slower.
require('reflect-metadata'); // NestJS apps load it; the wrappers copy metadata, part of the cost.
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { GhostTracker } = require(path.resolve(__dirname, '../../dist/ghost/tracking/tracker'));

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const ROUNDS = opt('rounds', 9);
const CALLS = opt('calls', 5_000_000);
const BEANS = opt('beans', 1_000);
const JSON_OUT = args.includes('--json');

/** `n` distinct service classes of four methods each, like a real application's providers. */
function services(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    // eslint-disable-next-line no-new-func
    const Cls = new Function(
      `return class Service${i} { constructor() { this.k = ${i}; } ` +
        'a(x) { return (x + this.k) | 0; } b(x) { return x ^ this.k; } c() { return this.k; } d() { return 0; } }',
    )();
    out.push(new Cls());
  }
  return out;
}

/** A loop of its own (own feedback) over one bean's method. */
function loop() {
  // eslint-disable-next-line no-new-func
  return new Function('bean', 'calls', 'let s = 0; for (let i = 0; i < calls; i++) s = (s + bean.a(i)) | 0; return s;');
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function round() {
  const tracker = new GhostTracker();
  let uses = 0;
  tracker.onUse(() => uses++);
  const beans = services(BEANS);
  beans.forEach((b, i) => tracker.track(`Service${i}`, b));
  for (const b of beans) b.a(1); // every bean touched once: all re-armable
  const hot = beans[0];
  const run = loop();
  let sink = run(hot, CALLS); // warm: optimised on the plain method
  let t = performance.now();
  sink ^= run(hot, CALLS);
  const steady = ((performance.now() - t) * 1e6) / CALLS;

  t = performance.now();
  tracker.rearm();
  const rearm = performance.now() - t;

  t = performance.now();
  sink ^= hot.a(2);
  const first = (performance.now() - t) * 1e6;

  t = performance.now();
  sink ^= run(hot, CALLS);
  const after = ((performance.now() - t) * 1e6) / CALLS;
  if (uses !== BEANS + 1) throw new Error(`expected ${BEANS + 1} uses, saw ${uses}`);
  return { steady, rearm, first, after, sink };
}

const rows = [];
for (let r = 0; r < ROUNDS; r++) rows.push(round());
const result = {
  beans: BEANS,
  calls: CALLS,
  rounds: ROUNDS,
  rearmMs: median(rows.map((r) => r.rearm)),
  firstCallNs: median(rows.map((r) => r.first)),
  steadyNsPerCall: median(rows.map((r) => r.steady)),
  afterRearmNsPerCall: median(rows.map((r) => r.after)),
};
if (JSON_OUT) console.log(JSON.stringify(result));
else {
  console.log(`re-arm of ${BEANS} touched beans: ${result.rearmMs.toFixed(2)} ms (median of ${ROUNDS})`);
  console.log(`first call after the re-arm: ${Math.round(result.firstCallNs)} ns`);
  console.log(
    `calls: ${result.steadyNsPerCall.toFixed(2)} ns steady, ${result.afterRearmNsPerCall.toFixed(2)} ns in the ${CALLS} calls right after`,
  );
}
