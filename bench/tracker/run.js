'use strict';
// Cost of a call on a tracked bean after its first touch, against the same call on an untracked bean and on a
// bean behind an ES Proxy (the rejected design), plus the one-time first-touch cost.
//
//   npx tsc -p tsconfig.build.json && node bench/tracker/run.js [--rounds 9] [--calls 20000000] [--json]
//
// Each variant gets its own generated loop function (its own SharedFunctionInfo and feedback), so one variant's
// inline caches never make another's polymorphic. Loops sum the methods' results and print the sum, which keeps
// V8 from dropping the calls; the argument changes every iteration so nothing folds to a constant. Variants are
// interleaved inside each round, and the medians over rounds are compared, because the machine is shared.
require('reflect-metadata'); // NestJS apps load it; the tracker then copies metadata, which is part of the cost.
const path = require('node:path');
const { GhostTracker } = require(path.resolve(__dirname, '../../dist/ghost/tracking/tracker'));
const { GhostDetector } = require(path.resolve(__dirname, '../../dist/ghost/detector'));
const { DiagTelemetry } = require(path.resolve(__dirname, '../../dist/telemetry'));
const { resolveConfig } = require(path.resolve(__dirname, '../../dist/config/properties'));
const { MeterProvider } = require('@opentelemetry/sdk-metrics');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');

/**
 * A tracker as the instrumentation runs it: owned by a GhostDetector whose telemetry has live SDK instruments
 * and a tracer with a span processor, so a first touch emits the span event and metrics are observable. After
 * the first touch none of that may cost anything per call.
 */
function trackerWithTelemetry() {
  const runtime = new GhostDetector(
    resolveConfig({ ghostTracking: { enabled: true }, report: { flushIntervalMs: 0 } }, {}),
  );
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
  });
  const telemetry = new DiagTelemetry(
    runtime,
    () => tracerProvider.getTracer('bench'),
    () => undefined,
  );
  telemetry.updateMetricInstruments(new MeterProvider().getMeter('bench'));
  return runtime.tracker;
}

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const ROUNDS = opt('rounds', 9);
const CALLS = opt('calls', 20_000_000); // calls per measurement
const JSON_OUT = args.includes('--json');
const SIZES = [1, 8, 32];

// V8 caches `new Function` by source text, feedback included: two identical sources would share inline
// caches across variants. Every generated source gets a unique comment.
let uniq = 0;
const tag = () => `/* ${++uniq} */`;

/** A class with `n` real methods (method syntax, each its own function), like a service's prototype. */
function makeClass(n) {
  const body = [];
  for (let i = 0; i < n; i++) body.push(`m${i}(x) { return (x + this.k + ${i}) | 0; }`);
  // eslint-disable-next-line no-new-func
  return new Function(`${tag()} return class Svc${n} { constructor() { this.k = 1; } ${body.join('\n')} }`)();
}

/** `for` loop calling every method once per iteration, straight on the object: `o.m0(i) ... o.mN(i)`. */
function makeDirectLoop(n) {
  const calls = [];
  for (let i = 0; i < n; i++) calls.push(`s = (s + o.m${i}(i)) | 0;`);
  // eslint-disable-next-line no-new-func
  return new Function(
    'o',
    'iters',
    `${tag()} let s = 0; for (let i = 0; i < iters; i++) { ${calls.join(' ')} } return s;`,
  );
}

/** The same through references taken once, the way a router keeps `instance[method]` from bootstrap. */
function makeCapturedLoop(n) {
  const calls = [];
  for (let i = 0; i < n; i++) calls.push(`s = (s + f${i}.call(o, i)) | 0;`);
  const fs = [];
  for (let i = 0; i < n; i++) fs.push(`const f${i} = fns[${i}];`);
  // eslint-disable-next-line no-new-func
  return new Function(
    'o',
    'fns',
    'iters',
    `${tag()} ${fs.join(' ')} let s = 0; for (let i = 0; i < iters; i++) { ${calls.join(' ')} } return s;`,
  );
}

/** The rejected design: a Proxy whose get trap flips a flag when a method is read. */
function proxyOf(target) {
  const state = { touched: false };
  return new Proxy(target, {
    get(t, key, receiver) {
      const v = Reflect.get(t, key, receiver);
      if (typeof v === 'function' && !state.touched) state.touched = true;
      return v;
    },
  });
}

let sink = 0;
function time(fn) {
  const t0 = process.hrtime.bigint();
  sink = (sink + fn()) | 0;
  return Number(process.hrtime.bigint() - t0);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function steadyState(n) {
  // One class per variant, as in an application where a bean is either tracked or not: methods share their
  // feedback across all instances of a class, so a Proxy receiver would otherwise make the other variants'
  // inlined `this.k` loads polymorphic and measure that pollution instead of the variant.
  const names = Array.from({ length: n }, (_, i) => `m${i}`);
  const tracker = new GhostTracker();

  const plain = new (makeClass(n))();
  const tracked = new (makeClass(n))();
  tracker.track('tracked', tracked);
  const withTelemetry = new (makeClass(n))();
  const telemetryTracker = trackerWithTelemetry();
  telemetryTracker.track('withTelemetry', withTelemetry);
  withTelemetry.m0(0);
  if (!telemetryTracker.isTouched('withTelemetry')) throw new Error('telemetry tracker did not flip');
  const capturedTracked = names.map((k) => tracked[k]); // wrappers, captured before the touch
  tracked.m0(0); // first touch: prototype and own properties restored
  if (!tracker.isTouched('tracked')) throw new Error('tracker did not flip');
  if (capturedTracked[0] === tracked.m0) throw new Error('expected a captured wrapper');
  const proxied = proxyOf(new (makeClass(n))());
  const capturedPlain = names.map((k) => plain[k]);
  const capturedProxy = names.map((k) => proxied[k]);

  const iters = Math.max(1, Math.floor(CALLS / n));
  const variants = {
    'direct/untracked': [makeDirectLoop(n), () => [plain, iters]],
    'direct/tracked': [makeDirectLoop(n), () => [tracked, iters]],
    'direct/proxy': [makeDirectLoop(n), () => [proxied, iters]],
    'direct/telemetry': [makeDirectLoop(n), () => [withTelemetry, iters]],
    'captured/untracked': [makeCapturedLoop(n), () => [plain, capturedPlain, iters]],
    'captured/tracked': [makeCapturedLoop(n), () => [tracked, capturedTracked, iters]],
    'captured/proxy': [makeCapturedLoop(n), () => [proxied, capturedProxy, iters]],
  };
  // Warm-up: get every loop optimized before anything is timed.
  for (const [loop, argsOf] of Object.values(variants)) {
    const a = argsOf();
    a[a.length - 1] = Math.max(1, Math.floor(iters / 10));
    for (let w = 0; w < 3; w++) sink = (sink + loop(...a)) | 0;
  }
  const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const ratios = { direct: [], captured: [], directProxy: [], capturedProxy: [], directTelemetry: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const ns = {};
    for (const [name, [loop, argsOf]] of Object.entries(variants)) {
      ns[name] = time(() => loop(...argsOf())) / (iters * n);
      samples[name].push(ns[name]);
    }
    ratios.direct.push(ns['direct/tracked'] / ns['direct/untracked']);
    ratios.directTelemetry.push(ns['direct/telemetry'] / ns['direct/untracked']);
    ratios.captured.push(ns['captured/tracked'] / ns['captured/untracked']);
    ratios.directProxy.push(ns['direct/proxy'] / ns['direct/untracked']);
    ratios.capturedProxy.push(ns['captured/proxy'] / ns['captured/untracked']);
  }
  return {
    methods: n,
    nsPerCall: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)])),
    ratio: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, median(v)])),
  };
}

/** One-time costs: `track()` per bean, and the first call (which restores the bean) minus a plain call. */
function oneTime(n) {
  const Svc = makeClass(n);
  const COUNT = 2000;
  const trackNs = [];
  const firstNs = [];
  const secondNs = [];
  for (let r = 0; r < ROUNDS; r++) {
    const tracker = new GhostTracker();
    const beans = Array.from({ length: COUNT }, () => new Svc());
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < COUNT; i++) tracker.track(`b${i}`, beans[i]);
    trackNs.push(Number(process.hrtime.bigint() - t0) / COUNT);
    t0 = process.hrtime.bigint();
    for (let i = 0; i < COUNT; i++) sink = (sink + beans[i].m0(i)) | 0;
    firstNs.push(Number(process.hrtime.bigint() - t0) / COUNT);
    t0 = process.hrtime.bigint();
    for (let i = 0; i < COUNT; i++) sink = (sink + beans[i].m0(i)) | 0;
    secondNs.push(Number(process.hrtime.bigint() - t0) / COUNT);
    if (tracker.snapshot().touchedCount !== COUNT) throw new Error('not all beans flipped');
  }
  return { methods: n, trackNs: median(trackNs), firstTouchNs: median(firstNs), secondCallNs: median(secondNs) };
}

const results = { node: process.version, rounds: ROUNDS, callsPerMeasurement: CALLS, steady: [], oneTime: [] };
for (const n of SIZES) results.steady.push(steadyState(n));
for (const n of SIZES) results.oneTime.push(oneTime(n));

if (JSON_OUT) {
  console.log(JSON.stringify(results, null, 2));
} else {
  const f = (x) => x.toFixed(2).padStart(7);
  console.log(`node ${results.node}, ${ROUNDS} rounds, medians; ns per call after first touch`);
  console.log('methods | path     | untracked | tracked |  proxy  | tracked/untracked | proxy/untracked');
  for (const s of results.steady) {
    for (const p of ['direct', 'captured']) {
      console.log(
        `${String(s.methods).padStart(7)} | ${p.padEnd(8)} | ${f(s.nsPerCall[`${p}/untracked`])}   | ${f(s.nsPerCall[`${p}/tracked`])} | ${f(s.nsPerCall[`${p}/proxy`])} |           ${s.ratio[p].toFixed(3)} |          ${s.ratio[`${p}Proxy`].toFixed(2)}`,
      );
    }
  }
  console.log('\ndirect path, tracked by a runtime with live OpenTelemetry metrics and tracer (after first touch)');
  console.log('methods | untracked | tracked+telemetry | ratio');
  for (const s of results.steady) {
    console.log(
      `${String(s.methods).padStart(7)} | ${f(s.nsPerCall['direct/untracked'])}   | ${f(s.nsPerCall['direct/telemetry']).padStart(17)} | ${s.ratio.directTelemetry.toFixed(3)}`,
    );
  }
  console.log('\none-time costs (ns per bean, medians)');
  console.log('methods | track() | first call (restores) | second call');
  for (const o of results.oneTime) {
    console.log(
      `${String(o.methods).padStart(7)} | ${f(o.trackNs)} | ${f(o.firstTouchNs).padStart(21)} | ${f(o.secondCallNs)}`,
    );
  }
}
console.error(`(checksum ${sink})`);
