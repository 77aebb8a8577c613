'use strict';
// One side of the call-shape benchmark: a real NestJS application context whose beans are called the ways
// applications call them, timed after every bean has been touched once. Started by bench/tracker/shapes.js with
// the instrumentation preloaded (tracking on or off), or with an ES Proxy installed through Nest's own
// `instrument.instanceDecorator` (the rejected design, for reference). Prints one JSON line:
// `SHAPES {"direct": ns, ...}` with the median over rounds of ns per call.
require('reflect-metadata');
const { Injectable, Module, Controller, Inject } = require('@nestjs/common');
const { NestFactory, ExternalContextCreator } = require('@nestjs/core');
const { ScheduleModule, Cron, SchedulerRegistry } = require('@nestjs/schedule');
const { EventEmitterModule, OnEvent, EventEmitter2 } = require('@nestjs/event-emitter');

const ROUNDS = Number(process.env.SHAPE_ROUNDS || 5);
// Calls per measurement for the cheapest shapes; the others scale down so that each measurement takes a
// similar time (tens of milliseconds), long enough for the timer and short enough to interleave many rounds.
// The shapes that allocate (async, route handler, cron, event listener) need windows of 20 ms or more at
// bench:check's 5·10⁶ calls: a young-generation scavenge costs 1-1.5 ms and comes every few milliseconds, so
// a 2 ms window (the event listener's until 2026-11-25) either caught one or did not, and read 140-450 ns per
// call within one process, alternating round by round. Its tracked/untracked ratio was a lottery decided by
// where GC fell (0.6-1.9 over pairs; 1.1-1.65 as a median once the heap's layout shifted); with 20 ms windows
// every side pays its share of scavenges and the pairs read 0.8-1.2.
const CALLS = Number(process.env.SHAPE_CALLS || 20_000_000);
const calls = (divisor) => Math.max(100, Math.floor(CALLS / divisor));
const PROXY = process.env.SHAPE_VARIANT === 'proxy';

const paramtypes = (cls, types) => Reflect.defineMetadata('design:paramtypes', types, cls);

// ---- the beans being called: one class per shape, so no shape's inline caches see another's objects ----
class Plain {
  constructor() {
    this.k = 1;
  }
  value(x) {
    return (x + this.k) | 0;
  }
}
class Counter {
  constructor() {
    this.n = 0;
  }
  inc(x) {
    this.n = (this.n + x) | 0;
    return this.n;
  }
}
class Secretive {
  #seed = 3;
  #mix(x) {
    return (x ^ this.#seed) | 0;
  }
  read(x) {
    return this.#mix(x);
  }
}
class WithGetter {
  constructor() {
    this.k = 2;
  }
  get current() {
    return this.k;
  }
  bump() {
    this.k = (this.k + 1) | 0;
  }
}
class Asynchronous {
  constructor() {
    this.k = 1;
  }
  async value(x) {
    return (x + this.k) | 0;
  }
}
class Bound {
  constructor() {
    this.k = 4;
  }
  value(x) {
    return (x + this.k) | 0;
  }
}
class Listener {
  constructor() {
    this.seen = 0;
  }
  handle(x) {
    this.seen = (this.seen + x) | 0;
  }
}
class Scheduled {
  constructor() {
    this.ticks = 0;
  }
  tick() {
    this.ticks = (this.ticks + 1) | 0;
  }
}
class Handler {
  constructor() {
    this.k = 5;
  }
  handle(x) {
    return (x + this.k) | 0;
  }
}
/** Bound to an abstract token in another module, injected by interface (`@Inject(PAYMENTS) p: Payments`). */
class StripePayments {
  constructor() {
    this.total = 0;
  }
  charge(x) {
    this.total = (this.total + x) | 0;
    return this.total;
  }
}
const PAYMENTS = Symbol('Payments');

for (const cls of [Plain, Counter, Secretive, WithGetter, Asynchronous, Bound, Listener, Scheduled, StripePayments]) {
  Injectable()(cls);
  paramtypes(cls, []);
  cls.benchTarget = true;
}
Controller('bench')(Handler);
paramtypes(Handler, []);
Handler.benchTarget = true;
OnEvent('bench.event')(Listener.prototype, 'handle', Object.getOwnPropertyDescriptor(Listener.prototype, 'handle'));
Cron('0 0 1 1 *', { name: 'bench-tick' })(
  Scheduled.prototype,
  'tick',
  Object.getOwnPropertyDescriptor(Scheduled.prototype, 'tick'),
);

class PaymentsModule {}
Module({ providers: [{ provide: PAYMENTS, useClass: StripePayments }], exports: [PAYMENTS] })(PaymentsModule);

// ---- the caller: a bean whose methods are the loops, as a controller or service calling its dependencies ----
class Runner {
  constructor(plain, counter, secretive, withGetter, asynchronous, bound, payments, emitter, registry) {
    Object.assign(this, { plain, counter, secretive, withGetter, asynchronous, payments, emitter, registry });
    // Captured at construction, before anything was called: a reference that outlives the first touch.
    this.boundValue = bound.value.bind(bound);
  }
  /** What a router does at bootstrap: keep `instance[method]` (read before any call) in the framework's pipeline. */
  captureHandlers(container, controller) {
    const creator = ExternalContextCreator.fromContainer(container);
    this.routeHandler = creator.create(controller, controller.handle, 'handle');
    this.cronJob = this.registry.getCronJob('bench-tick');
  }
  direct(n) {
    let s = 0;
    for (let i = 0; i < n; i++) s = (s + this.plain.value(i)) | 0;
    return s;
  }
  fieldWrite(n) {
    let s = 0;
    for (let i = 0; i < n; i++) s = (s + this.counter.inc(i & 7)) | 0;
    return s;
  }
  privateRead(n) {
    let s = 0;
    for (let i = 0; i < n; i++) s = (s + this.secretive.read(i)) | 0;
    return s;
  }
  getter(n) {
    let s = 0;
    for (let i = 0; i < n; i++) s = (s + this.withGetter.current + i) | 0;
    this.withGetter.bump();
    return s;
  }
  async asyncMethod(n) {
    let s = 0;
    for (let i = 0; i < n; i++) s = (s + (await this.asynchronous.value(i))) | 0;
    return s;
  }
  bound(n) {
    let s = 0;
    const f = this.boundValue;
    for (let i = 0; i < n; i++) s = (s + f(i)) | 0;
    return s;
  }
  interfaceTyped(n) {
    let s = 0;
    for (let i = 0; i < n; i++) s = (s + this.payments.charge(i & 7)) | 0;
    return s;
  }
  async routeHandler_(n) {
    let s = 0;
    for (let i = 0; i < n; i++) s = (s + (await this.routeHandler(i))) | 0;
    return s;
  }
  async cron(n) {
    for (let i = 0; i < n; i++) await this.cronJob.fireOnTick();
    return n;
  }
  // Nest's @OnEvent wrapper is an async function, so each emit leaves a promise job queued. Yielding every 1,024
  // emits lets them run, as an application's event loop would; without it a 125,000-emit window holds them all
  // until it ends, and what it measures is their promotion to the old generation (600-1,000 ns a call).
  async eventListener(n) {
    for (let i = 0; i < n; i++) {
      this.emitter.emit('bench.event', i & 7);
      if ((i & 1023) === 1023) await null;
    }
    return n;
  }
}
Injectable()(Runner);
Inject(PAYMENTS)(Runner, undefined, 6);
paramtypes(Runner, [
  Plain,
  Counter,
  Secretive,
  WithGetter,
  Asynchronous,
  Bound,
  Object,
  EventEmitter2,
  SchedulerRegistry,
]);

class BenchModule {}
Module({
  imports: [PaymentsModule, ScheduleModule.forRoot(), EventEmitterModule.forRoot()],
  providers: [Plain, Counter, Secretive, WithGetter, Asynchronous, Bound, Listener, Scheduled, Runner],
  controllers: [Handler],
})(BenchModule);

/** shape → [runner method, calls per measurement]. */
const SHAPES = {
  direct: ['direct', calls(1)],
  'field-write': ['fieldWrite', calls(1)],
  'private-field': ['privateRead', calls(1)],
  getter: ['getter', calls(1)],
  'interface-typed': ['interfaceTyped', calls(1)],
  'bound-at-startup': ['bound', calls(1)],
  async: ['asyncMethod', calls(10)],
  'route-handler': ['routeHandler_', calls(100)],
  'cron-job': ['cron', calls(200)],
  'event-listener': ['eventListener', calls(40)],
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function proxyDecorator(instance) {
  if (!instance || !instance.constructor || instance.constructor.benchTarget !== true) return instance;
  let touched = false;
  return new Proxy(instance, {
    get(t, key, receiver) {
      const v = Reflect.get(t, key, receiver);
      if (!touched && typeof v === 'function') touched = true;
      return v;
    },
  });
}

(async () => {
  const app = await NestFactory.createApplicationContext(BenchModule, {
    logger: false,
    ...(PROXY ? { instrument: { instanceDecorator: proxyDecorator } } : {}),
  });
  const runner = app.get(Runner);
  runner.captureHandlers(app.container, app.get(Handler));
  let sink = 0;
  const run = async (method, n) => {
    const t0 = process.hrtime.bigint();
    sink = (sink + (await runner[method](n))) | 0;
    return Number(process.hrtime.bigint() - t0) / n;
  };
  const samples = Object.fromEntries(Object.keys(SHAPES).map((k) => [k, []]));
  const failed = {};
  // Warm-up: first touches, then optimized loops, before anything is timed.
  for (const [shape, [method, n]] of Object.entries(SHAPES)) {
    try {
      for (let w = 0; w < 3; w++) await run(method, Math.max(1, Math.floor(n / 5)));
    } catch (err) {
      failed[shape] = String(err && err.message);
    }
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const [shape, [method, n]] of Object.entries(SHAPES)) {
      if (!(shape in failed)) samples[shape].push(await run(method, n));
    }
  }
  const result = {};
  for (const shape of Object.keys(SHAPES))
    result[shape] = shape in failed ? { error: failed[shape] } : median(samples[shape]);
  console.log(`SHAPES ${JSON.stringify(result)}`);
  console.error(`(checksum ${sink})`);
  await app.close();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
