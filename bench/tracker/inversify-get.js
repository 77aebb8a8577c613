'use strict';
// What watching InversifyJS's first activations costs after them: a transient `container.get` of one of 50 class
// bindings, all activated once before timing, in fresh processes side by side: InversifyJS alone, and with the
// adapter's observer on @inversifyjs/core (each binding's `onActivation` an accessor until its first activation,
// which leaves the binding object in V8's dictionary mode). Medians of per-process ns per get, sides alternating.
//   npm run build && node bench/tracker/inversify-get.js [--runs 5] [--gets 1000000]
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { arg, median } = require('../sketch/workload');

const root = path.resolve(__dirname, '..', '..');
const RUNS = arg('runs', 5);
const GETS = arg('gets', 1_000_000);
const SIDES = ['inversify', 'watched'];

/** The measured process: `watched` patches @inversifyjs/core as the adapter does, then binds, warms up and times. */
const CHILD = `
require('reflect-metadata');
const dist = process.env.DIST;
if (process.env.SIDE === 'watched') {
  const fs = require('node:fs'), os = require('node:os'), path = require('node:path');
  const { resolveConfig } = require(dist + '/config/properties.js');
  const { GhostDetector } = require(dist + '/ghost/detector.js');
  const { InversifyObserver } = require(dist + '/adapters/lazy/inversify/container-observer.js');
  const { wrapMethod, unwrapMethod } = require(dist + '/patching/wrap.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-bench-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const observer = new InversifyObserver(new GhostDetector(resolveConfig({ report: { dir } })));
  const core = require(require.resolve('@inversifyjs/core', { paths: [require.resolve('inversify')] }));
  observer.patchCore7(core, { wrap: wrapMethod, unwrap: unwrapMethod }, () => 'bench');
}
const { Container, injectable } = require('inversify');
const container = new Container();
const classes = [];
for (let i = 0; i < 50; i++) {
  const cls = { ['Service' + i]: class { work() { return i; } } }['Service' + i];
  injectable()(cls);
  container.bind(cls).toSelf();
  classes.push(cls);
}
const gets = Number(process.env.GETS);
for (let i = 0; i < gets; i++) container.get(classes[i % 50]);
const t0 = process.hrtime.bigint();
for (let i = 0; i < gets; i++) container.get(classes[i % 50]);
console.log(Number(process.hrtime.bigint() - t0) / gets);
process.exit(0);
`;

function main() {
  const ns = Object.fromEntries(SIDES.map((side) => [side, []]));
  for (let r = 0; r < RUNS; r++) {
    for (const side of r % 2 === 0 ? SIDES : [...SIDES].reverse()) {
      const out = execFileSync(process.execPath, ['-e', CHILD], {
        cwd: root,
        env: { ...process.env, SIDE: side, GETS: String(GETS), DIST: path.join(root, 'dist') },
        encoding: 'utf8',
      });
      ns[side].push(Number(out.trim()));
    }
  }
  const alone = median(ns.inversify);
  const watched = median(ns.watched);
  console.log(`node ${process.version}, ${RUNS} processes a side, ${GETS} transient gets each (median ns per get)`);
  console.log(
    `InversifyJS alone: ${alone.toFixed(0)} ns; watched: ${watched.toFixed(0)} ns (${(watched / alone).toFixed(2)}x)`,
  );
}

main();
