import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

// A tracked bean must be, to V8, the same kind of object as an untracked one, before and after its first touch:
// the same hidden class (map), in fast mode. A different map is what made field writes and getters up to 4×
// slower on tracked beans (bench/tracker/shapes.js). V8's own answer needs --allow-natives-syntax, so it runs
// in a child.
const tracker = path.resolve(__dirname, '../../../dist/ghost/tracking/tracker.js');

function probe(body: string): Record<string, unknown> {
  const script = `
    require('reflect-metadata');
    const { GhostTracker } = require(${JSON.stringify(tracker)});
    const t = new GhostTracker();
    const out = {};
    ${body}
    console.log(JSON.stringify(out));`;
  const stdout = execFileSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8' });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('hidden class after the first touch', () => {
  it('is the map of an untracked instance of the same class, for 1 to 200 methods', () => {
    // (Arrow-function fields are swapped in place: a value change, not a new map.)
    const out = probe(`
      for (const n of [1, 8, 200]) {
        const body = Array.from({ length: n }, (_, i) => 'm' + i + '(x) { return x + this.k; }').join('\\n');
        const Svc = new Function('return class Svc { constructor() { this.k = 1; this.f = () => 2; } get g() { return this.k; } ' + body + ' }')();
        const plain = new Svc();
        const bean = new Svc();
        t.track('b' + n, bean);
        out['before' + n] = %HaveSameMap(plain, bean);
        bean.m0(1);
        out['same' + n] = %HaveSameMap(plain, bean);
        out['fast' + n] = %HasFastProperties(bean);
      }`);
    expect(out).toEqual({
      before1: true,
      same1: true,
      fast1: true,
      before8: true,
      same8: true,
      fast8: true,
      before200: true,
      same200: true,
      fast200: true,
    });
  });

  it('stays in fast mode when a field was added between tracking and the first touch', () => {
    const out = probe(`
      class Svc { constructor() { this.k = 1; } a() { return this.k; } b() { return 2; } }
      const bean = new Svc();
      t.track('late', bean);
      bean.late = 1;
      out.result = bean.a();
      out.fast = %HasFastProperties(bean);
      out.touched = t.isTouched('late');`);
    expect(out).toEqual({ result: 1, fast: true, touched: true });
  });
});

describe('hidden class of a wrapper', () => {
  it('is the map of a plain method up to four parameters: no redefined length, no slower call path', () => {
    // A function whose `length` was redefined gets a map of its own, which V8 calls through a slower path
    // from call sites that do not inline it (+8-10 ns, bench/tracker/run.js "captured").
    const out = probe(`
      const key = 'm';
      const plainMethod = { [key](a) { return a; } }[key];
      class Svc { m0() {} m1(a) {} m2(a, b) {} m3(a, b, c) {} m4(a, b, c, d) {} }
      const bean = new Svc();
      t.track('arity', bean);
      for (let n = 0; n <= 4; n++) {
        const wrapper = bean['m' + n];
        out['m' + n] = [Svc.prototype['m' + n] === wrapper, wrapper.length, %HaveSameMap(wrapper, plainMethod)];
      }`);
    expect(out).toEqual({
      m0: [true, 0, true],
      m1: [true, 1, true],
      m2: [true, 2, true],
      m3: [true, 3, true],
      m4: [true, 4, true],
    });
  });
});

describe('the end of an application', () => {
  it('gives its classes their methods back and keeps none of its beans alive', () => {
    // Test suites create and close many applications: a class prototype outlives them all and must neither hold
    // their beans nor keep wrapped methods.
    const script = `
      const { GhostTracker } = require(${JSON.stringify(tracker)});
      class Svc { m() { return 1; } }
      class Other { m() { return 2; } }
      const original = Svc.prototype.m;
      const t = new GhostTracker();
      const refs = [];
      const app = {};
      (function start() {
        for (let i = 0; i < 3; i++) { const bean = new Svc(); t.track('b' + i, bean, { owner: app }); refs.push(new WeakRef(bean)); }
        t.track('other', new Other(), { owner: {} });
      })();
      const wrapped = Svc.prototype.m !== original;
      t.end(app);
      const restored = Svc.prototype.m === original;
      (async () => {
        for (let i = 0; i < 10 && refs.some((r) => r.deref() !== undefined); i++) {
          await new Promise((r) => setTimeout(r, 10)); // a WeakRef read keeps its target to the end of the job
          gc();
        }
        console.log(JSON.stringify({
          wrapped, restored,
          collected: refs.every((r) => r.deref() === undefined),
          stillReported: t.snapshot().untouched,
          otherStillWrapped: Other.prototype.m.name === 'm' && !Object.prototype.hasOwnProperty.call(Other.prototype.m, 'prototype') && Other.prototype.m.toString().includes('gate'),
        }));
      })();`;
    const stdout = execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(stdout)).toEqual({
      wrapped: true,
      restored: true,
      collected: true,
      stillReported: ['b0', 'b1', 'b2', 'other'],
      otherStillWrapped: true,
    });
  });
});
