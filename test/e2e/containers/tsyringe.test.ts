/**
 * The ghost detector on a tsyringe application (test/fixtures/apps/tsyringe-app: routing-controllers on
 * Express), started as a process under the same preload as the Nest apps: "ready" is its HTTP server listening,
 * the bindings never resolved by then are the Phase 1 candidates, and with Phase 2 on the live snapshot keeps
 * `neverResolved` current as traffic resolves them. CommonJS and ESM builds of the same app.
 */
import { actuatorPort, getJson, waitFor, type LoadingCase, type RunningApp } from '../support/app-process';
import { expectIdentityPreserved, expectMethodVerdicts, ghostReportAtExit, startExample } from './example-app';

const CASES: LoadingCase[] = ['nest11-cjs', 'nest12-esm'];

describe.each(CASES)('tsyringe app (%s)', (loading) => {
  let app: RunningApp;
  let report: any;

  beforeAll(async () => {
    app = await startExample(loading, 'tsyringe-app');
    report = app.readReport();
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('writes diag-report.json at ready with framework tsyringe and every binding, registered or only @injectable()', () => {
    expect(report.framework).toBe('tsyringe');
    expect(report.container.name).toBe('tsyringe');
    expect(report.container.version).toMatch(/^4\./);
    const nodes = Object.fromEntries(report.graph.nodes.map((n: any) => [n.name, n]));
    expect(Object.keys(nodes).sort()).toEqual(
      expect.arrayContaining([
        'Clock',
        'Config',
        'Exporter',
        'IdentityController',
        'LegacyExporter',
        'Mailer',
        'OrdersController',
        'OrderEvents',
        'OrdersRepository',
        'OrdersService',
        'ReportBuilder',
        'ReportsController',
        'StartupCheck',
      ]),
    );
    expect(nodes.Mailer).toMatchObject({ kind: 'factory', scope: 'transient', resolved: false });
    expect(nodes.Config).toMatchObject({ kind: 'value', scope: 'singleton', resolved: true });
    expect(nodes.Exporter).toMatchObject({
      kind: 'class',
      className: 'LegacyExporter',
      scope: 'singleton',
      resolved: false,
    });
    expect(nodes.StartupCheck).toMatchObject({ resolved: true, scope: 'transient' });
    // a library's class (rxjs's Subject, CommonJS or ESM as the app loads it) bound under the app's own token
    expect(nodes.OrderEvents).toMatchObject({ kind: 'class', className: 'Subject', resolved: false, framework: true });
    expect(nodes.Clock).toMatchObject({ resolved: true, scope: 'singleton' });
    // an application class's origin and file, looked up at ready (not inside the app's register calls)
    expect(nodes.Clock).toMatchObject({ framework: false, source: expect.stringMatching(/^services\.m?js$/) });
    // constructor edges, @inject('Mailer') included
    expect(report.graph.edges).toEqual(
      expect.arrayContaining([
        { from: 'OrdersService', to: 'OrdersRepository', kind: 'constructor' },
        { from: 'OrdersService', to: 'Clock', kind: 'constructor' },
        { from: 'ReportBuilder', to: 'Mailer', kind: 'constructor' },
        { from: 'OrdersController', to: 'OrdersService', kind: 'constructor' },
      ]),
    );
  });

  it('lists the application bindings never resolved by ready that nothing live needs; controllers never, nor what they need', () => {
    expect(report.ghostCandidates.confidence).toBe('LOW');
    expect(report.ghostCandidates.disclaimer).toMatch(/never resolved|nothing had resolved/);
    // OrdersService, OrdersRepository, ReportBuilder and Mailer are never resolved by ready either, but the
    // controllers' requests build them: never candidates
    expect(report.ghostCandidates.beans).toEqual(['Exporter', 'LegacyExporter']);
    const verdicts = Object.fromEntries(
      report.graph.nodes.filter((n: any) => n.verdict).map((n: any) => [n.name, n.verdict]),
    );
    expect(verdicts.OrdersController).toBe('entry-point');
    expect(verdicts.ReportsController).toBe('entry-point');
    expect(report.graph.nodes.find((n: any) => n.name === 'OrdersController').entryPoints).toEqual([
      'routing-controllers @JsonController',
    ]);
  });

  it('keeps neverResolved current as traffic resolves bindings; the dead one stays', async () => {
    const port = actuatorPort(app);
    const before = (await getJson(port, '/actuator/diag/ghosts')).body;
    expect(before.framework).toBe('tsyringe');
    // Clock, a @singleton(), is called before ready (StartupCheck.run() while the app starts): tracked from its
    // resolution, it is touched with no request yet, where tracking it from ready reported it never called
    expect(before.touched).toContain('Clock');
    expect(before.neverResolved).toEqual([
      'Exporter',
      'LegacyExporter',
      'Mailer',
      'OrdersRepository',
      'OrdersService',
      'ReportBuilder',
    ]);

    expect((await getJson(app.port, '/orders')).body.orders).toEqual([{ id: 1 }, { id: 2 }]);
    await waitFor(
      async () => !(await getJson(port, '/actuator/diag/ghosts')).body.neverResolved.includes('OrdersService'),
    );
    const after = (await getJson(port, '/actuator/diag/ghosts')).body;
    expect(after.neverResolved).toEqual(['Exporter', 'LegacyExporter', 'Mailer', 'ReportBuilder']);
    // a singleton resolved before ready was tracked at ready and touched by the request
    expect(after.touched).toContain('Clock');
    expect(after.touched).toContain('OrdersRepository');

    expect((await getJson(app.port, '/reports')).body).toEqual({ report: 'mailed ops@example.com' });
    await waitFor(async () => (await getJson(port, '/actuator/diag/ghosts')).body.neverResolved.length === 2);
    expect((await getJson(port, '/actuator/diag/ghosts')).body.neverResolved).toEqual(['Exporter', 'LegacyExporter']);
  });

  it('preserves identity: the same singleton, its class, its prototype', async () => {
    await expectIdentityPreserved(app);
  });

  it('writes diag-ghost-report.json with neverResolved and the framework at exit', async () => {
    const ghosts = await ghostReportAtExit(app);
    // each method of a called singleton with its own verdict (method depth)
    expectMethodVerdicts(app, ghosts);
    expect(ghosts.framework).toBe('tsyringe');
    expect(ghosts.neverResolved).toEqual(['Exporter', 'LegacyExporter']);
    expect(ghosts.neverResolvedCount).toBe(2);
  });
});
