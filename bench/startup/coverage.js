'use strict';
// How exact the start-up timeline is (issue #37), checked against a CPU profile of the same start: the app runs
// once under `node --cpu-prof` with the instrumentation and exits as soon as the timeline is published
// (exit-at-ready.cjs); its samples from process start to ready are then sorted into the timeline's steps.
// A correctness check, not a benchmark: every figure is a ratio inside one run.
//   npm run build && node bench/startup/coverage.js [--app shop|vendure|openapi-cli|bench] [--json]
// Prints: the timeline's own coverage (the share of process start → ready inside some step), the share of the
// profile's samples in that window that fall inside a step (all samples, and the busy ones), what the
// unattributed samples were doing, and, for the packages and hooks with the most self time, the share of their
// samples whose stack is in that package's code or Node's module loader (the package) or in the hook's method.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const telemetry = path.join(root, 'test', 'fixtures', 'telemetry');
// The instrumentation before the SDK (docs/startup.md), unless --sdk-first: then the SDK's load is the preload's.
const preload = path.join(
  telemetry,
  process.argv.includes('--sdk-first') ? 'telemetry.cjs' : 'telemetry-diag-first.cjs',
);
const exitAtReady = path.join(__dirname, 'exit-at-ready.cjs');

/** The apps it knows: where each starts and what it needs. */
const APPS = {
  shop: {
    cwd: path.join(root, 'test', 'fixtures', 'nest11', 'out-cjs', 'ghost-app'),
    args: ['main.js'],
    ready: () => fs.existsSync(path.join(root, 'test', 'fixtures', 'nest11', 'out-cjs', 'ghost-app', 'main.js')),
    missing: 'node scripts/prepare-test-fixtures.js',
  },
  // The start-up timeline's fixture: a slow package, slow hooks, an async factory (test/fixtures/apps/boot-app).
  boot: {
    cwd: path.join(root, 'test', 'fixtures', 'nest11', 'out-cjs', 'boot-app'),
    args: ['main.js'],
    ready: () => fs.existsSync(path.join(root, 'test', 'fixtures', 'nest11', 'out-cjs', 'boot-app', 'main.js')),
    missing: 'node scripts/prepare-test-fixtures.js',
  },
  bench: { cwd: __dirname, args: ['app.js'], env: { PROVIDERS: '1000' }, ready: () => true },
  vendure: {
    cwd: path.join(__dirname, 'vendure'),
    args: ['plugins-server.js'],
    ready: () => fs.existsSync(path.join(__dirname, 'vendure', 'node_modules', '@vendure', 'core')),
    missing: 'npm ci --prefix bench/startup/vendure',
    setup: (dir, env) => {
      const db = path.join(dir, 'vendure.sqlite');
      execFileSync(process.execPath, ['plugins-server.js'], {
        cwd: path.join(__dirname, 'vendure'),
        env: { ...env, VENDURE_DB: db, VENDURE_SYNC: '1', PORT: '0' },
        stdio: 'ignore',
        timeout: 120_000,
      });
      return { VENDURE_DB: db, PORT: '0' };
    },
  },
  'openapi-cli': {
    cwd: path.join(__dirname, 'openapi-cli'),
    args: ['start.js'],
    ready: () =>
      fs.existsSync(path.join(__dirname, 'openapi-cli', 'node_modules', '@openapitools', 'openapi-generator-cli')),
    missing: 'npm ci --prefix bench/startup/openapi-cli',
  },
};

/** The profile's samples as [time in performance.now() ms, node id], and the nodes by id. */
function samplesOf(profile, originUs) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
  const samples = [];
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    samples.push({ at: (t - originUs) / 1000, node: profile.samples[i] });
  }
  return { samples, nodes, parents, startMs: (profile.startTime - originUs) / 1000 };
}

function stackOf(nodeId, nodes, parents) {
  const frames = [];
  for (let id = nodeId; id !== undefined; id = parents.get(id)) frames.push(nodes.get(id).callFrame);
  return frames;
}

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);

/** For each instant, the step that holds it as the timeline counts self time: the newest open step. */
function newestOpen(steps, at) {
  let best;
  for (const s of steps) {
    if (s.start <= at && at < s.end && (best === undefined || s.start >= best.start)) best = s;
  }
  return best;
}

/** Runs `app` once under --cpu-prof and sorts its samples into the timeline's steps. */
function measureCoverage(app) {
  const spec = APPS[app];
  if (!spec) throw new Error(`unknown app ${app}; one of ${Object.keys(APPS).join(', ')}`);
  if (!spec.ready()) throw new Error(`${app} is not installed: run \`${spec.missing}\``);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-coverage-'));
  try {
    const env = {
      ...process.env,
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      DIAG_REPORT_DIR: path.join(dir, 'reports'),
      DIAG_REPORT_FLUSH_INTERVAL_MS: '0',
      DIAG_LOG_LEVEL: 'warn',
      ...spec.env,
    };
    Object.assign(env, spec.setup?.(dir, env));
    const out = path.join(dir, 'timeline.json');
    const profiles = path.join(dir, 'profiles');
    execFileSync(
      process.execPath,
      [
        '--cpu-prof',
        '--cpu-prof-interval',
        '500',
        '--cpu-prof-dir',
        profiles,
        '--require',
        preload,
        '--require',
        exitAtReady,
        ...spec.args,
      ],
      { cwd: spec.cwd, env: { ...env, TIMELINE_OUT: out }, stdio: ['ignore', 'ignore', 'inherit'], timeout: 180_000 },
    );
    const { startup, profile: boot, clock } = JSON.parse(fs.readFileSync(out, 'utf8'));
    const [file] = fs.readdirSync(profiles);
    const profile = JSON.parse(fs.readFileSync(path.join(profiles, file), 'utf8'));
    const originUs = Number(BigInt(clock.hrtimeNs) / 1000n) - clock.now * 1000;
    return analyse(app, startup, boot, samplesOf(profile, originUs));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function analyse(app, startup, boot, { samples, nodes, parents, startMs }) {
  const ready = boot.end;
  const gaps = boot.coverage.gaps;
  const inGap = (at) => gaps.some((g) => g.start <= at && at < g.end);
  const window = samples.filter((s) => s.at >= startMs && s.at < ready);
  const busy = (s) => !IDLE.has(nodes.get(s.node).callFrame.functionName);
  const unattributed = window.filter((s) => inGap(s.at));
  const leafName = (s) => {
    const f = nodes.get(s.node).callFrame;
    return `${f.functionName || '(anonymous)'} ${f.url ? path.basename(f.url) : ''}`.trim();
  };
  const top = (list) => {
    const counts = new Map();
    for (const s of list) counts.set(leafName(s), (counts.get(leafName(s)) ?? 0) + 1);
    return [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([name, n]) => `${name} ×${n}`);
  };
  // Each sample under the step the timeline gives its instant to, to check that what it calls a package's load
  // or a hook is that.
  const steps = boot.steps;
  const bySteps = new Map();
  for (const s of window) {
    const step = newestOpen(steps, s.at);
    if (!step) continue;
    let list = bySteps.get(step);
    if (!list) bySteps.set(step, (list = []));
    list.push(s);
  }
  const agreement = (filter, matches) => {
    let inside = 0;
    let total = 0;
    for (const [step, list] of bySteps) {
      if (!filter(step)) continue;
      for (const s of list) {
        if (!busy(s)) continue;
        total++;
        if (matches(step, stackOf(s.node, nodes, parents))) inside++;
      }
    }
    return { samples: total, share: total > 0 ? inside / total : 1 };
  };
  const loading = (frame) => frame.url.startsWith('node:internal/modules/') || frame.functionName === 'compileFunction';
  const packages = agreement(
    (step) => step.kind === 'package',
    // The module being evaluated when the sample was taken: the innermost anonymous frame with a file (a
    // CommonJS module's top level is an anonymous function), unless Node's loader is below it (compiling or
    // resolving one of the package's files). Helpers its top level calls (tslib, reflect-metadata) run for it.
    (step, stack) => {
      for (const f of stack) {
        if (loading(f)) return true;
        if (f.functionName === '' && f.url !== '' && !f.url.startsWith('node:')) {
          return f.url.includes(`/node_modules/${step.package}/`);
        }
      }
      return false;
    },
  );
  const hooks = agreement(
    (step) => step.kind === 'hook',
    // The hook's own frame (V8 names a method `onModuleInit`, an arrow in a field `AppModule.onModuleInit`), or
    // the timer around it. After an await the stack starts at the innermost async function resumed: work the
    // hook awaits (a schema built by a library's async function) shows without the hook's frame.
    (step, stack) => stack.some((f) => f.functionName.endsWith(step.name) || f.functionName === 'lifecycleHook'),
  );
  const sampleMs = window.length > 1 ? (window[window.length - 1].at - window[0].at) / (window.length - 1) : 0;
  return {
    app,
    readyMs: ready,
    readyCause: boot.readyCause,
    profileStartMs: startMs,
    timelineShare: boot.coverage.share,
    unattributedMs: boot.coverage.unattributed,
    gaps: gaps.filter((g) => g.end - g.start >= 1).map((g) => ({ ...g, ms: g.end - g.start })),
    samples: window.length,
    sampleIntervalMs: sampleMs,
    profileShare: window.length > 0 ? 1 - unattributed.length / window.length : 1,
    busyProfileShare:
      window.filter(busy).length > 0 ? 1 - unattributed.filter(busy).length / window.filter(busy).length : 1,
    unattributedTop: top(unattributed),
    packageAgreement: packages,
    hookAgreement: hooks,
    diagMs: boot.diag.total,
    diag: boot.diag,
    selfByKind: Object.fromEntries(
      Object.entries(steps.reduce((acc, s) => ((acc[s.kind] = (acc[s.kind] ?? 0) + s.self), acc), {})).map(([k, v]) => [
        k,
        Math.round(v * 10) / 10,
      ]),
    ),
    topSelf: [...steps]
      .sort((a, b) => b.self - a.self)
      .slice(0, 8)
      .map((s) => `${s.name}${s.package ? ` ${s.package}` : ''}${s.bean ? ` ${s.bean}` : ''} ${s.self.toFixed(1)}`),
    hooks: startup.hooks.length,
    packageCount: boot.packages.length,
  };
}

module.exports = { APPS, measureCoverage };

if (require.main === module) {
  const i = process.argv.indexOf('--app');
  const apps = i > 0 ? process.argv[i + 1].split(',') : ['shop'];
  for (const app of apps) {
    const r = measureCoverage(app);
    if (process.argv.includes('--json')) console.log(JSON.stringify(r));
    else {
      const pct = (x) => `${(x * 100).toFixed(1)} %`;
      console.log(
        `${app}: ready at ${r.readyMs.toFixed(0)} ms (${r.readyCause}); profile from ${r.profileStartMs.toFixed(0)} ms`,
      );
      console.log(
        `  timeline covers ${pct(r.timelineShare)} of process start → ready (${r.unattributedMs.toFixed(1)} ms not)`,
      );
      console.log(
        `  profile samples inside a step: ${pct(r.profileShare)} of ${r.samples}, busy ones ${pct(r.busyProfileShare)}`,
      );
      console.log(`  unattributed samples: ${r.unattributedTop.join(', ') || 'none'}`);
      for (const g of r.gaps)
        console.log(`  gap ${g.ms.toFixed(1)} ms after ${g.after ?? 'start'} before ${g.before ?? 'ready'}`);
      console.log(
        `  package self time in the package or the loader: ${pct(r.packageAgreement.share)} of ${r.packageAgreement.samples} busy samples`,
      );
      console.log(
        `  hook self time in the hook: ${pct(r.hookAgreement.share)} of ${r.hookAgreement.samples} busy samples`,
      );
      console.log(`  the instrumentation's own: ${r.diagMs.toFixed(1)} ms ${JSON.stringify(r.diag)}`);
      console.log(`  self time by kind (ms): ${JSON.stringify(r.selfByKind)}`);
      console.log(`  most self time: ${r.topSelf.join(' · ')}`);
    }
  }
}
