'use strict';
/*
 * The fleet hit against the local hit, side by side: what a hit costs a process once its sketch judges by the
 * fleet (own counts plus the rest of the fleet's, read from the sync loop's arrays) against the same sketch
 * counting alone. The hit path only — no Redis, no sync rounds (bench/sketch/fleet.js has those); the fleet
 * sketch is held in `fleet` mode with the rest of the fleet's counts filled in, as after a sync.
 *
 *   npm run build && node bench/sketch/fleet-hit.js [--processes 5] [--rounds 7] [--ops 2000000] [--keys 100000]
 *
 * Each fresh process alternates local and fleet rounds on the same keys (bench/sketch/workload.js) and reports
 * the median ns per hit of each; the parent prints every process and the median of the ratios.
 */
const { spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const { arg, keysFor, median } = require('./workload');

const root = path.resolve(__dirname, '..', '..');
const PROCESSES = arg('processes', 5);
const ROUNDS = arg('rounds', 7);
const OPS = arg('ops', 2_000_000);
const KEYS = arg('keys', 100_000);

if (process.argv.includes('--child')) {
  const { setLogger } = require(path.join(root, 'dist', 'shared', 'logger.js'));
  setLogger(null);
  const { WindowedCountMinSketch } = require(path.join(root, 'dist', 'sketch'));
  const { FleetSketch } = require(path.join(root, 'dist', 'sketch', 'stores', 'redis', 'fleet-sketch.js'));
  const keys = keysFor(OPS, KEYS);
  const local = new WindowedCountMinSketch({ windowMs: 60_000, clock: Date.now, seed: 7 });
  const fleet = new FleetSketch(
    { windowMs: 60_000, clock: Date.now, seed: 7 },
    { mode: 'fleet', nodes: 3, rejectAll: false },
  );
  // What a sync round leaves behind: the rest of the fleet's counts of the cells these keys map to.
  for (let i = 0; i < KEYS; i++) fleet.hit(`user:${i}`);
  const plan = fleet.collect(Date.now(), 1000);
  for (const b of plan.batches)
    fleet.apply(
      b,
      b.deltas.map((d) => 2 * d + 1),
      Date.now(),
      1000,
    );
  const run = (s) => {
    let sink = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) sink += s.hit(keys[i]);
    const ns = Number(process.hrtime.bigint() - t0) / OPS;
    if (sink < 0) console.log(sink);
    return ns;
  };
  const times = { local: [], fleet: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // alternate which goes first, so neither always runs on a warmer cache
    const order = r % 2 === 0 ? ['local', 'fleet'] : ['fleet', 'local'];
    for (const name of order) times[name].push(run(name === 'local' ? local : fleet));
  }
  process.stdout.write(`${JSON.stringify({ local: median(times.local), fleet: median(times.fleet) })}\n`);
  return;
}

console.log(
  `node ${process.version}, ${os.cpus()[0].model} x${os.cpus().length}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`${PROCESSES} fresh processes × ${ROUNDS} alternating rounds of ${OPS} hits over ${KEYS} keys\n`);
console.log('| process | local ns/hit | fleet ns/hit | fleet ÷ local |');
console.log('|---:|---:|---:|---:|');
const ratios = [];
for (let p = 0; p < PROCESSES; p++) {
  const r = spawnSync(
    process.execPath,
    [__filename, '--child', '--rounds', String(ROUNDS), '--ops', String(OPS), '--keys', String(KEYS)],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  const { local, fleet } = JSON.parse(r.stdout.trim().split('\n').pop());
  ratios.push(fleet / local);
  console.log(`| ${p + 1} | ${local.toFixed(1)} | ${fleet.toFixed(1)} | ${(fleet / local).toFixed(3)} |`);
}
console.log(
  `\nmedian fleet ÷ local: ${median(ratios).toFixed(3)} (range ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`,
);
