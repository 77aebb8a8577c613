import { buildBootProfile, type BootInput } from '../../../src/ghost/reports/boot-profile';
import { STEP_KIND, type BootMarks } from '../../../src/shared/boot-clock';
import { startupSection } from '../../../src/ghost/reports/boot-report';
import { toSpringStartup } from '../../../src/ghost/reports/startup-timeline';

type LoadRow = [file: string, start: number, end: number, depth: number];
type StepRow = [
  kind: number,
  name: string,
  start: number,
  returned: number,
  end: number,
  subject: string,
  group: string,
];

/** The record's arrays from rows, as the hooks would have filled them. */
function record(loads: LoadRow[], steps: StepRow[]): Pick<BootInput, 'loads' | 'steps'> {
  return {
    loads: {
      count: loads.length,
      files: loads.map((l) => l[0]),
      starts: Float64Array.from(loads.map((l) => l[1])),
      ends: Float64Array.from(loads.map((l) => l[2])),
      depths: Int32Array.from(loads.map((l) => l[3])),
    },
    steps: {
      count: steps.length,
      kinds: Int32Array.from(steps.map((s) => s[0])),
      names: steps.map((s) => s[1]),
      starts: Float64Array.from(steps.map((s) => s[2])),
      returns: Float64Array.from(steps.map((s) => s[3])),
      ends: Float64Array.from(steps.map((s) => s[4])),
      subjects: steps.map((s) => s[5]),
      groups: steps.map((s) => s[6]),
    },
  };
}

/** The record's loads and steps, in start order, ms since process start. */
const LOADS: LoadRow[] = [
  ['/app/main.js', 10, 100, 0],
  ['/app/node_modules/a/index.js', 20, 60, 1],
  ['/app/node_modules/a/x.js', 25, 30, 2],
  ['/app/node_modules/b/index.js', 40, 55, 2],
  ['/app/node_modules/a/late.js', 70, 80, 1],
];
const STEPS: StepRow[] = [
  [STEP_KIND.phase, 'nest.init', 110, 200, 200, '', ''],
  [STEP_KIND.phase, 'nest.on_module_init', 120, 190, 190, '', ''],
  [STEP_KIND.hook, 'onModuleInit', 121, 122, 180, 'Warmer', 'AppModule'],
  [STEP_KIND.hook, 'onModuleInit', 122.5, 150, 150, 'Compiler', 'AppModule'],
  [STEP_KIND.diag, 'diag.analysis', 151, 160, 160, '', ''],
];

/** A record as the hooks would have written it. */
function input(): BootInput {
  const marks: BootMarks = {
    diagLoadStart: 2,
    diagLoadEnd: 4,
    diagEnableStart: 4.5,
    diagEnableEnd: 5,
    loadsTimedFrom: 3,
    ready: 200,
    readyCause: 'listen',
  };
  return {
    ...record(LOADS, STEPS),
    marks,
    timeOrigin: Date.UTC(2026, 10, 25, 8, 0, 0),
    nodeEnvironment: 1,
    nodeBootstrapEnd: 8,
    mainFile: '/app/main.js',
    ownRoot: '/diag/dist/',
    now: 500,
  };
}

describe('the boot profile built from the raw record', () => {
  const profile = buildBootProfile(input());
  const step = (name: string, extra: (s: (typeof profile.steps)[number]) => boolean = () => true) =>
    profile.steps.find((s) => s.name === name && extra(s))!;
  const parentOf = (s: (typeof profile.steps)[number]) =>
    s.parent !== undefined ? profile.steps[s.parent] : undefined;

  it('ends at ready and lists every step parents first, each under the innermost one that holds it', () => {
    expect(profile.ready).toBe(200);
    expect(profile.readyCause).toBe('listen');
    for (const s of profile.steps) if (s.parent !== undefined) expect(s.parent).toBeLessThan(s.id);
    expect(parentOf(step('diag.instrumentation.load'))?.name).toBe('node.preload');
    expect(step('node.preload')).toMatchObject({ start: 1, end: 10 });
    const b = step('package.load', (s) => s.package === 'b');
    expect(parentOf(b)).toMatchObject({ name: 'package.load', package: 'a' });
    expect(parentOf(step('package.load', (s) => s.package === 'a'))?.name).toBe('application.load');
  });

  it("folds a package's own files into its load and adds its loads up per package", () => {
    expect(step('package.load', (s) => s.package === 'a' && s.start === 20).files).toBe(2);
    const a = profile.packages.find((p) => p.name === 'a')!;
    expect(a).toMatchObject({ loads: 2, files: 3, topLevel: true, inclusive: 50 });
    expect(a.self).toBeCloseTo(35, 6);
    expect(profile.packages.find((p) => p.name === 'b')).toMatchObject({ inclusive: 15, self: 15, topLevel: false });
  });

  it("gives each instant to the newest open step: a hook's self is what ran while nothing newer did", () => {
    const warmer = step('onModuleInit', (s) => s.bean === 'Warmer');
    const compiler = step('onModuleInit', (s) => s.bean === 'Compiler');
    expect(warmer.wait).toBeCloseTo(58, 6);
    expect(warmer.self).toBeCloseTo(1.5 + 1 + 20, 6);
    expect(compiler.self).toBeCloseTo(27.5, 6);
    expect(compiler.wait).toBeUndefined();
    // The analysis ran while the warmer awaited: not the warmer's doing, its phase's child.
    expect(parentOf(step('diag.analysis'))?.name).toBe('nest.on_module_init');
  });

  it('marks the critical path: what each parent waited for last', () => {
    expect(step('onModuleInit', (s) => s.bean === 'Warmer').critical).toBe(true);
    expect(step('onModuleInit', (s) => s.bean === 'Compiler').critical).toBeUndefined();
    expect(step('nest.init').critical).toBe(true);
  });

  it('lists what no step covers, and the instrumentation’s own cost', () => {
    expect(profile.coverage.gaps).toEqual([{ start: 100, end: 110, after: 'application.load', before: 'nest.init' }]);
    expect(profile.coverage.attributed).toBeCloseTo(190, 6);
    expect(profile.coverage.share).toBeCloseTo(0.95, 6);
    expect(profile.diag).toMatchObject({ load: 2, enable: 0.5, analysis: 9 });
  });

  it("summarises it for diag-report.json's startup section", () => {
    const section = startupSection(profile);
    expect(section.processStart).toBe('2026-11-25T08:00:00.000Z');
    expect(section.hooks.map((h) => [h.bean, h.syncMs, h.waitMs, h.critical])).toEqual([
      ['Warmer', 1, 58, true],
      ['Compiler', 27.5, 0, undefined],
    ]);
    expect(section.unattributed).toEqual([
      { startMs: 100, endMs: 110, after: 'application.load', before: 'nest.init' },
    ]);
    expect(section.phases.map((p) => p.name)).toEqual(
      expect.arrayContaining(['node.bootstrap', 'node.preload', 'application.load', 'nest.init']),
    );
  });

  it("goes into Spring Boot's shape under an application.startup root, the container's steps beneath", () => {
    const t0 = profile.timeOrigin;
    const { timeline } = toSpringStartup({
      startTime: t0 + 110,
      endTime: t0 + 115,
      beans: [{ name: 'Warmer', module: 'AppModule', scope: 'singleton', startTime: t0 + 111, endTime: t0 + 112 }],
      boot: profile,
    });
    expect(timeline.startTime).toBe('2026-11-25T08:00:00.000Z');
    expect(timeline.events[0]!.startupStep).toMatchObject({ name: 'application.startup', id: 0 });
    const ids = new Set<number>();
    for (const e of timeline.events) {
      if (e.startupStep.parentId !== undefined) expect(ids.has(e.startupStep.parentId)).toBe(true);
      ids.add(e.startupStep.id);
    }
    const container = timeline.events.find((e) => e.startupStep.name === 'nest.container.startup')!;
    expect(container.startupStep.parentId).toBe(0);
    const hook = timeline.events.find(
      (e) => e.startupStep.name === 'onModuleInit' && e.startupStep.tags.some((t) => t.value === 'Warmer'),
    )!;
    expect(Object.fromEntries(hook.startupStep.tags.map((t) => [t.key, t.value]))).toMatchObject({
      phase: 'hook',
      waitMs: '58',
      critical: 'true',
      module: 'AppModule',
    });
  });
});

describe('an ES module application: what the loader did before its graph ran is the loader’s', () => {
  /**
   * No CommonJS main module; import-in-the-middle reports each module when it finished evaluating. The first
   * module after our construction comes after Node resolved, loaded and linked the whole graph (the 2026-11-25
   * trial on a Nest 12 ESM app: 420 ms put on a leaf of @opentelemetry/resources); the ones after it follow
   * each other, or a CommonJS load, and are estimated from the previous event.
   */
  function esmInput(): BootInput {
    const base = input();
    const steps: StepRow[] = [
      [STEP_KIND.esm, 'esm.evaluate', 300, 300, 300, '/app/node_modules/leaf/index.js', '/app/node_modules/leaf'],
      [STEP_KIND.esm, 'esm.evaluate', 330, 330, 330, '/app/node_modules/slow/a.js', '/app/node_modules/slow'],
      [STEP_KIND.esm, 'esm.evaluate', 335, 335, 335, '/app/node_modules/slow/b.js', '/app/node_modules/slow'],
      [
        STEP_KIND.esm,
        'esm.evaluate',
        350,
        350,
        350,
        '/app/node_modules/after-cjs/index.js',
        '/app/node_modules/after-cjs',
      ],
      [STEP_KIND.phase, 'nest.create', 360, 400, 400, '', ''],
    ];
    const loads: LoadRow[] = [['/app/node_modules/cjs/index.js', 336, 340, 0]];
    return {
      ...base,
      mainFile: undefined,
      ...record(loads, steps),
      marks: { ...base.marks, ready: 400 },
    };
  }
  const profile = buildBootProfile(esmInput());
  const pkg = (name: string) => profile.packages.find((p) => p.name === name);

  it('gives the wait before the first module to node.esm_loader, not to that module', () => {
    expect(pkg('leaf')).toMatchObject({ inclusive: 0 });
    // From the preload's end (Node's bootstrap complete) to the first module's evaluation.
    expect(profile.steps.find((s) => s.name === 'node.esm_loader' && s.end === 300)).toMatchObject({ start: 8 });
  });

  it('estimates the modules after it from the event before, or from a CommonJS load that ended', () => {
    expect(pkg('slow')).toMatchObject({ files: 2, inclusive: 35 });
    expect(pkg('after-cjs')).toMatchObject({ inclusive: 10 });
  });
});

describe('the critical path when the main module calls bootstrap() from its top level', () => {
  it('marks the main module and nest.create, which starts inside it and outlasts it', () => {
    const profile = buildBootProfile({
      ...input(),
      ...record(LOADS, [...STEPS, [STEP_KIND.phase, 'nest.create', 95, 200, 200, '', '']]),
    });
    const step = (name: string) => profile.steps.find((s) => s.name === name)!;
    expect(step('nest.create')).toMatchObject({ start: 95, critical: true });
    expect(step('application.load')).toMatchObject({ end: 100, critical: true });
  });
});

describe("Spring Boot's shape: every step under one it was emitted with, the container inside its phase", () => {
  it('puts a package an async factory loads under nest.instantiate, and the analysis after ready apart', () => {
    const base = input();
    const profile = buildBootProfile({
      ...base,
      // Two contexts: a short-lived one (migrations, say) at 50-60, then the application's at 100.5-109.
      ...record(
        [...LOADS, ['/app/node_modules/pg/index.js', 103, 104, 0]],
        [
          ...STEPS,
          [STEP_KIND.phase, 'nest.instantiate', 100.5, 109, 109, '', ''],
          [STEP_KIND.phase, 'nest.instantiate', 50, 60, 60, '', ''],
        ],
      ),
      beans: [{ name: 'DATABASE', module: 'AppModule', start: 101, end: 108, returned: 105 }],
      // TypeORM required pg from inside the factory: no load around it, but not the application's own.
      requirersOf: (file) => (file.includes('/pg/') ? ['/app/node_modules/typeorm/driver.js'] : []),
    });
    expect(profile.packages.find((p) => p.name === 'pg')).toMatchObject({ topLevel: false });
    expect(profile.steps.find((s) => s.package === 'pg')).toMatchObject({ requiredBy: 'typeorm' });
    const t0 = profile.timeOrigin;
    const { timeline } = toSpringStartup({
      startTime: t0 + 99,
      endTime: t0 + 111,
      beans: [{ name: 'DATABASE', module: 'AppModule', scope: 'singleton', startTime: t0 + 101, endTime: t0 + 108 }],
      analysis: { startTime: t0 + 300, endTime: t0 + 340 },
      boot: profile,
    });
    const named = (name: string, tag?: string) =>
      timeline.events.find(
        (e) => e.startupStep.name === name && (!tag || e.startupStep.tags.some((t) => t.value === tag)),
      )!;
    const instantiate = timeline.events.find(
      (e) => e.startupStep.name === 'nest.instantiate' && Date.parse(e.startTime) > t0 + 100,
    )!;
    expect(named('package.load', 'pg').startupStep.parentId).toBe(instantiate.startupStep.id);
    const container = named('nest.container.startup');
    expect(container.startupStep.parentId).toBe(instantiate.startupStep.id);
    expect(Date.parse(container.endTime)).toBeLessThanOrEqual(Date.parse(instantiate.endTime));
    expect(Date.parse(container.startTime)).toBeGreaterThanOrEqual(Date.parse(instantiate.startTime));
    expect(named('diag.ghost.analysis').startupStep.parentId).toBeUndefined();
  });
});

describe('a package required at run time, outside any load', () => {
  const base = input();
  const withPg = (requirers: string[]) =>
    buildBootProfile({
      ...base,
      ...record([...LOADS, ['/app/node_modules/pg/index.js', 150, 152, 0]], STEPS),
      requirersOf: (file) => (file.includes('/pg/') ? requirers : []),
    });

  it("is the application's when the application required it too, or when nobody is known to have", () => {
    for (const requirers of [['/app/db.js', '/app/node_modules/typeorm/driver.js'], []]) {
      expect(withPg(requirers).packages.find((p) => p.name === 'pg')).toMatchObject({ topLevel: true });
    }
  });

  it('is the library’s when only libraries required it', () => {
    expect(withPg(['/app/node_modules/typeorm/driver.js']).packages.find((p) => p.name === 'pg')).toMatchObject({
      topLevel: false,
    });
  });
});

describe('the close, when a process closes more than one application', () => {
  it('reports the last close only, once it has finished', () => {
    const base = input();
    const close = (at: number, bean: string): StepRow[] => [
      [STEP_KIND.phase, 'nest.on_module_destroy', at, at + 10, at + 10, '', ''],
      [STEP_KIND.hook, 'onModuleDestroy', at + 1, at + 9, at + 9, bean, 'AppModule'],
      [STEP_KIND.phase, 'nest.on_application_shutdown', at + 11, at + 12, at + 12, '', ''],
    ];
    const profile = buildBootProfile({
      ...base,
      ...record([], [...STEPS, ...close(300, 'FirstQueue'), ...close(400, 'SecondQueue')]),
    });
    expect(profile.shutdown).toMatchObject({ start: 400, end: 412 });
    expect(profile.shutdown!.steps.filter((s) => s.kind === 'hook').map((s) => s.bean)).toEqual(['SecondQueue']);
  });
});
