'use strict';
/*
 * ns per add+check, side by side in one run (the machine is shared: every round runs every candidate, and
 * we report medians), then memory after 1M distinct keys in separate processes.
 *
 *   npx tsc -p tsconfig.build.json && node bench/sketch/run.js [--rounds 7] [--ops 1000000] [--keys 100000]
 *
 * Needs gcc for the C floor (native/bench.c); prints "skipped" without it.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { keysFor, median, arg } = require('./workload');

const root = path.resolve(__dirname, '..', '..');
const dist = path.join(root, 'dist', 'sketch');
if (!fs.existsSync(path.join(dist, 'index.js'))) {
  console.error('dist/ is missing: run npx tsc -p tsconfig.build.json first');
  process.exit(2);
}
const ROUNDS = arg('rounds', 7);
const OPS = arg('ops', 1_000_000);
const KEYS = arg('keys', 100_000);

if (process.argv.includes('--memory-child')) {
  memoryChild(process.argv[process.argv.indexOf('--memory-child') + 1]);
  return;
}

const { setLogger } = require(path.join(root, 'dist', 'shared', 'logger.js'));
setLogger(null);
const { WindowedCountMinSketch, nativeLibrary } = require(dist);
const { PureJsWindowedCms } = require('./pure-js-cms');
const { CountMinSketch: BloomCms } = require('bloom-filters');
const { RateLimiterMemory } = require('rate-limiter-flexible');

const keys = keysFor(OPS, KEYS);

/**
 * ns per call of `fn` over the first n keys. Each caller gets a loop of its own (`label` makes the source text
 * unique: V8 shares feedback between functions of identical source), so the call site sees one function, as
 * the call site of a guard or an interceptor does in an application; a loop shared by every candidate is
 * megamorphic, and measured the candidates through a call V8 could not inline.
 */
const loops = new Map();
function timeSync(label, n, fn) {
  let loop = loops.get(label);
  if (loop === undefined) {
    // eslint-disable-next-line no-new-func -- one loop per label, so that each call site sees one function
    loop = new Function(
      'fn',
      'keys',
      'n',
      `// ${label}\nlet acc = 0;\nfor (let i = 0; i < n; i++) acc += fn(keys[i]);\nreturn acc;`,
    );
    loops.set(label, loop);
  }
  const t0 = process.hrtime.bigint();
  const acc = loop(fn, keys, n);
  const ns = Number(process.hrtime.bigint() - t0) / n;
  if (acc === -1) console.log(acc); // keeps the loop observable
  return ns;
}

const lib = nativeLibrary();
const cmsAddStr = lib.handle.func(
  'uint32_t cms_add(void *s, uint32_t slot, const char *key, size_t len, uint32_t count)',
);

function cFloor() {
  const out = path.join(os.tmpdir(), `diag-cms-bench-${process.pid}`);
  try {
    execFileSync(
      'gcc',
      ['-std=c99', '-O2', '-o', out, path.join(root, 'native', 'bench.c'), path.join(root, 'native', 'cms.c')],
      { stdio: 'pipe' },
    );
  } catch {
    return undefined;
  }
  try {
    // one C round per JS round, interleaved, so both see the same machine load
    return () => JSON.parse(execFileSync(out, [String(OPS), String(KEYS), '1'], { encoding: 'utf8' })).nsPerOp;
  } finally {
    process.on('exit', () => fs.rmSync(out, { force: true }));
  }
}

async function main() {
  const results = {
    'C floor (native/bench.c, cms_add)': [],
    'ours: WindowedCountMinSketch.hit (JS API)': [],
    'ours, counters moved to a JS-heap typed array': [],
    'ours: hitMany packed batch, per key': [],
    'ours: one koffi call per key (string)': [],
    'pure-JS CMS, same shape, JS heap': [],
    'bloom-filters CountMinSketch update+count': [],
    'rate-limiter-flexible RateLimiterMemory.consume': [],
  };
  const floor = cFloor();
  const batchOut = new Uint32Array(OPS);
  for (let r = 0; r < ROUNDS; r++) {
    if (floor) results['C floor (native/bench.c, cms_add)'].push(floor());

    // The per-key candidates run in a rotating order: whichever runs first after the C child process
    // measured up to 25 % slower, which a fixed order charged to one candidate every round.
    const perKey = [
      () => {
        const ours = new WindowedCountMinSketch({ windowMs: 60_000, autoRotate: false });
        results['ours: WindowedCountMinSketch.hit (JS API)'].push(timeSync('ours', OPS, (k) => ours.hit(k)));
        ours.close();
      },
      () => {
        // The same class and code path with its counters swapped for a plain typed array: tells what
        // native memory itself costs per hit, apart from the logic (see docs/sketches.md).
        const onHeap = new WindowedCountMinSketch({ windowMs: 60_000, autoRotate: false });
        onHeap.core.counters = new Uint32Array(onHeap.core.counters.length);
        results['ours, counters moved to a JS-heap typed array'].push(timeSync('heap', OPS, (k) => onHeap.hit(k)));
        onHeap.close();
      },
      () => {
        const batch = new WindowedCountMinSketch({ windowMs: 60_000, autoRotate: false });
        const t0 = process.hrtime.bigint();
        batch.hitMany(keys, batchOut);
        results['ours: hitMany packed batch, per key'].push(Number(process.hrtime.bigint() - t0) / OPS);
        batch.close();
      },
      () => {
        const raw = new WindowedCountMinSketch({ windowMs: 60_000, autoRotate: false });
        const handle = raw.core.native('bench');
        results['ours: one koffi call per key (string)'].push(
          timeSync('koffi', OPS, (k) => cmsAddStr(handle, 0, k, k.length, 1)),
        );
        raw.close();
      },
      () => {
        const pure = new PureJsWindowedCms(16384, 4, 4);
        results['pure-JS CMS, same shape, JS heap'].push(timeSync('pure', OPS, (k) => pure.hit(k)));
      },
    ];
    for (let i = 0; i < perKey.length; i++) perKey[(r + i) % perKey.length]();

    const bloom = new BloomCms(16384, 4);
    const nb = Math.min(OPS, 20_000);
    results['bloom-filters CountMinSketch update+count'].push(
      timeSync('bloom', nb, (k) => (bloom.update(k), bloom.count(k))),
    );

    const limiter = new RateLimiterMemory({ points: 1e9, duration: 60 });
    const nl = Math.min(OPS, 100_000);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < nl; i++) await limiter.consume(keys[i]);
    results['rate-limiter-flexible RateLimiterMemory.consume'].push(Number(process.hrtime.bigint() - t0) / nl);
  }

  const floorNs = floor ? median(results['C floor (native/bench.c, cms_add)']) : undefined;
  console.log(
    `node ${process.version}, ${os.cpus()[0].model} x${os.cpus().length}, ops ${OPS}, distinct keys ${KEYS}, rounds ${ROUNDS}`,
  );
  console.log('ns per add+check (median of rounds)   ns     × C floor   [min..max]');
  const summary = {};
  for (const [name, values] of Object.entries(results)) {
    if (values.length === 0) {
      console.log(`${name.padEnd(50)} skipped`);
      continue;
    }
    const m = median(values);
    summary[name] = m;
    const ratio = floorNs ? (m / floorNs).toFixed(2) : '-';
    console.log(
      `${name.padEnd(50)} ${m.toFixed(1).padStart(8)} ${ratio.padStart(8)}   [${Math.min(...values).toFixed(1)}..${Math.max(...values).toFixed(1)}]`,
    );
  }

  // The goals are ratios: taken within each round (the same machine load on both sides), then the median.
  const OURS = 'ours: WindowedCountMinSketch.hit (JS API)';
  const perRound = (a, b) => median(results[a].map((v, i) => v / results[b][i]));
  console.log('\nratios within a round (median of rounds)');
  summary['ratio ours / pure-JS'] = perRound(OURS, 'pure-JS CMS, same shape, JS heap');
  console.log(`${'ours / pure-JS CMS'.padEnd(50)} ${summary['ratio ours / pure-JS'].toFixed(2).padStart(8)}`);
  if (floor) {
    summary['ratio ours / C floor'] = perRound(OURS, 'C floor (native/bench.c, cms_add)');
    summary['ratio pure-JS / C floor'] = perRound(
      'pure-JS CMS, same shape, JS heap',
      'C floor (native/bench.c, cms_add)',
    );
    console.log(`${'ours / C floor'.padEnd(50)} ${summary['ratio ours / C floor'].toFixed(2).padStart(8)}`);
    console.log(`${'pure-JS CMS / C floor'.padEnd(50)} ${summary['ratio pure-JS / C floor'].toFixed(2).padStart(8)}`);
  }

  console.log('\nmemory after 1,000,000 distinct keys (separate processes, after gc)');
  for (const which of ['ours', 'rate-limiter-flexible']) {
    const r = spawnSync(process.execPath, ['--expose-gc', __filename, '--memory-child', which], { encoding: 'utf8' });
    const m = JSON.parse(r.stdout.trim().split('\n').pop());
    console.log(
      `${which.padEnd(24)} heapUsed +${m.heapMb.toFixed(1)} MB, rss +${m.rssMb.toFixed(1)} MB, native counters ${m.nativeMb.toFixed(1)} MB`,
    );
    summary[`memory ${which}`] = m;
  }
  fs.writeFileSync(path.join(os.tmpdir(), 'diag-sketch-bench.json'), JSON.stringify(summary, null, 2));
}

async function memoryChild(which) {
  const { setLogger: quiet } = require(path.join(root, 'dist', 'shared', 'logger.js'));
  quiet(null);
  const N = 1_000_000;
  const keyOf = (i) => 'user:' + i;
  let native = 0;
  let hold;
  if (which === 'ours') require(dist).nativeLibrary(); // load first: the library itself is not per-key memory
  global.gc();
  const before = process.memoryUsage();
  if (which === 'ours') {
    const { WindowedCountMinSketch } = require(dist);
    hold = new WindowedCountMinSketch({ windowMs: 60_000, autoRotate: false });
    for (let i = 0; i < N; i++) hold.hit(keyOf(i));
    native = hold.memoryBytes;
  } else {
    const { RateLimiterMemory } = require('rate-limiter-flexible');
    hold = new RateLimiterMemory({ points: 100, duration: 60 });
    for (let i = 0; i < N; i++) await hold.consume(keyOf(i));
  }
  global.gc();
  const after = process.memoryUsage();
  console.log(
    JSON.stringify({
      heapMb: (after.heapUsed - before.heapUsed) / 1048576,
      rssMb: (after.rss - before.rss) / 1048576,
      nativeMb: native / 1048576,
    }),
  );
  if (hold === null) console.log('');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
