'use strict';
// The start-up timeline's own share of the start-up (issue #37), in instructions: the benchmark apps of
// bench/startup/instructions.js, each side (Phase 1, Phase 1 + 2) run under callgrind from process start to
// ready with two copies of the package side by side in one temporary folder: one as built, one with the timeline
// cut out (no clock reading or record per module load, per phase or per hook; no per-bean hook timers; no phase
// wrappers). Both copies sit at the same depth of the same folder, since where the package lives moves the counts
// (docs/benchmarks.md, "Start-up in instructions"). Then, after ready, how long building the timeline takes when
// someone reads it (off the start-up path: `{base}/startup`, the report's section, the spans).
//   npm run build && node bench/startup/timeline-share.js [--apps nest,awilix] [--runs 1] [--json]
// About 40 s per process under valgrind, two at a time: with the defaults, 2 apps × 3 processes × 2 sides.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { arg, median } = require('../sketch/workload');
const { sideEnv } = require('./run');
const { APPS, count: countInstructions, twoAtATime } = require('./instructions');

const root = path.resolve(__dirname, '..', '..');
const RUNS = arg('runs', 1);
const appsArg = process.argv.indexOf('--apps');
const selectedApps = appsArg > 0 ? process.argv[appsArg + 1].split(',') : ['nest', 'awilix'];

/**
 * The cut: each replacement must match exactly once in the built code, or the script stops (a renamed function
 * would otherwise measure nothing).
 */
const CUTS = [
  ['shared/boot-clock.js', /function loadStarted\(filename\) \{/, (m) => `${m}\n    return -1;`],
  [
    'shared/boot-clock.js',
    /function stepStarted\(kind, name, subject = '', group = ''\) \{/,
    (m) => `${m}\n    return -1;`,
  ],
  [
    'shared/boot-clock.js',
    /function stepRecorded\(kind, name, start, end, subject = '', group = ''\) \{/,
    (m) => `${m}\n    return;`,
  ],
  ['adapters/nestjs/boot-phases.js', /function timed\(name, original, then\) \{/, (m) => `${m}\n    return original;`],
  [
    'adapters/nestjs/boot-phases.js',
    /function timedHookPhase\(hook, original, then\) \{/,
    (m) => `${m}\n    return original;`,
  ],
];

/** Two copies of the package (package.json, dist/, a link to node_modules) in one folder: `with` and `without`. */
function copies() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-timeline-share-'));
  for (const name of ['with', 'without']) {
    const target = path.join(dir, name);
    fs.mkdirSync(target);
    fs.copyFileSync(path.join(root, 'package.json'), path.join(target, 'package.json'));
    fs.cpSync(path.join(root, 'dist'), path.join(target, 'dist'), { recursive: true });
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(target, 'node_modules'));
  }
  for (const [file, pattern, replace] of CUTS) {
    const full = path.join(dir, 'without', 'dist', file);
    const text = fs.readFileSync(full, 'utf8');
    const matches = text.match(new RegExp(pattern.source, 'g')) ?? [];
    if (matches.length !== 1) throw new Error(`${file}: ${pattern} matched ${matches.length} times; update CUTS`);
    fs.writeFileSync(full, text.replace(pattern, replace));
  }
  return dir;
}

/** Per app and side: instructions with and without the timeline, and NodeSDK alone. */
async function measureShare({ apps = selectedApps, runs = RUNS } = {}) {
  const dir = copies();
  try {
    const jobs = [];
    for (const app of apps) {
      for (let r = 0; r < runs; r++) {
        jobs.push({ app, side: 'sdk', variant: 'with' });
        for (const side of ['phase1', 'phase2'])
          for (const variant of ['with', 'without']) jobs.push({ app, side, variant });
      }
    }
    const counts = await twoAtATime(
      jobs.map(
        ({ app, side, variant }) =>
          () =>
            countInstructions(app, side, { DIAG_PACKAGE: path.join(dir, variant) }),
      ),
    );
    const results = {};
    for (const app of apps) {
      const of = (side, variant) =>
        median(counts.filter((_, i) => jobs[i].app === app && jobs[i].side === side && jobs[i].variant === variant));
      const sdk = of('sdk', 'with');
      results[app] = { sdk };
      for (const side of ['phase1', 'phase2']) {
        const withTimeline = of(side, 'with');
        const without = of(side, 'without');
        results[app][side] = {
          with: withTimeline,
          without,
          timeline: withTimeline - without,
          shareOfStartup: (withTimeline - without) / withTimeline,
          ofSdk: (withTimeline - without) / sdk,
        };
      }
    }
    return results;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Building the timeline when it is read (after ready, off the start-up path): the Nest app of 1,000 providers
 * started once with the built package, then `currentBootProfile()` built 21 times from its record.
 */
function measureBuild() {
  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-bench-'));
  try {
    const out = execFileSync(
      process.execPath,
      [
        '--require',
        path.join(root, 'test', 'fixtures', 'telemetry', 'telemetry.cjs'),
        '--require',
        path.join(__dirname, 'timeline-build-probe.cjs'),
        path.join(__dirname, 'app.js'),
      ],
      {
        encoding: 'utf8',
        env: { ...sideEnv('phase1', reportDir), PROVIDERS: '1000', DIAG_BENCH_EXIT_AT_READY: '1' },
      },
    );
    return JSON.parse(/^BUILD (.*)$/m.exec(out)[1]);
  } finally {
    fs.rmSync(reportDir, { recursive: true, force: true });
  }
}

async function main() {
  try {
    execFileSync('valgrind', ['--version']);
  } catch {
    console.error('valgrind not found (Debian: apt-get install valgrind)');
    process.exit(2);
  }
  const results = await measureShare();
  const m = (n) => (n / 1e6).toFixed(1);
  console.log(`node ${process.version}, ${RUNS} process(es) per side and variant, medians\n`);
  console.log(
    '| app | side | with the timeline (M) | without (M) | the timeline (M) | share of the start-up | ÷ NodeSDK alone |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const [app, r] of Object.entries(results)) {
    for (const side of ['phase1', 'phase2']) {
      const s = r[side];
      console.log(
        `| ${APPS[app].label} | ${side === 'phase1' ? 'Phase 1' : 'Phase 1 + 2'} | ${m(s.with)} | ${m(s.without)} | ${m(s.timeline)} | ${(s.shareOfStartup * 100).toFixed(2)} % | ${s.ofSdk.toFixed(4)} |`,
      );
    }
  }
  const build = measureBuild();
  console.log(
    `\nBuilding the timeline on read (after ready), NestJS 1,000 providers: ${build.loads} loads, ${build.steps} steps, median ${build.ms.toFixed(1)} ms`,
  );
  if (process.argv.includes('--json')) console.log(JSON.stringify({ results, build }));
}

module.exports = { CUTS, copies, measureShare, measureBuild };

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
