'use strict';
// Where the package's start-up instructions go (issue #46): one part cut out of a copy of `dist`, counted under
// callgrind against an unchanged copy in the same folder, at the same depth and with a name of the same length
// (where the package lives moves the counts: docs/benchmarks.md, "Start-up in instructions"). Each cut is a set
// of edits of the built JavaScript that must each match exactly once, or the script stops: a renamed function
// would otherwise measure nothing. A cut removes work, so the application may end up less observed (a bean not
// tracked); it only has to reach ready as before.
//   npm run build && node bench/startup/ablation.js [--apps nest] [--sides phase1,phase2] [--cuts a,b] [--runs 1]
//     [--json]
// About 40 s per process under valgrind, two at a time: per app, NodeSDK alone once, then (1 + cuts) × sides.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { arg, median } = require('../sketch/workload');
const { APPS, count: countInstructions, twoAtATime, valgrindVersion } = require('./instructions');
const { CUTS: TIMELINE_CUTS } = require('./timeline-share');

const root = path.resolve(__dirname, '..', '..');
const RUNS = arg('runs', 1);
const listArg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1].split(',') : fallback;
};

/** `[file under dist/, pattern, replacement]`: the pattern's one match is replaced. */
const returnEarly = (file, header, value = '') => [file, header, (m) => `${m}\n        return${value};`];

/**
 * The parts that can be cut (`phase2Only`: counted with Phase 1 + 2 only), each one piece of work the package does between process start and ready. Phase 2's
 * are listed from the outside in: `nest-phase2` is every Phase 2 step on Nest's path, the others one step each.
 */
const CUTS = {
  'load-hook': {
    what: "the hook on every module load (Module.prototype.load left as Node's)",
    edits: [['patching/module-hooks.js', /function install\(\) \{/, (m) => `${m}\n    return;`]],
  },
  timeline: {
    what: 'the start-up timeline: no reading or record per module load, phase or hook',
    // The same cut bench:timeline measures the timeline's share with.
    edits: TIMELINE_CUTS,
  },
  'nest-phase2': {
    phase2Only: true,
    what: "Phase 2 on Nest's path: the pre-read of names, the decorator's watch, the per-bean reaction and track(), the values at the end",
    edits: [
      returnEarly('adapters/nestjs/container-observer.js', / {4}preRead\(container, state\) \{/),
      [
        'adapters/nestjs/container-observer.js',
        /const tracker = observer\.detector\.tracker;/,
        () => 'const tracker = undefined;',
      ],
      returnEarly('adapters/nestjs/container-observer.js', / {4}trackValues\(container, state\) \{/),
    ],
  },
  'pre-read': {
    phase2Only: true,
    what: 'the read of unique bean names before the first instance (beans tracked under their tokens instead)',
    edits: [returnEarly('adapters/nestjs/container-observer.js', / {4}preRead\(container, state\) \{/)],
  },
  'track-per-bean': {
    phase2Only: true,
    what: "the per-bean track(): the bean's name and scope, the tracker, the first-touch wrappers",
    edits: [
      returnEarly(
        'adapters/nestjs/container-observer.js',
        / {4}track\(container, state, wrapper, context, instance\) \{/,
      ),
    ],
  },
  'install-first-touch': {
    phase2Only: true,
    what: "the tracker's own work past its checks: the pending-handle lookup and installFirstTouch",
    edits: [
      [
        'ghost/tracking/tracker.js',
        // dist is compiled without comments: the first statement past the checks is the anchor.
        / {8}if \(node_util_1\.types\.isProxy\(instance\)\)/,
        // (attachUnsafe, which both track() and trackUnnamed() go through: skipped, as a bean with no methods is)
        (m) => `        return skipped('no-methods');\n${m}`,
      ],
    ],
  },
  'track-values': {
    phase2Only: true,
    what: 'the useValue providers tracked at the end of bootstrap',
    edits: [returnEarly('adapters/nestjs/container-observer.js', / {4}trackValues\(container, state\) \{/)],
  },
};

/** The copies' folder names: one length, so that every copy's files have paths of one length. */
const variantDir = (i) => `v${String(i).padStart(2, '0')}`;

/** A copy of the package (package.json, dist/, a link to node_modules) per variant in one folder; `v00` as built. */
function copies(cuts) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-ablation-'));
  ['', ...cuts].forEach((cut, i) => {
    const target = path.join(dir, variantDir(i));
    fs.mkdirSync(target);
    fs.copyFileSync(path.join(root, 'package.json'), path.join(target, 'package.json'));
    fs.cpSync(path.join(root, 'dist'), path.join(target, 'dist'), { recursive: true });
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(target, 'node_modules'));
    if (cut === '') return;
    for (const [file, pattern, replace] of CUTS[cut].edits) {
      const full = path.join(target, 'dist', file);
      const text = fs.readFileSync(full, 'utf8');
      const matches = text.match(new RegExp(pattern.source, 'g')) ?? [];
      if (matches.length !== 1) throw new Error(`${cut}: ${file}: ${pattern} matched ${matches.length} times`);
      fs.writeFileSync(full, text.replace(pattern, replace));
    }
  });
  return dir;
}

/** Per app: NodeSDK alone, and per side the package as built and with each cut; medians over `runs`. */
async function measureAblation({ apps, sides, cuts, runs }) {
  for (const cut of cuts) if (!CUTS[cut]) throw new Error(`unknown cut ${cut}; one of ${Object.keys(CUTS).join(', ')}`);
  const dir = copies(cuts);
  try {
    const jobs = [];
    for (const app of apps) {
      for (let r = 0; r < runs; r++) {
        jobs.push({ app, side: 'sdk', variant: 0 });
        for (const side of sides) {
          jobs.push({ app, side, variant: 0 });
          cuts.forEach((cut, i) => {
            if (side === 'phase2' || !CUTS[cut].phase2Only) jobs.push({ app, side, variant: i + 1 });
          });
        }
      }
    }
    const counts = await twoAtATime(
      jobs.map(
        ({ app, side, variant }) =>
          () =>
            countInstructions(app, side, { DIAG_PACKAGE: path.join(dir, variantDir(variant)) }),
      ),
    );
    const of = (app, side, variant) =>
      median(counts.filter((_, i) => jobs[i].app === app && jobs[i].side === side && jobs[i].variant === variant));
    const results = {};
    for (const app of apps) {
      const sdk = of(app, 'sdk', 0);
      results[app] = { sdk, sides: {} };
      for (const side of sides) {
        const built = of(app, side, 0);
        results[app].sides[side] = {
          built,
          ofSdk: built / sdk,
          cuts: Object.fromEntries(
            cuts.flatMap((cut, i) => {
              if (side !== 'phase2' && CUTS[cut].phase2Only) return [];
              const without = of(app, side, i + 1);
              return [[cut, { without, part: built - without, partOfSdk: (built - without) / sdk }]];
            }),
          ),
        };
      }
    }
    return results;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  if (valgrindVersion() === undefined) {
    console.error('valgrind not found (Debian: apt-get install valgrind)');
    process.exit(2);
  }
  const apps = listArg('apps', ['nest']);
  for (const app of apps) if (!APPS[app]) throw new Error(`unknown app ${app}; one of ${Object.keys(APPS).join(', ')}`);
  const sides = listArg('sides', ['phase1', 'phase2']);
  const cuts = listArg('cuts', Object.keys(CUTS));
  const results = await measureAblation({ apps, sides, cuts, runs: RUNS });
  const m = (n) => (n / 1e6).toFixed(1);
  console.log(`node ${process.version}, ${valgrindVersion()}, ${RUNS} process(es) per variant, medians\n`);
  console.log('| app | side | part cut | as built (M) | without it (M) | the part (M) | ÷ NodeSDK alone |');
  console.log('|---|---|---|---:|---:|---:|---:|');
  for (const [app, r] of Object.entries(results)) {
    for (const [side, s] of Object.entries(r.sides)) {
      const label = side === 'phase1' ? 'Phase 1' : 'Phase 1 + 2';
      console.log(
        `| ${APPS[app].label} (SDK ${m(r.sdk)} M) | ${label} | — | ${m(s.built)} | | | ${s.ofSdk.toFixed(3)} |`,
      );
      for (const [cut, c] of Object.entries(s.cuts)) {
        console.log(
          `| | ${label} | ${cut} | ${m(s.built)} | ${m(c.without)} | ${m(c.part)} | ${c.partOfSdk.toFixed(4)} |`,
        );
      }
    }
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(results));
}

module.exports = { CUTS, copies, measureAblation };

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
