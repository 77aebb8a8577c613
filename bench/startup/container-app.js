'use strict';
// A tsyringe, awilix or InversifyJS application of N generated bindings (CONTAINER=tsyringe|awilix|inversify,
// BINDINGS=1000): each
// class needs up to three earlier ones, a twentieth are values and a twentieth factories; the last third is
// resolved at start-up (with what it needs), the rest never. Then an HTTP server listens, which is "ready".
// Prints `BOOT_MS <ms>` from the first line of this file to `listening`, and `TOTAL_MS <ms>` from process
// start (preload included) to `listening`.
const t0 = performance.now();
require('reflect-metadata');
const http = require('node:http');

const N = Number(process.env.BINDINGS || 1000);
const CONTAINER = process.env.CONTAINER || 'tsyringe';
let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

const classes = [];
const needs = [];
for (let i = 0; i < N; i++) {
  const deps = [];
  if (i > 0) for (let k = 0; k < 3; k++) if (rand() < 0.55) deps.push(Math.floor(rand() * i));
  needs.push(deps);
  classes.push(
    {
      [`Service${i}`]: class {
        constructor(...args) {
          this.deps = args;
        }
        work() {
          return i;
        }
      },
    }[`Service${i}`],
  );
}
const roots = [];
for (let i = Math.floor((2 * N) / 3); i < N; i++) roots.push(i);

if (CONTAINER === 'tsyringe') {
  const { container, injectable, Lifecycle } = require('tsyringe');
  classes.forEach((cls, i) => {
    Reflect.defineMetadata(
      'design:paramtypes',
      needs[i].map((d) => classes[d]),
      cls,
    );
    injectable()(cls);
    if (i % 2 === 0) container.register(cls, { useClass: cls }, { lifecycle: Lifecycle.Singleton });
  });
  for (let i = 0; i < N / 20; i++) container.register(`VALUE_${i}`, { useValue: { i } });
  for (let i = 0; i < N / 20; i++)
    container.register(`FACTORY_${i}`, { useFactory: (c) => ({ s: c.resolve(classes[i]) }) });
  for (const i of roots) container.resolve(classes[i]);
} else if (CONTAINER === 'inversify') {
  const { Container, decorate, inject, injectable } = require('inversify');
  const container = new Container();
  classes.forEach((cls, i) => {
    decorate(injectable(), cls);
    needs[i].forEach((d, k) => decorate(inject(classes[d]), cls, k));
    const bound = container.bind(cls).toSelf();
    if (i % 2 === 0) bound.inSingletonScope();
  });
  for (let i = 0; i < N / 20; i++) container.bind(`VALUE_${i}`).toConstantValue({ i });
  for (let i = 0; i < N / 20; i++) container.bind(`FACTORY_${i}`).toDynamicValue(() => ({ i }));
  for (const i of roots) container.get(classes[i]);
} else {
  const { asFunction, asValue, createContainer } = require('awilix');
  const container = createContainer();
  const name = (i) => `service${i}`;
  classes.forEach((cls, i) => {
    // PROXY injection (awilix's default): the factory reads what it needs from the cradle
    const resolver = asFunction((cradle) => new cls(...needs[i].map((d) => cradle[name(d)])));
    container.register(name(i), i % 2 === 0 ? resolver.singleton() : resolver);
  });
  for (let i = 0; i < N / 20; i++) container.register(`value${i}`, asValue({ i }));
  for (let i = 0; i < N / 20; i++)
    container.register(
      `factory${i}`,
      asFunction(() => ({ i })),
    );
  for (const i of roots) container.resolve(name(i));
}

const server = http.createServer((_req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => {
  console.log(`BOOT_MS ${(performance.now() - t0).toFixed(2)}`);
  console.log(`TOTAL_MS ${performance.now().toFixed(2)}`);
  // bench/startup/instructions.js counts the instructions to this point: no exit handlers, no analysis after it.
  if (process.env.DIAG_BENCH_EXIT_AT_READY === '1') process.reallyExit(0);
  server.close();
});
