'use strict';
// What noticing a lookup by token costs (issue #34): `app.get(Token)` and `moduleRef.get(Token)` on a NestJS 11
// application context of 200 providers, in fresh processes side by side: NestJS with the OpenTelemetry SDK alone,
// and with the instrumentation (Phase 1, so AbstractInstanceResolver#find is wrapped and the candidates are
// watched). The looked-up bean is not a candidate, the common case on a request path: the wrapper's work is a
// size test and one map look-up. Ratios are medians of per-process ns/lookup, sides alternating.
//   npm run bench:lookups -- [--runs 7] [--lookups 2000000] [--json]
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { arg, median } = require('../sketch/workload');

const root = path.resolve(__dirname, '..', '..');
const preload = path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs');
const RUNS = arg('runs', 7);
const LOOKUPS = arg('lookups', 2_000_000);
const SIDES = ['sdk', 'diag'];

/** The measured process: builds the context, warms up, then times LOOKUPS lookups of each kind. */
const CHILD = `
require('reflect-metadata');
const { Injectable, Module } = require('@nestjs/common');
const { NestFactory, ModuleRef } = require('@nestjs/core');
const providers = [];
for (let i = 0; i < 200; i++) {
  const cls = { ['Service' + i]: class { run() { return i; } } }['Service' + i];
  Injectable()(cls);
  providers.push(cls);
}
// Nothing injects the last ten: they are the candidates the instrumentation watches.
class Root { constructor(...deps) { this.deps = deps; } }
Injectable()(Root);
Reflect.defineMetadata('design:paramtypes', providers.slice(0, 190), Root);
class AppModule {}
Module({ providers: [...providers, Root] })(AppModule);
(async () => {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  await new Promise((r) => setTimeout(r, 50)); // the analysis's turn has passed: candidates are watched
  const moduleRef = app.get(ModuleRef);
  const target = providers[7];
  const N = ${LOOKUPS};
  const time = (fn) => {
    for (let i = 0; i < 20000; i++) fn();
    const t0 = process.hrtime.bigint();
    let s = 0;
    for (let i = 0; i < N; i++) s += fn().run();
    const ns = Number(process.hrtime.bigint() - t0) / N;
    if (s === -1) console.log(s);
    return ns;
  };
  const appGet = time(() => app.get(target));
  const refGet = time(() => moduleRef.get(target));
  console.log('RESULT ' + JSON.stringify({ appGet, refGet }));
  await app.close();
})();
`;

function measure(side) {
  const env = {
    ...process.env,
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
    DIAG_LOG_LEVEL: 'error',
  };
  if (side === 'sdk') env.DIAG_BENCH_SDK_ONLY = '1';
  const out = execFileSync(process.execPath, ['--require', preload, '-e', CHILD], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`no RESULT line from the ${side} process:\n${out}`);
  return JSON.parse(line.slice('RESULT '.length));
}

const samples = { sdk: [], diag: [] };
for (let run = 0; run < RUNS; run++) {
  const order = run % 2 === 0 ? SIDES : [...SIDES].reverse();
  for (const side of order) samples[side].push(measure(side));
}
const summary = {};
for (const kind of ['appGet', 'refGet']) {
  const sdk = median(samples.sdk.map((s) => s[kind]));
  const diag = median(samples.diag.map((s) => s[kind]));
  const ratios = samples.diag.map((s, i) => s[kind] / samples.sdk[i][kind]);
  summary[kind] = {
    sdkNs: Number(sdk.toFixed(1)),
    diagNs: Number(diag.toFixed(1)),
    ratio: Number(median(ratios).toFixed(3)),
  };
}
if (process.argv.includes('--json')) console.log(JSON.stringify({ runs: RUNS, lookups: LOOKUPS, ...summary }));
else {
  console.log(`lookups by token, ${RUNS} processes per side, ${LOOKUPS} lookups each (ns per lookup + run()):`);
  for (const [kind, s] of Object.entries(summary)) {
    console.log(
      `  ${kind === 'appGet' ? 'app.get      ' : 'moduleRef.get'}  SDK alone ${s.sdkNs} ns, with diag ${s.diagNs} ns, ratio ${s.ratio}`,
    );
  }
}
