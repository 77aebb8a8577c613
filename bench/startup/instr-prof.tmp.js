'use strict';
// Start-up overhead in instructions, not seconds: each side of the start-up benchmarks (NodeSDK alone, with
// Phase 1, with Phase 1 + 2) runs once in a fresh process under `valgrind --tool=callgrind` from process start
// to ready, and the figure is its instruction count ÷ NodeSDK alone's. Timings of 400–900 ms processes wander
// by ±10 % between runs on a shared 2-core machine, more than the 3–5 % goals; instruction counts of the same
// process repeat to about ±0.05 % whatever else the machine does (NODE_FLAGS below), but where the checkout
// lives moves them (module paths change the heap's layout, and where the collector runs): up to 0.026 in a
// ratio over three paths. What they leave out is waiting (file reads, page faults), which the timed benchmarks
// keep: read both.
//   npm run build && node bench/startup/instructions.js [--runs 1] [--apps nest,inversify,tsyringe,awilix]
// About 40 s per process under valgrind; two run at a time.
const { execFile, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { arg, median } = require('../sketch/workload');
const { sideEnv } = require('./run');
const RUNS = arg('runs', 1);
const root = path.resolve(__dirname, '..', '..');
const preload = path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs');
const SIDES = ['sdk', 'phase1', 'phase2'];
/**
 * V8 as deterministic as it goes: --predictable (no concurrent compiler or GC threads), marking in one step and
 * no memory reducer (incremental marking's steps are scheduled by the clock: with it, the same process counted
 * +1.6 % with two busy loops beside it), fixed hash and random seeds. The GC mode moves some figures: the Nest
 * app's Phase 1 reads 1.015 with incremental marking on an idle machine, 1.015-1.041 in this mode depending on
 * the checkout's path (docs/benchmarks.md).
 */
const NODE_FLAGS = [
  '--predictable',
  '--no-incremental-marking',
  '--no-memory-reducer',
  '--hash-seed=1',
  '--random-seed=1',
];
const APPS = {
  nest: { script: 'app.js', env: { PROVIDERS: '1000' }, label: 'NestJS, 1,000 providers' },
  inversify: {
    script: 'container-app.js',
    env: { CONTAINER: 'inversify', BINDINGS: '1000' },
    label: 'InversifyJS, 1,000 bindings',
  },
  tsyringe: {
    script: 'container-app.js',
    env: { CONTAINER: 'tsyringe', BINDINGS: '1000' },
    label: 'tsyringe, 1,000 bindings',
  },
  awilix: {
    script: 'container-app.js',
    env: { CONTAINER: 'awilix', BINDINGS: '1000' },
    label: 'awilix, 1,000 bindings',
  },
};
const appsArg = process.argv.indexOf('--apps');
const selectedApps = appsArg > 0 ? process.argv[appsArg + 1].split(',') : Object.keys(APPS);

function valgrindVersion() {
  try {
    return execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/**
 * Instructions from process start to ready, one process of `side` of `app`; `env` adds to its environment
 * (bench/startup/timeline-share.js names another copy of the package with DIAG_PACKAGE).
 */
function count(app, side, env = {}) {
  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-bench-'));
  const args = [
    '--tool=callgrind',
    '--callgrind-out-file=' + (env.CG_OUT || '/dev/null'),
    process.execPath,
    ...NODE_FLAGS,
    '--require',
    preload,
    path.join(__dirname, APPS[app].script),
  ];
  // Under valgrind a start lasts 30-60 s of wall time: the ghost report's 30 s rewrite would fall inside it,
  // which it never does in a real start.
  const processEnv = {
    ...sideEnv(side, reportDir),
    ...APPS[app].env,
    ...env,
    DIAG_BENCH_EXIT_AT_READY: '1',
    DIAG_REPORT_FLUSH_INTERVAL_MS: '0',
  };
  return new Promise((resolve, reject) => {
    const options = { env: processEnv, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 };
    execFile('valgrind', args, options, (err, stdout, stderr) => {
      fs.rmSync(reportDir, { recursive: true, force: true });
      const collected = /Collected : (\d+)/.exec(stderr);
      if (err || !collected || !/TOTAL_MS/.test(stdout)) {
        reject(new Error(`${app} ${side}: ${err?.message ?? 'no instruction count'}\n${stderr.slice(-2000)}`));
        return;
      }
      resolve(Number(collected[1]));
    });
  });
}

/** Runs `jobs` (functions returning promises) two at a time, in order; results in the same order. */
async function twoAtATime(jobs) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

/**
 * Per app of `apps`: the median instruction count of each side over `runs` fresh processes, and each phase's
 * ratio to NodeSDK alone. Undefined when valgrind is missing. Exported for bench/check.js.
 */
async function measureInstructions({ apps = Object.keys(APPS), runs = RUNS } = {}) {
  if (valgrindVersion() === undefined) return undefined;
  for (const app of apps) if (!APPS[app]) throw new Error(`unknown app ${app}; one of ${Object.keys(APPS).join(', ')}`);
  const jobs = [];
  for (const app of apps) for (let r = 0; r < runs; r++) for (const side of SIDES) jobs.push({ app, side });
  const counts = await twoAtATime(
    jobs.map(
      ({ app, side }) =>
        () =>
          count(app, side),
    ),
  );
  const results = {};
  for (const app of apps) {
    const per = (side) => median(counts.filter((_, i) => jobs[i].app === app && jobs[i].side === side));
    const [sdk, phase1, phase2] = SIDES.map(per);
    results[app] = { sdk, phase1, phase2, phase1ToSdk: phase1 / sdk, phase2ToSdk: phase2 / sdk };
  }
  return results;
}

async function main() {
  const results = await measureInstructions({ apps: selectedApps });
  if (results === undefined) {
    console.error(
      'valgrind not found: this benchmark counts instructions with callgrind (Debian: apt-get install valgrind).',
    );
    process.exit(2);
  }
  console.log(`node ${process.version}, ${valgrindVersion()}, ${RUNS} process(es) per side, medians\n`);
  console.log('| app | NodeSDK alone (M instructions) | + Phase 1 | × SDK | + Phase 1 + 2 | × SDK |');
  console.log('|---|---:|---:|---:|---:|---:|');
  const m = (n) => (n / 1e6).toFixed(0);
  for (const [app, r] of Object.entries(results)) {
    console.log(
      `| ${APPS[app].label} | ${m(r.sdk)} | ${m(r.phase1)} | **${r.phase1ToSdk.toFixed(3)}** | ${m(r.phase2)} | **${r.phase2ToSdk.toFixed(3)}** |`,
    );
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(results));
}

module.exports = { APPS, NODE_FLAGS, count, twoAtATime, measureInstructions, valgrindVersion };

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
