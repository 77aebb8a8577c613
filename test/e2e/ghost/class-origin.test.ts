/**
 * ClassOriginIndex in a fresh node process, from dist/: jest's require.cache and module list are not the ones
 * the index reads. The rest of its tests are in test/unit/ghost/origins/class-origin.test.ts.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

describe('ClassOriginIndex in a process of its own', () => {
  it('never loads a builtin module the process has not loaded, and indexes it once loaded', () => {
    // A fresh process: moduleLoadList is process-wide, and other test files load builtins of their own.
    const script = `
      const { EventEmitter } = require('node:events');
      const { ClassOriginIndex } = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'dist', 'ghost', 'origins', 'class-origin.js'))});
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
    const classOrigin = path.join(__dirname, '..', '..', '..', 'dist', 'ghost', 'origins', 'class-origin.js');
    const out = execFileSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      env: { ...process.env, CLASS_ORIGIN: classOrigin },
    });
    expect(JSON.parse(out)).toEqual({ trapped: [], lazy: 'unknown' });
  });

  it('scans require.cache in turns when given a budget, and learns what a scan in one turn learns', () => {
    // The analysis after ready scans a few ms a turn (3,600 modules on a real boilerplate): each call goes on where
    // the last stopped, and an unbudgeted call afterwards also reads what loaded since.
    const script = `
      const { ClassOriginIndex } = require(process.env.CLASS_ORIGIN);
      const { Reflector } = require('@nestjs/core');
      // A count that is a multiple of 64, the clock's stride (found by a review: the last module's turn said "not
      // done" then, and a scan took one turn more than it needed)
      const Module = require('node:module');
      for (let i = 0; Object.keys(require.cache).length % 64 !== 0; i++) {
        const pad = new Module('/pad' + i + '.js');
        pad.exports = {};
        require.cache['/pad' + i + '.js'] = pad;
      }
      const modules = Object.keys(require.cache).length;
      const index = new ClassOriginIndex();
      let calls = 1;
      while (!index.scanRequireCache(0)) calls++;
      const scanned = index.originOf(Reflector);
      const { Injectable } = require('@nestjs/common');
      const { Strategy } = require('passport-local');
      const beforeRescan = index.originOf(Strategy);
      const done = index.scanRequireCache();
      console.log(JSON.stringify({ modules, calls, scanned, beforeRescan, done, later: index.originOf(Strategy), injectable: index.originOf(Injectable) }));`;
    const classOrigin = path.join(__dirname, '..', '..', '..', 'dist', 'ghost', 'origins', 'class-origin.js');
    const out = execFileSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      cwd: path.join(__dirname, '..', '..', '..'),
      env: { ...process.env, CLASS_ORIGIN: classOrigin },
    });
    const result = JSON.parse(out);
    expect(result.modules).toBeGreaterThan(128);
    expect(result.modules % 64).toBe(0);
    // a budget of 0 stops at every 64th module, and the last turn says it is done
    expect(result.calls).toBe(result.modules / 64);
    expect(result).toMatchObject({
      scanned: 'library',
      beforeRescan: 'unknown',
      done: true,
      later: 'library',
      injectable: 'library',
    });
  });
});
