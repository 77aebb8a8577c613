import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { EventEmitter } from 'node:events';
import { ClassOriginIndex } from '../../../../src/ghost/origins/class-origin';

describe('ClassOriginIndex', () => {
  it('knows library classes from require.cache and app classes from the project', () => {
    const index = new ClassOriginIndex();
    const { Strategy } = require('passport-local');
    index.scanRequireCache();
    expect(index.originOf(Strategy)).toBe('library');
    expect(index.originOf(ClassOriginIndex)).toBe('app');
    expect(index.originOf(Map)).toBe('builtin');
    expect(index.originOf(EventEmitter)).toBe('builtin');
    expect(index.originOf(class Local {})).toBe('unknown');
  });

  it('never loads a builtin module the process has not loaded, and indexes it once loaded', () => {
    // A fresh process: moduleLoadList is process-wide, and other test files load builtins of their own.
    const script = `
      const { EventEmitter } = require('node:events');
      const { ClassOriginIndex } = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', '..', 'dist', 'ghost', 'origins', 'class-origin.js'))});
      const loaded = () => process.moduleLoadList.includes('NativeModule worker_threads');
      const before = loaded();
      const index = new ClassOriginIndex();
      const emitter = index.originOf(EventEmitter);
      const afterIndexing = loaded();
      const { Worker } = require('node:worker_threads');
      console.log(JSON.stringify({ before, emitter, afterIndexing, worker: index.originOf(Worker) }));`;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ before: false, emitter: 'builtin', afterIndexing: false, worker: 'builtin' });
  });

  it('finds a library ancestor through an unexported mixin, and ignores builtin bases', () => {
    const index = new ClassOriginIndex();
    const { Strategy } = require('passport-local');
    index.scanRequireCache();
    const mixin = (Base: new (...a: any[]) => object) => class Mixin extends Base {};
    class Local extends mixin(Strategy) {}
    class Emitter extends EventEmitter {}
    expect(index.libraryAncestor(Local)).toBe(Strategy);
    expect(index.libraryAncestor(Emitter)).toBeUndefined();
    expect(index.libraryAncestor(class Plain {})).toBeUndefined();
  });

  it('records namespaces handed in by hooks, getters included', () => {
    const index = new ClassOriginIndex();
    class FromEsm {}
    const namespace = Object.defineProperty({}, 'FromEsm', { get: () => FromEsm, enumerable: true });
    index.registerExports(namespace, 'library');
    expect(index.originOf(FromEsm)).toBe('library');
  });

  it('never looks into a module in require.cache whose exports are a Proxy: none of its traps runs', () => {
    // A fresh process: jest's require.cache is not the one the index reads. The module is a lazy loader's, as
    // some libraries have them: its keys come from its traps, code of its own.
    const script = `
      const { ClassOriginIndex } = require(process.env.CLASS_ORIGIN);
      const trapped = [];
      const handler = {};
      for (const trap of ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf']) {
        handler[trap] = () => { trapped.push(trap); throw new Error(trap + ' refused'); };
      }
      class Lazy {}
      require.cache[require('node:path').join(process.cwd(), 'lazy-exports.js')] = { exports: new Proxy({ Lazy }, handler) };
      const index = new ClassOriginIndex();
      index.scanRequireCache();
      console.log(JSON.stringify({ trapped, lazy: index.originOf(Lazy) }));`;
    const classOrigin = path.join(__dirname, '..', '..', '..', '..', 'dist', 'ghost', 'origins', 'class-origin.js');
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, CLASS_ORIGIN: classOrigin } });
    expect(JSON.parse(out)).toEqual({ trapped: [], lazy: 'unknown' });
  });

  it('reads a namespace registered while modules load only when first asked, then knows its classes', () => {
    const index = new ClassOriginIndex();
    class Base {}
    class Derived extends Base {}
    let reads = 0;
    const namespace = Object.defineProperty({}, 'Base', { get: () => (reads++, Base), enumerable: true });
    index.registerLibraryLater(namespace);
    expect(reads).toBe(0);
    expect(index.libraryAncestor(Derived)).toBe(Base);
    expect(index.originOf(Base)).toBe('library');
    expect(reads).toBe(1);
  });
});
