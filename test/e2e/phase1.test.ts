/**
 * Phase 1 on real NestJS applications started as real processes, in each loading case the package supports:
 * Nest 11 from CommonJS (require-in-the-middle), Nest 12 from ESM (import-in-the-middle through the
 * OpenTelemetry loader hook) and Nest 12 required from CommonJS (require of ESM).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  LOADING_CASES,
  getJson,
  publishedStartup,
  runToExit,
  startApp,
  tempDir,
  type RunningApp,
} from './support/app-process';

const EXPECTED_CANDIDATES = [
  'BillingModule/Helper',
  'FEATURE_FLAGS',
  'LegacyReportService',
  'LookupOnlyService',
  'UsersAlias',
  'UsersHelper',
  'UsersModule/Helper',
];

describe.each(LOADING_CASES)('Phase 1 on the shop app (%s)', (loading) => {
  let app: RunningApp;
  let report: any;
  let node: (name: string) => any;

  beforeAll(async () => {
    app = await startApp(loading);
    report = app.readReport();
    node = (name) => report.graph.nodes.find((n: any) => n.name === name);
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('lists exactly the deliberate ghosts as candidates', () => {
    expect(report.ghostCandidates.beans).toEqual(EXPECTED_CANDIDATES);
    expect(report.ghostCandidates.count).toBe(EXPECTED_CANDIDATES.length);
    expect(report.ghostCandidates.confidence).toBe('LOW');
    expect(report.ghostCandidates.disclaimer).toMatch(/not proof/);
  });

  it('accounts for every orphan: candidates plus the exclusion counts', () => {
    const g = report.ghostCandidates;
    expect(report.orphans.length).toBe(
      g.count + g.entryPointsExcluded + g.notInstantiatedExcluded + g.classificationFailedExcluded,
    );
    for (const name of g.beans) expect(report.orphans).toContain(name);
  });

  it('keeps a subclass of a library class (PassportStrategy) off the list', () => {
    expect(node('LocalStrategy').verdict).toBe('entry-point');
    expect(node('LocalStrategy').entryPoints.some((r: string) => r.startsWith('extends-library-class:'))).toBe(true);
  });

  it('counts a request-scoped bean nobody injects in notInstantiatedExcluded', () => {
    expect(node('RequestContext')).toMatchObject({ scope: 'request', eager: false, verdict: 'not-instantiated' });
    expect(report.ghostCandidates.notInstantiatedExcluded).toBe(1);
  });

  it('recognises an APP_GUARD, an inherited @Cron, @Interval, @OnEvent, lifecycle hooks, controllers and modules', () => {
    expect(node('APP_GUARD(AllowAllGuard)').entryPoints).toContain('global-enhancer:APP_GUARD');
    expect(node('NightlyJob').entryPoints).toContain('scheduled:cron');
    expect(node('HeartbeatJob').entryPoints).toContain('scheduled:interval');
    expect(node('AuditListener').entryPoints).toContain('event-listener');
    expect(node('CacheWarmer').entryPoints).toContain('lifecycle:onModuleInit');
    expect(node('UsersController').entryPoints).toContain('controller');
    expect(node('ShopModule').entryPoints).toContain('module');
  });

  it('names symbol and string tokens plainly and tells two classes of one name apart by module', () => {
    expect(node('FEATURE_FLAGS')).toMatchObject({ kind: 'value', module: 'ShopModule' });
    expect(node('CONFIG_OPTIONS')).toMatchObject({ kind: 'factory' });
    expect(node('UsersModule/Helper')).toMatchObject({ token: 'Helper', module: 'UsersModule' });
    expect(node('BillingModule/Helper')).toMatchObject({ token: 'Helper', module: 'BillingModule' });
  });

  it('records constructor, factory-inject and alias edges, and forwardRef cycles', () => {
    const edges = report.graph.edges;
    expect(edges).toContainEqual({ from: 'UsersService', to: 'CONFIG_OPTIONS', kind: 'constructor' });
    expect(edges).toContainEqual({ from: 'UsersService', to: 'PriceCalculator', kind: 'constructor' });
    expect(edges).toContainEqual({ from: 'UsersAlias', to: 'UsersService', kind: 'alias' });
    expect(report.cycles).toContainEqual(['InvoiceService', 'LedgerService']);
  });

  it('counts framework beans without listing them as application beans', () => {
    expect(report.summary.frameworkBeans).toBeGreaterThan(10);
    const framework = report.graph.nodes.filter((n: any) => n.framework);
    const frameworkNames = framework.map((n: any) => n.name);
    expect(framework.map((n: any) => n.token)).toEqual(expect.arrayContaining(['Reflector', 'SchedulerRegistry']));
    for (const name of frameworkNames) expect(report.orphans).not.toContain(name);
  });

  it('times bean creation and leaves the application answering as usual', async () => {
    expect(node('UsersService').instantiationMs).toBeGreaterThanOrEqual(0);
    // An async factory's creation lasts until Nest's await of it settles (25 ms of setTimeout), not just the call.
    expect(node('CONFIG_OPTIONS').instantiationMs).toBeGreaterThanOrEqual(20);
    const res = await getJson(app.port, '/users');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ id: 1, name: 'ada', greeting: 'hello', spent: 1450 }]);
  });

  // Here because every matrix cell runs this file: Nest 10, 11 and 12, CommonJS and ES modules, Node 20-24. The
  // start-up timeline's own suite (startup-timeline.test.ts) goes deeper on one of them.
  it("puts the start-up on one timeline, Nest's phases in order and the application's hook under its phase", async () => {
    const startup = await publishedStartup(app);
    expect(startup.readyCause).toBe('listen');
    expect(startup.coverage.share).toBeGreaterThanOrEqual(0.95);
    const order = startup.phases.map((p: any) => p.name);
    const expected = ['nest.create', 'nest.scan', 'nest.instantiate', 'nest.init', 'nest.on_module_init'];
    const positions = expected.map((name) => order.indexOf(name));
    expect(positions).not.toContain(-1);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const hook = startup.hooks.find((h: any) => h.bean === 'CacheWarmer' && h.hook === 'onModuleInit');
    expect(hook).toMatchObject({ module: 'ShopModule' });
    const phase = startup.phases.find((p: any) => p.name === 'nest.on_module_init');
    expect(hook.startMs).toBeGreaterThanOrEqual(phase.startMs);
    expect(hook.endMs).toBeLessThanOrEqual(phase.endMs);
  });
});

describe.each(LOADING_CASES)('disable() and enable() (%s)', (loading) => {
  it('removes every patch, writes nothing while disabled, and patches again on enable', async () => {
    const run = await runToExit(loading, { app: 'disable-app' });
    const line = run.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    expect(line).toBeDefined();
    expect(JSON.parse(line!.slice(7))).toEqual({
      before: { instantiateClass: true, createInstancesOfDependencies: true },
      disabled: { instantiateClass: false, createInstancesOfDependencies: false },
      reenabled: { instantiateClass: true, createInstancesOfDependencies: true },
      reportWhileDisabled: false,
      reportAfterEnable: true,
    });
  });
});

describe('bad input never changes what the host sees', () => {
  it.each(LOADING_CASES)('a container that fails to boot fails exactly as without us (%s)', async (loading) => {
    const bare = await runToExit(loading, { app: 'broken-app', bare: true });
    const instrumented = await runToExit(loading, { app: 'broken-app' });
    expect(bare.stdout).toMatch(/^BOOT FAILED UnknownDependenciesException/m);
    // the one line the instrumentation prints at start-up while the actuator is off is its own, not the host's
    expect(instrumented.stdout.replace(/^\[diag\] INFO actuator off: .*\n/m, '')).toBe(bare.stdout);
    expect(instrumented.code).toBe(3);
    expect(bare.code).toBe(3);
    expect(fs.existsSync(path.join(instrumented.reportDir, 'diag-report.json'))).toBe(false);
  });

  it('creates a report directory that does not exist yet', async () => {
    const dir = path.join(tempDir('nested'), 'a', 'b', 'c');
    const app = await startApp(LOADING_CASES[0], { reportDir: dir });
    try {
      expect(fs.existsSync(path.join(dir, 'diag-report.json'))).toBe(true);
    } finally {
      await app.stop();
    }
  });

  it('warns about a report directory it cannot create, and the app still serves', async () => {
    const file = path.join(tempDir('blocker'), 'not-a-dir');
    fs.writeFileSync(file, 'a file where a directory should be');
    const app = await startApp(LOADING_CASES[0], { reportDir: path.join(file, 'reports') });
    try {
      expect(app.stderr()).toMatch(/WARN could not write .*diag-report\.json/);
      expect((await getJson(app.port, '/users')).status).toBe(200);
      // The analysis still ran: the report is available in memory (the actuator serves it).
      expect(app.stdout()).not.toMatch(/report written/);
    } finally {
      await app.stop();
    }
  });

  it('reports malformed settings clearly and starts with the defaults', async () => {
    const app = await startApp(LOADING_CASES[0], {
      env: { DIAG_GHOST_TRACKING_ENABLED: 'maybe', MANAGEMENT_SERVER_PORT: 'abc' },
    });
    try {
      expect(app.stderr()).toMatch(/DIAG_GHOST_TRACKING_ENABLED.*"maybe" is not valid \(expected true or false\)/);
      expect(app.stderr()).toMatch(/MANAGEMENT_SERVER_PORT.*"abc" is not valid/);
      expect((await getJson(app.port, '/users')).status).toBe(200);
      expect(fs.existsSync(path.join(app.reportDir, 'diag-ghost-report.json'))).toBe(false);
    } finally {
      await app.stop();
    }
  });
});
