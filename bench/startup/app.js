'use strict';
/* global gc -- defined when run with --expose-gc (bench/tracker/memory.js) */
// A NestJS application of N generated providers with a realistic mix: chains and fan-in through constructor
// injection, some factories and values, a few controllers, a third of the providers never injected.
// Prints `BOOT_MS <ms>` measured around createApplicationContext, from the application's point of view, and
// `TOTAL_MS <ms>` from process start to ready (preload, package loading and bootstrap: what a deploy waits for).
// DEPENDENCY_TREE=1 first loads a real application's kind of dependency tree (web frameworks, the OpenTelemetry
// SDK, a Redis client, a compiler, a browser driver: about two thousand modules from this repository's own
// node_modules), since costs that grow with the number of loaded modules are invisible in a small fixture.
require('reflect-metadata');
if (process.env.DEPENDENCY_TREE === '1') {
  for (const pkg of [
    '@nestjs/platform-express',
    '@nestjs/platform-fastify',
    '@nestjs/schedule',
    '@nestjs/event-emitter',
    '@nestjs/passport',
    'passport',
    'rxjs',
    'ioredis',
    'playwright-core',
    'typescript',
    'esbuild',
    'cytoscape',
    'jest-snapshot',
  ]) {
    require(pkg);
  }
}
const { Injectable, Module, Controller, Inject } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');

const N = Number(process.env.PROVIDERS || 1000);
// Methods per generated provider besides `work` (bench/tracker/memory.js varies it: a wrapper per method).
const EXTRA_METHODS = Number(process.env.EXTRA_METHODS || 0);
let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

const providers = [];
const classes = [];
for (let i = 0; i < N; i++) {
  const deps = [];
  // Depend on up to three earlier providers, so the graph is acyclic and has real depth.
  if (i > 0) for (let k = 0; k < 3; k++) if (rand() < 0.55) deps.push(classes[Math.floor(rand() * i)]);
  const cls = {
    [`Service${i}`]: class {
      constructor(...args) {
        this.deps = args;
      }
      work() {
        return i;
      }
    },
  }[`Service${i}`];
  for (let m = 0; m < EXTRA_METHODS; m++) {
    // as a class body defines them: method shorthand (no `prototype`, not a constructor), not enumerable
    const method = {
      [`method${m}`]() {
        return m;
      },
    }[`method${m}`];
    Object.defineProperty(cls.prototype, `method${m}`, {
      value: method,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
  Injectable()(cls);
  Reflect.defineMetadata('design:paramtypes', deps, cls);
  classes.push(cls);
  providers.push(cls);
}
for (let i = 0; i < N / 20; i++) providers.push({ provide: `VALUE_${i}`, useValue: { i } });
for (let i = 0; i < N / 20; i++) {
  providers.push({ provide: `FACTORY_${i}`, useFactory: (s) => ({ s }), inject: [classes[Math.floor(rand() * N)]] });
}
const controllers = [];
for (let i = 0; i < 10; i++) {
  const ctl = {
    [`Controller${i}`]: class {
      constructor(s) {
        this.s = s;
      }
    },
  }[`Controller${i}`];
  Controller(`c${i}`)(ctl);
  Reflect.defineMetadata('design:paramtypes', [classes[Math.floor(rand() * N)]], ctl);
  controllers.push(ctl);
}
class BenchModule {}
Module({ providers, controllers })(BenchModule);
void Inject;

(async () => {
  const t0 = performance.now();
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: false });
  const ms = performance.now() - t0;
  console.log(`BOOT_MS ${ms.toFixed(2)}`);
  console.log(`TOTAL_MS ${performance.now().toFixed(2)}`);
  console.log(`MODULES ${Object.keys(require.cache).length}`);
  // bench/startup/instructions.js counts the instructions to this point: no exit handlers, no analysis after it.
  if (process.env.DIAG_BENCH_EXIT_AT_READY === '1') process.reallyExit(0);
  if (typeof gc === 'function') {
    // After start-up: once the deferred end-of-bootstrap analysis has run (bench/tracker/memory.js).
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.SETTLE_MS || 200)));
    gc();
    gc();
    console.log(`HEAP_USED ${process.memoryUsage().heapUsed}`);
  }
  await app.close();
})();
