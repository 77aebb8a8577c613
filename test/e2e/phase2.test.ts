/**
 * Phase 2 (first-touch tracking) on real NestJS applications started as processes: the app must behave
 * exactly as without tracking, and the ghost report must say which beans were used.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LOADING_CASES, getJson, startApp, tempDir, waitFor, type RunningApp } from './support/app-process';

const TRACKING_ENV = {
  DIAG_GHOST_TRACKING_ENABLED: 'true',
  // One run is enough evidence here, so that a never-called method reads never-touched.
  DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS: '0',
  DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS: '0',
  DIAG_GHOST_TRACKING_KEPT: 'TrackingController#quarterly=partner quarterly sync',
};

/**
 * An exclude list is matched before anything is wrapped, so beans are then named before the first instance exists;
 * otherwise they are tracked unnamed and named after ready (issue #46). Every case but the first runs without one,
 * so that the calls made while the container creates instances are seen both ways.
 */
const excludes = (loading: string): boolean => loading === LOADING_CASES[0];

describe.each(LOADING_CASES)('first-touch tracking on the tracking app (%s)', (loading) => {
  const env = excludes(loading) ? { ...TRACKING_ENV, DIAG_GHOST_TRACKING_EXCLUDE: 'ExcludedService' } : TRACKING_ENV;
  let app: RunningApp;
  let exercised: { status: number; text: string; body: any };
  let identity: any;
  let report: any;
  let exitCode: number | null;

  beforeAll(async () => {
    app = await startApp(loading, { app: 'tracking-app', env });
    identity = (await getJson(app.port, '/identity')).body;
    exercised = await getJson(app.port, '/exercise');
    // @Interval callbacks are captured by the scheduler at bootstrap: they must still fire through the wrapper.
    await waitFor(async () => (await getJson(app.port, '/heartbeat')).body.beats >= 3);
    exitCode = await app.stop('SIGTERM');
    report = app.readReport('diag-ghost-report.json');
  });

  it('keeps every bean working: #private, Map/Set/EventEmitter subclasses, async and generators, inheritance, arrows', () => {
    expect(exercised.status).toBe(200);
    expect(exercised.body).toEqual({
      privateField: 42,
      map: [1, 2, 1, true],
      set: [1, true],
      bus: ['hi', true],
      asyncLoad: { id: 5 },
      generator: [0, 1, 2, 3],
      streamed: [0, 10, 20],
      inherited: 'hello ada',
      wave: 'o/',
      arrow: 15,
      getter: 7,
      lifecycleRan: true,
      frozen: 'frozen pong',
      proxied: 'proxied pong',
      audit: [9],
      lookup: 42,
      excluded: 'excluded',
    });
  });

  it('preserves identity, instanceof and constructor of a tracked bean', () => {
    expect(identity).toEqual({
      legacyProtoIsClassProto: true,
      legacyRenderWrapped: true,
      legacyOwnKeys: [],
      legacyInstanceof: true,
      legacyConstructor: true,
    });
  });

  it('writes the ghost report at SIGTERM with shutdown hooks', () => {
    expect(exitCode === 0 || app.proc.signalCode === 'SIGTERM').toBe(true);
    expect(report.disclaimer).toMatch(/not that the bean is unused/);
    expect(report.trackedCount).toBe(report.touchedCount + report.untouchedCount);
    expect(report.untrackableCount).toBe(Object.keys(report.untrackable).length);
  });

  it('marks used beans touched: direct calls, captured @Interval and @OnEvent callbacks, moduleRef.get()', () => {
    for (const name of [
      'PrivateFieldService',
      'RegistryMap',
      'TaskSet',
      'Bus',
      'AsyncService',
      'InheritedGreeter',
      'ArrowService',
      'HeartbeatJob',
      'AuditListener',
      'LookupOnlyService',
      'TrackingController',
    ]) {
      expect(report.touched).toContain(name);
    }
  });

  it("sees calls made while the container creates instances: a dependent's constructor, a factory", () => {
    // tracked as each is created, before any dependent or factory receives it
    expect(report.touched).toEqual(expect.arrayContaining(['ConfigAtBoot', 'FactoryInput']));
  });

  it('sees a call from a microtask the constructor queued: a class is tracked as soon as it exists', () => {
    // tracked when instantiateClass returns, not in a reaction to Nest's promise, which runs after that microtask
    expect(report.touched).toContain('WarmsAfterConstruction');
  });

  it("sees a call from another bean's onModuleInit: tracking is in place before the lifecycle hooks run", () => {
    expect(report.touched).toContain('PrimedAtInit');
    expect(report.methods.PrimedAtInit).toEqual({ prime: expect.any(String) });
  });

  it('leaves beans untouched when only a getter or a lifecycle hook ran, or nothing at all', () => {
    expect(report.untouched).toEqual(expect.arrayContaining(['GetterOnlyService', 'LifecycleOnly', 'LegacyService']));
  });

  it('gives each method of a tracked bean its own verdict: dead methods of live beans, never-called routes, kept ones', () => {
    const bean = (name: string) => report.verdicts.find((v: { name: string }) => v.name === name);
    const methods = (name: string) =>
      Object.fromEntries(bean(name).methods.map((m: { name: string; verdict: string }) => [m.name, m.verdict]));
    expect(bean('AsyncService').verdict).toBe('in-use');
    expect(methods('AsyncService')).toEqual({
      load: 'in-use',
      range: 'in-use',
      stream: 'in-use',
      archive: 'never-touched',
    });
    const archive = bean('AsyncService').methods.find((m: { name: string }) => m.name === 'archive');
    expect(archive.source).toEqual({
      file: expect.stringMatching(/tracking\.module\.(js|ts)$/),
      line: expect.any(Number),
    });
    // Routes the router captured at bootstrap: called ones are in use, the one nobody calls is not.
    expect(methods('TrackingController')).toEqual({
      exercise: 'in-use',
      beats: 'in-use',
      identity: 'in-use',
      neverCalled: 'never-touched',
      quarterly: 'never-touched',
    });
    const quarterly = bean('TrackingController').methods.find((m: { name: string }) => m.name === 'quarterly');
    expect(quarterly.kept).toBe('partner quarterly sync');
    // Inherited methods are the bean's; lifecycle hooks are not methods.
    expect(methods('InheritedGreeter')).toEqual({ greet: 'in-use' });
    // The same inherited code never called on another bean: its verdict there, no finding (InheritedGreeter runs it).
    expect(bean('WavingGreeter').methods).toEqual([
      expect.objectContaining({ name: 'greet', verdict: 'never-touched', calledThrough: ['InheritedGreeter'] }),
      expect.objectContaining({ name: 'wave', verdict: 'in-use' }),
    ]);
    expect(methods('LifecycleOnly')).toEqual({ status: 'never-touched' });
    // @Interval and @OnEvent callbacks, captured at bootstrap, reach their methods.
    expect(methods('HeartbeatJob')).toMatchObject({ beat: 'in-use' });
    expect(methods('AuditListener')).toMatchObject({ onOrder: 'in-use' });
    expect(report.methods.AsyncService.archive).toBeNull();
  });

  it('reports every skip reason instead of hiding the bean', () => {
    expect(report.untrackable).toMatchObject({
      FROZEN: 'final-class',
      PROXIED: 'already-proxied',
      RequestScoped: 'non-singleton',
    });
    if (excludes(loading)) expect(report.untrackable.ExcludedService).toBe('excluded');
    else expect(report.touched).toContain('ExcludedService');
    expect(report.frameworkSkipped).toBeGreaterThan(10);
    for (const name of Object.keys(report.untrackable)) {
      expect(report.touched).not.toContain(name);
      expect(report.untouched).not.toContain(name);
    }
  });
});

describe('tracking on or off, the application answers the same bytes', () => {
  it.each(LOADING_CASES)('%s', async (loading) => {
    const bodies: string[] = [];
    for (const env of [{ DIAG_GHOST_TRACKING_ENABLED: 'false' }, TRACKING_ENV]) {
      const app = await startApp(loading, { app: 'tracking-app', env });
      try {
        const res = await getJson(app.port, '/exercise');
        expect(res.status).toBe(200);
        bodies.push(res.text);
        if (env.DIAG_GHOST_TRACKING_ENABLED === 'false') {
          // With tracking off, not a single bean is touched by our code: the prototype is the class's own.
          expect((await getJson(app.port, '/identity')).body.legacyProtoIsClassProto).toBe(true);
        }
      } finally {
        await app.stop();
      }
      if (env.DIAG_GHOST_TRACKING_ENABLED === 'false') {
        expect(fs.existsSync(path.join(app.reportDir, 'diag-ghost-report.json'))).toBe(false);
      }
    }
    expect(bodies[1]).toBe(bodies[0]);
  });
});

describe('an unwritable report directory', () => {
  it('gives a warning and a clean shutdown', async () => {
    const blocker = path.join(tempDir('blocker'), 'file');
    fs.writeFileSync(blocker, '');
    const app = await startApp(LOADING_CASES[0], {
      app: 'tracking-app',
      env: TRACKING_ENV,
      reportDir: path.join(blocker, 'reports'),
    });
    await getJson(app.port, '/exercise');
    const code = await app.stop('SIGTERM');
    expect(code === 0 || app.proc.signalCode === 'SIGTERM').toBe(true);
    expect(app.stderr()).toMatch(/WARN could not write .*diag-ghost-report\.json \(close\)/);
    expect(app.stderr()).not.toMatch(/Unhandled|TypeError|at .*\(/);
  });
});
