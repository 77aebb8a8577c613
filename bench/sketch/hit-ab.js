'use strict';
/*
 * The sketch hit against the pure-JS reference as an application calls it: one long-lived sketch per side, each
 * called from a loop of its own (a monomorphic call site, like a guard's), the two sides alternating in short
 * rounds so that both see the same machine load, the ratio taken within each round. Repeated in fresh processes
 * (V8 lays out and tiers each process differently); prints the median ratio per process and over processes.
 *
 *   npx tsc -p tsconfig.build.json && node bench/sketch/hit-ab.js [--processes 5] [--rounds 60] [--ops 200000]
 *
 * `bench/sketch/run.js` measures every candidate with fresh objects per round, in a rotating order behind a C
 * child process; this one isolates the two the goal of issue #15 compares (docs/sketches.md).
 */
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { keysFor, median, arg } = require('./workload');

const root = path.resolve(__dirname, '..', '..');

function child() {
  require(path.join(root, 'dist', 'logger.js')).setLogger(null);
  const { WindowedCountMinSketch } = require(path.join(root, 'dist', 'sketch'));
  const { PureJsWindowedCms } = require('./pure-js-cms');
  const rounds = arg('rounds', 60);
  const ops = arg('ops', 200_000);
  const keys = keysFor(1_000_000, 100_000);
  const sides = {
    ours: new WindowedCountMinSketch({ windowMs: 60_000, autoRotate: false }),
    pure: new PureJsWindowedCms(16384, 4, 4),
  };
  const loops = {};
  for (const name of Object.keys(sides)) {
    // the comment makes each source unique: V8 shares feedback between functions of identical source
    loops[name] = new Function('s', 'keys', 'n', 'off', `// ${name}\nlet acc = 0;\nfor (let i = 0; i < n; i++) acc += s.hit(keys[(off + i) % keys.length]);\nreturn acc;`);
  }
  const ratios = [];
  let off = 0;
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['pure', 'ours'] : ['ours', 'pure'];
    const ns = {};
    for (const name of order) {
      const t0 = process.hrtime.bigint();
      const acc = loops[name](sides[name], keys, ops, off);
      ns[name] = Number(process.hrtime.bigint() - t0) / ops;
      if (acc === -1) console.log(acc); // keeps the loop observable
    }
    off += ops;
    if (r >= 5) ratios.push(ns.ours / ns.pure); // the first rounds are warm-up (tiering)
  }
  sides.ours.close();
  console.log(JSON.stringify({ ratio: median(ratios) }));
}

function main() {
  const processes = arg('processes', 5);
  const perProcess = [];
  for (let p = 0; p < processes; p++) {
    const out = execFileSync(process.execPath, [__filename, '--child', ...process.argv.slice(2)], { encoding: 'utf8' });
    perProcess.push(JSON.parse(out.trim().split('\n').pop()).ratio);
  }
  console.log(`node ${process.version}: WindowedCountMinSketch.hit / pure-JS reference, median ratio per process: ${perProcess.map((r) => r.toFixed(3)).join(' ')}`);
  console.log(`median over ${processes} processes: ${median(perProcess).toFixed(3)}`);
}

if (process.argv.includes('--child')) child();
else main();
