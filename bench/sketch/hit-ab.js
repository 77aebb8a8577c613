'use strict';
/*
 * The sketch hit against the pure-JS reference, and against the same reference unrolled for 4 rows as our hit is
 * for its default shape, as an application calls it: one long-lived sketch per side, each called from a loop of
 * its own (a monomorphic call site, like a guard's), the sides taking turns in short rounds so that all see the
 * same machine load, the ratios taken within each round. Repeated in fresh processes
 * (V8 lays out and tiers each process differently); prints the median ratio per process and over processes.
 *
 *   npx tsc -p tsconfig.build.json && node bench/sketch/hit-ab.js [--processes 5] [--rounds 60] [--ops 200000]
 *
 * `bench/sketch/run.js` measures every candidate with fresh objects per round, in a rotating order behind a C
 * child process; this one isolates what the goal of issue #15 compares (docs/sketches.md).
 */
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { keysFor, median, arg } = require('./workload');

const root = path.resolve(__dirname, '..', '..');

function child() {
  require(path.join(root, 'dist', 'shared', 'logger.js')).setLogger(null);
  const { WindowedCountMinSketch } = require(path.join(root, 'dist', 'sketch'));
  const { PureJsWindowedCms, UnrolledPureJsWindowedCms } = require('./pure-js-cms');
  const rounds = arg('rounds', 60);
  const ops = arg('ops', 200_000);
  const keys = keysFor(1_000_000, 100_000);
  const sides = {
    ours: new WindowedCountMinSketch({ windowMs: 60_000, autoRotate: false }),
    pure: new PureJsWindowedCms(16384, 4, 4),
    unrolled: new UnrolledPureJsWindowedCms(16384, 4, 4),
  };
  const loops = {};
  for (const name of Object.keys(sides)) {
    // the comment makes each source unique: V8 shares feedback between functions of identical source
    // eslint-disable-next-line no-new-func
    loops[name] = new Function(
      's',
      'keys',
      'n',
      'off',
      `// ${name}\nlet acc = 0;\nfor (let i = 0; i < n; i++) acc += s.hit(keys[(off + i) % keys.length]);\nreturn acc;`,
    );
  }
  const ratios = { pure: [], unrolled: [] };
  const names = Object.keys(sides);
  let off = 0;
  for (let r = 0; r < rounds; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    const ns = {};
    for (const name of order) {
      const t0 = process.hrtime.bigint();
      const acc = loops[name](sides[name], keys, ops, off);
      ns[name] = Number(process.hrtime.bigint() - t0) / ops;
      if (acc === -1) console.log(acc); // keeps the loop observable
    }
    off += ops;
    if (r >= 5) {
      // the first rounds are warm-up (tiering)
      ratios.pure.push(ns.ours / ns.pure);
      ratios.unrolled.push(ns.ours / ns.unrolled);
    }
  }
  sides.ours.close();
  console.log(JSON.stringify({ pure: median(ratios.pure), unrolled: median(ratios.unrolled) }));
}

/**
 * Runs the child in `processes` fresh processes; returns the per-process median ratios and their medians.
 * `bench/check.js` guards `median.pure` (issue #15: the hit at most the pure-JS reference).
 */
function measureSketchHit({ processes = 5, rounds = 60, ops = 200_000 } = {}) {
  const perProcess = [];
  for (let p = 0; p < processes; p++) {
    const args = [__filename, '--child', '--rounds', String(rounds), '--ops', String(ops)];
    const out = execFileSync(process.execPath, args, { encoding: 'utf8' });
    perProcess.push(JSON.parse(out.trim().split('\n').pop()));
  }
  const overProcesses = (side) => median(perProcess.map((r) => r[side]));
  return { perProcess, median: { pure: overProcesses('pure'), unrolled: overProcesses('unrolled') } };
}

function main() {
  const processes = arg('processes', 5);
  const { perProcess, median: medians } = measureSketchHit({
    processes,
    rounds: arg('rounds', 60),
    ops: arg('ops', 200_000),
  });
  console.log(`node ${process.version}, ${processes} fresh processes; median ratio per process, then over processes`);
  for (const [side, label] of [
    ['pure', 'pure-JS reference'],
    ['unrolled', 'pure-JS reference unrolled like ours'],
  ]) {
    console.log(
      `WindowedCountMinSketch.hit / ${label}: ${perProcess.map((r) => r[side].toFixed(3)).join(' ')}  → ${medians[side].toFixed(3)}`,
    );
  }
}

module.exports = { measureSketchHit };

if (process.argv.includes('--child')) child();
else if (require.main === module) main();
