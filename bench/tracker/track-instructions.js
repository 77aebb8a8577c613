'use strict';
// What GhostTracker.track() costs in instructions, not time: 1,000 beans of the start-up app's shape (a class
// each, one method, reflect-metadata loaded, `design:paramtypes` on the class) tracked in a fresh process under
// callgrind, minus the same process without the tracks. Load-independent like bench:instructions (whose V8 flags
// it uses), and ~20 s a side: what a change to first-touch.ts or tracker.ts does to the install, counted before
// the whole app is (docs/benchmarks.md, "The install").
//
//   npm run build && node bench/tracker/track-instructions.js [--beans 1000] [--dist path/to/a/copy/of/dist]
const { execFileSync, spawnSync } = require('node:child_process');
const path = require('node:path');
const { arg } = require('../sketch/workload');
const { NODE_FLAGS, valgrindVersion } = require('../startup/instructions');

const root = path.resolve(__dirname, '..', '..');

function child() {
  require('reflect-metadata');
  const { GhostTracker } = require(path.join(process.env.DIST, 'ghost', 'tracking', 'tracker.js'));
  const beans = Number(process.env.BEANS);
  const objects = [];
  for (let i = 0; i < beans; i++) {
    const cls = {
      [`Service${i}`]: class {
        constructor(...deps) {
          this.deps = deps;
        }
        work() {
          return i;
        }
      },
    }[`Service${i}`];
    Reflect.defineMetadata('design:paramtypes', [], cls);
    objects.push(new cls());
  }
  const tracker = new GhostTracker({});
  const owner = {};
  if (process.env.TRACK === '1') {
    for (let i = 0; i < beans; i++) tracker.track(`Service${i}`, objects[i], { scope: 'singleton', owner });
  }
}

function count(track, beans, dist) {
  const run = spawnSync(
    'valgrind',
    ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, ...NODE_FLAGS, __filename],
    {
      env: {
        ...process.env,
        TRACK_INSTRUCTIONS_CHILD: '1',
        TRACK: track ? '1' : '0',
        BEANS: String(beans),
        DIST: dist,
      },
      encoding: 'utf8',
    },
  );
  const collected = /Collected : (\d+)/.exec(run.stderr);
  if (run.status !== 0 || !collected) throw new Error(`no instruction count:\n${run.stderr.slice(-2000)}`);
  return Number(collected[1]);
}

if (process.env.TRACK_INSTRUCTIONS_CHILD === '1') {
  child();
} else {
  if (valgrindVersion() === undefined) {
    console.error('valgrind not found: this benchmark counts instructions with callgrind.');
    process.exit(2);
  }
  const beans = arg('beans', 1000);
  const distArg = process.argv.indexOf('--dist');
  const dist = path.resolve(distArg > 0 ? process.argv[distArg + 1] : path.join(root, 'dist'));
  execFileSync(process.execPath, [
    '-e',
    `require(${JSON.stringify(path.join(dist, 'ghost', 'tracking', 'tracker.js'))})`,
  ]);
  const without = count(false, beans, dist);
  const withTracks = count(true, beans, dist);
  console.log(
    `${beans} track() calls: ${((withTracks - without) / 1e6).toFixed(1)} M instructions ` +
      `(${((withTracks - without) / beans / 1e3).toFixed(1)} k a bean; process ${(withTracks / 1e6).toFixed(0)} M with, ${(without / 1e6).toFixed(0)} M without)`,
  );
}
