'use strict';
// The zero-cost guard (`npm run bench:check`, run by CI after the tests): short runs of the call-shape,
// start-up, memory and sketch-hit benchmarks, each figure compared with its goal plus a noise margin.
//
//   npm run build && node bench/check.js [--json] [--only shapes,startup,containers,vendure,instructions,memory,sketch-hit,ledger]
//
// Margins were derived from repeated runs on a shared 2-core machine (see SHAPE_MARGIN and docs/benchmarks.md):
// the threshold of a figure is its goal plus that margin. A figure above its threshold is measured once more,
// and the check fails only when both measurements are above it: a regression fails twice, a noisy round
// rarely does.
//
// Where a goal is not met yet (issue #15), the entry says so and guards the figure as it stands instead, with
// the same margin: it must not get worse. Tightening such an entry to its goal is part of meeting the goal.
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
if (!fs.existsSync(path.join(root, 'dist', 'index.js'))) {
  console.error('dist/ is missing: run npm run build first');
  process.exit(2);
}
const { measureShapes } = require('./tracker/shapes');
const { measureStartup } = require('./startup/run');
const { measureMemory } = require('./tracker/memory');
const { measureVendure } = require('./startup/vendure');
const { CONTAINERS, measureContainer } = require('./startup/containers');
const { measureSketchHit } = require('./sketch/hit-ab');
const { APPS: INSTRUCTION_APPS, measureInstructions, valgrindVersion } = require('./startup/instructions');

/**
 * Over six runs of this check on a shared 2-core VM, the median of one figure moved by up to 0.25 between runs
 * for the call shapes (direct: 0.84-1.09) and 0.18 for start-up (Phase 1 + 2 on the tree app: 0.98-1.16). A
 * figure sitting at its goal can therefore read about half the shapes' range, and nearly the whole start-up range
 * (fewer repetitions inside a run), above it.
 */
const SHAPE_MARGIN = 0.15;
const STARTUP_MARGIN = 0.16;

/** A call-shape's tracked/untracked ratio; goal 1.05 for all (issue #15). `ceiling`: a known gap, guarded as is. */
const SHAPES = {
  direct: {},
  'field-write': {},
  'private-field': {},
  getter: {},
  'interface-typed': {},
  // The untracked side is under a nanosecond, so its ratio is the noisiest; since the released site's flag is
  // a constant to V8 (docs/tracking.md, "Captured callbacks") it reads 0.89-1.04 (was 2.0-3.0).
  'bound-at-startup': {},
  async: {},
  'route-handler': {},
  'cron-job': {},
  'event-listener': {},
};
const SHAPE_GOAL = 1.05;

/**
 * Process start to ready, ratio to NodeSDK alone. Goals: Phase 1 ≤ 1.03, Phase 1 + 2 ≤ 1.05. Since the module
 * hooks left require-in-the-middle (docs/benchmarks.md, "Start-up") the app that loads ~2,000 modules reads
 * 0.99-1.08 (Phase 1) and 1.01-1.09 (Phase 1 + 2): at the goals within this machine's noise, guarded at goal +
 * margin. The small app (1,000 providers, ~1,450 modules, ~750 ms) read 1.02-1.17 and 1.03-1.15 over five
 * bench:startup runs and four CI emulations: the package's fixed load and the per-bean wrappers weigh more on a
 * short start, so it stays a known gap guarded where it stands. 13 alternations per app (not 9), so that one
 * noisy stretch moves the median less, rather than a looser margin.
 */
const SMALL_APP_GAP = { gap: 'fixed load + per-bean wrappers on a 750 ms start; see docs/benchmarks.md' };
const STARTUP = [
  { app: 'small', tree: false, side: 'phase1', goal: 1.03, ceiling: 1.1, ...SMALL_APP_GAP },
  { app: 'small', tree: false, side: 'phase2', goal: 1.05, ceiling: 1.12, ...SMALL_APP_GAP },
  { app: 'large dependency tree', tree: true, side: 'phase1', goal: 1.03 },
  { app: 'large dependency tree', tree: true, side: 'phase2', goal: 1.05 },
];

/**
 * Heap bytes per bean that tracking adds after start-up (the slope between 1,000 and 3,000 beans). Goal 200
 * (issue #15). Margin: the median of three pairs read 433-518 over three checks in a row. Method depth (issue
 * #43, the default since) may cost at most 1.5x bean depth's 445 B: 667. It read 694 (1.56x) until a class of one
 * method held its gate without an array and the tracker kept a name's handle in its one entry per name: 444-535
 * against 407-502 at bean depth over three runs on 2026-11-28 (the previous build 773 against 460 with 5 pairs side
 * by side). The limit is #43's 667 itself (ceiling + margin).
 */
const MEMORY = {
  goal: 200,
  ceiling: 587,
  margin: 80,
  gap: 'a wrapper closure and, at method depth, a gate per method, a site per class; see docs/tracking.md#memory',
};

/**
 * One figure against its goal (or, for a known gap guarded where it stands, its ceiling) plus `margin`. Above the
 * threshold it is measured once more, by `again`, and fails only if that measurement is above it too. A figure
 * over its goal but within the threshold reads "known gap" where the entry says why (`gap`), else "ok".
 */
function judge(what, first, { goal, ceiling, margin, gap }, again) {
  const limit = (ceiling ?? goal) + margin;
  const value = first > limit ? Math.min(first, again()) : first;
  const status = value > limit ? 'FAIL' : gap !== undefined && value > goal ? 'known gap' : 'ok';
  return { what, value, goal, limit, status, gap };
}

/** A measurement taken at most once, when a figure first needs it again. */
function lazily(measure) {
  let result;
  return () => (result ??= measure());
}

function checkShapes() {
  const measure = () => measureShapes({ pairs: 11, rounds: 3, calls: 5_000_000 });
  const first = measure();
  const again = lazily(measure);
  return Object.entries(SHAPES).map(([shape, spec]) =>
    judge(
      `tracked/untracked, ${shape}`,
      first[shape].ratio,
      { goal: SHAPE_GOAL, margin: SHAPE_MARGIN, ...spec },
      () => again()[shape].ratio,
    ),
  );
}

const PHASE_LABEL = { phase1: 'Phase 1', phase2: 'Phase 1 + 2' };

/** One app's start-up figures against their specs; measured a second time only when a figure needs it. */
function judgeStartup(app, measure, specs) {
  const first = measure();
  const again = lazily(measure);
  return specs.map((spec) =>
    judge(
      `start-up ÷ NodeSDK, ${PHASE_LABEL[spec.side]}, ${app}`,
      first[spec.side].totalToSdk,
      { ...spec, margin: STARTUP_MARGIN },
      () => again()[spec.side].totalToSdk,
    ),
  );
}

function checkStartup() {
  return [false, true].flatMap((tree) => {
    const specs = STARTUP.filter((s) => s.tree === tree);
    return judgeStartup(`${specs[0].app} app`, () => measureStartup({ runs: 13, tree }), specs);
  });
}

/** Vendure's server from the registry: ~4,700 modules, 400 beans, 40 of them the application's. */
const VENDURE = [
  { side: 'phase1', goal: 1.03 },
  { side: 'phase2', goal: 1.05 },
];

/**
 * `judge` for an asynchronous measurement of several figures: `figure(result, spec)` of each spec, the whole
 * measured once more, once, only when some figure is above its threshold.
 */
async function judgeEach(measure, specs, { label, figure, margin }) {
  const first = await measure();
  let second;
  const rows = [];
  for (const spec of specs) {
    let value = figure(first, spec);
    if (value > (spec.ceiling ?? spec.goal) + margin) {
      second ??= await measure();
      value = Math.min(value, figure(second, spec));
    }
    rows.push(judge(label(spec), value, { ...spec, margin }, () => value));
  }
  return rows;
}

function checkVendure() {
  return judgeEach(() => measureVendure({ runs: 5, sides: ['sdk', 'phase1', 'phase2'] }), VENDURE, {
    label: (spec) => `start-up ÷ NodeSDK, ${PHASE_LABEL[spec.side]}, Vendure server`,
    figure: (result, spec) => result[spec.side].totalToSdk,
    margin: STARTUP_MARGIN,
  });
}

/**
 * InversifyJS, tsyringe and awilix apps of 1,000 bindings (issue #16): process start to listening ÷ NodeSDK,
 * goal 1.05 with Phase 1 and with Phase 1 + 2. Eleven-run measurements read 1.00-1.12 across runs of
 * `bench:containers` (a fixed ~12 ms of package load on apps ready in 400-550 ms), so the start-up margin.
 */
const CONTAINER_GOAL = 1.05;

function checkContainers() {
  const specs = ['phase1', 'phase2'].map((side) => ({ side, goal: CONTAINER_GOAL }));
  return CONTAINERS.flatMap((container) =>
    judgeStartup(`${container} app`, () => measureContainer(container, { runs: 9 }), specs),
  );
}

/**
 * Start-up in instructions (callgrind, process start to ready, ÷ NodeSDK alone; V8 made deterministic, see
 * bench/startup/instructions.js): the goals (issue #46: ≤ 1.03 with Phase 1, ≤ 1.05 with Phase 1 + 2, the Nest
 * app and the three containers alike) plus the noise of the count, for every entry, met or not yet (below). In
 * one checkout a side repeats to ±0.05 % (3,716.0 and 3,716.1 M for
 * the Nest app's Phase 1 in two runs, 2026-11-27); where the checkout lives moves a ratio by up to 0.026 (three
 * paths, 2026-11-24), and 0.004 between /work/wt-46 and a copy of its dist under /tmp (2026-11-27): margin
 * 0.026. Needs valgrind (Debian's package, installed by CI); without it the entries say so.
 */
const INSTRUCTION_MARGIN = 0.026;
/**
 * Every figure fails above its goal plus the noise of the count (issue #46): where a goal is not met yet the
 * entry says why (a "known gap" while it stays within that limit), but the limit is the goal's, not the figure's.
 * The noise is the spread over checkout paths, so within one checkout a gap can still grow up to that limit. 2026-11-28, /work/main, after the lazy
 * containers' bookkeeping moved off their start (docs/benchmarks.md, "The lazy containers' adapters"): Nest 1.030
 * and 1.061 with method-level tracking on; InversifyJS 1.033, tsyringe 1.033, awilix 1.042 with Phase 1. The
 * containers' Phase 1 + 2 read 1.038-1.046 while their singletons resolved before ready were tracked from ready,
 * which reported a bean called only while the application started as never called; tracked at their resolution
 * since, 1.049 / 1.052 / 1.059. With dist's JavaScript shipped without comments (later that day): Nest 1.029 /
 * 1.061, InversifyJS 1.033 / 1.048, tsyringe 1.031 / 1.051, awilix 1.040 / 1.058. 2026-11-29, after the
 * InversifyJS and tsyringe adapters described their bindings at ready: Nest 1.028 / 1.060, InversifyJS 1.026 /
 * 1.044, tsyringe 1.026 / 1.052, awilix 1.040 / 1.058 (an entry without `gap` meets its goal).
 */
const gap = (why) => ({ gap: why });
const FIXED_LOAD = "the package's fixed load (its ~36 modules, the hook on every load) on a 450 ms start";
/** Since singletons resolved before ready are tracked at their resolution, not at ready (+23-27 M, 2026-11-28). */
const EARLY_TRACKING =
  'a first-touch install for each of the ~420 singletons resolved before ready, so that a call while the app starts is seen';
const INSTRUCTIONS = {
  nest: [
    { side: 'phase1', goal: 1.03 },
    {
      side: 'phase2',
      goal: 1.05,
      ...gap('installFirstTouch on 1,000 class prototypes (78 M) and the compiles it sets off'),
    },
  ],
  inversify: [
    { side: 'phase1', goal: 1.03 },
    { side: 'phase2', goal: 1.05 },
  ],
  tsyringe: [
    { side: 'phase1', goal: 1.03 },
    { side: 'phase2', goal: 1.05, ...gap(EARLY_TRACKING) },
  ],
  awilix: [
    { side: 'phase1', goal: 1.03, ...gap(FIXED_LOAD) },
    { side: 'phase2', goal: 1.05, ...gap(EARLY_TRACKING) },
  ],
};

function checkInstructions() {
  const apps = Object.keys(INSTRUCTIONS);
  const specs = apps.flatMap((app) => INSTRUCTIONS[app].map((spec) => ({ app, ...spec })));
  const label = (spec) =>
    `start-up instructions ÷ NodeSDK, ${PHASE_LABEL[spec.side]}, ${INSTRUCTION_APPS[spec.app].label}`;
  if (valgrindVersion() === undefined) {
    const why = 'valgrind not found (Debian: apt-get install valgrind)';
    if (process.env.DIAG_REQUIRE_SERVICES === '1') throw new Error(`instruction counts: ${why}`);
    return specs.map((spec) => ({
      what: label(spec),
      value: NaN,
      goal: spec.goal,
      limit: NaN,
      status: `skipped: ${why}`,
    }));
  }
  return judgeEach(() => measureInstructions({ apps, runs: 1 }), specs, {
    label,
    figure: (result, spec) => result[spec.app][`${spec.side}ToSdk`],
    margin: INSTRUCTION_MARGIN,
  });
}

/**
 * The sketch hit ÷ the pure-JS reference of the same shape (issue #15: at most 1), paired rounds in fresh
 * processes (`bench/sketch/hit-ab.js`). Over seven runs of 3-5 processes × 30-60 rounds the median read
 * 0.88-0.95 and single processes 0.82-0.97: margin 0.10, a little over the spread of the medians.
 */
const SKETCH_HIT = { goal: 1, margin: 0.1 };

function checkSketchHit() {
  const measure = () => measureSketchHit({ processes: 5, rounds: 30 }).median.pure;
  return [judge('sketch hit ÷ pure-JS reference, default shape', measure(), SKETCH_HIT, measure)];
}

function checkMemory() {
  const measure = () => measureMemory({ pairs: 3 }).bytesPerBean;
  return [judge('heap bytes per tracked bean (1 method)', measure(), MEMORY, measure)];
}

/**
 * The ghost ledger in Redis (bench/ledger/run.js, 100 processes × 3,000 beans × 10 methods, 1,000 endpoints): the
 * service's memory, goal 2 MiB (#43; 1 MiB for the beans alone before), and the steady state's commands per
 * process-hour, goal 10 a minute (a heartbeat round is 8, methods or not). Neither figure depends on the machine's
 * speed: no margin beyond the goal, and one measurement.
 */
const LEDGER = { memoryKiB: { goal: 2048, margin: 0 }, commandsPerMinute: { goal: 10, margin: 0 } };

async function checkLedger() {
  const what = [
    'ghost ledger KiB per service, 100 × 3,000 beans × 10 methods, 1,000 endpoints',
    'ghost ledger commands per process-minute, idle',
  ];
  const { execFileSync } = require('node:child_process');
  try {
    execFileSync(process.env.REDIS_SERVER_BIN || 'redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    const why = 'redis-server not found (Debian: apt-get install redis-server)';
    if (process.env.DIAG_REQUIRE_SERVICES === '1') throw new Error(`ghost ledger: ${why}`);
    return what.map((w) => ({ what: w, value: NaN, goal: NaN, limit: NaN, status: `skipped: ${why}` }));
  }
  const { measureLedger } = require('./ledger/run');
  const result = await measureLedger();
  const once = (x) => () => x;
  const kib = result.memoryBytes / 1024;
  const perMinute = result.steadyCommandsPerProcessHour / 60;
  return [
    judge(what[0], kib, LEDGER.memoryKiB, once(kib)),
    judge(what[1], perMinute, LEDGER.commandsPerMinute, once(perMinute)),
  ];
}

async function main() {
  const started = Date.now();
  const checks = {
    shapes: checkShapes,
    startup: checkStartup,
    containers: checkContainers,
    vendure: checkVendure,
    instructions: checkInstructions,
    memory: checkMemory,
    'sketch-hit': checkSketchHit,
    ledger: checkLedger,
  };
  // `--only instructions,memory`: some of the checks, say to re-run the one that failed
  const onlyArg = process.argv.indexOf('--only');
  const only = onlyArg > 0 ? process.argv[onlyArg + 1].split(',') : Object.keys(checks);
  const unknown = only.filter((name) => !(name in checks));
  if (unknown.length > 0)
    throw new Error(`unknown check ${unknown.join(', ')}; one of ${Object.keys(checks).join(', ')}`);
  const rows = [];
  for (const name of only) rows.push(...(await checks[name]()));
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows, null, 2));
  else {
    console.log(
      `bench:check on node ${process.version}, ${require('node:os').cpus().length} cores, ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    console.log(
      `${'figure'.padEnd(58)} ${'measured'.padStart(9)} ${'goal'.padStart(6)} ${'fails >'.padStart(8)}  status`,
    );
    for (const r of rows) {
      const f = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(3));
      console.log(
        `${r.what.padEnd(58)} ${f(r.value).padStart(9)} ${f(r.goal).padStart(6)} ${f(r.limit).padStart(8)}  ${r.status}${r.status === 'known gap' ? ` (${r.gap})` : ''}`,
      );
    }
  }
  const failed = rows.filter((r) => r.status === 'FAIL');
  if (failed.length > 0) {
    console.error(
      `bench:check: ${failed.length} figure(s) above their threshold, in two measurements: ${failed.map((r) => r.what).join('; ')}`,
    );
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(`bench:check: ${err.message}`);
  process.exitCode = 1;
});
