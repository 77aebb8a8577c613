/**
 * The ghost detector on an awilix application (examples/awilix: awilix-express on Express), started as a
 * process under the same preload as the Nest apps: "ready" is its HTTP server listening, the registrations
 * never resolved by then are the Phase 1 candidates, and with Phase 2 on the live snapshot keeps
 * `neverResolved` current as requests resolve them. CommonJS and ESM builds of the same app (the ESM one
 * loads awilix's ESM bundle, hooked through import-in-the-middle), on awilix 13 (the root's) and 10, 11 and 12
 * (test/fixtures/awilix1x's): every major the adapter declares.
 */
import { actuatorPort, getJson, waitFor, type LoadingCase, type RunningApp } from '../support/app-process';
import { expectIdentityPreserved, expectMethodVerdicts, ghostReportAtExit, startExample } from './example-app';

const CASES: Array<[label: string, loading: LoadingCase, root: string | undefined, major: string]> = [
  ['awilix 13, CommonJS', 'nest11-cjs', undefined, '13'],
  ['awilix 13, ESM', 'nest12-esm', undefined, '13'],
  // CommonJS only: awilix-express's ESM build imports `awilix/lib/utils`, which the exports maps of awilix 10
  // and 11 lack (the app fails the same way without this package)
  ['awilix 10, CommonJS', 'nest11-cjs', 'awilix10', '10'],
  ['awilix 11, CommonJS', 'nest11-cjs', 'awilix11', '11'],
  ['awilix 12, CommonJS', 'nest11-cjs', 'awilix12', '12'],
  ['awilix 12, ESM', 'nest12-esm', 'awilix12', '12'],
];

describe.each(CASES)('awilix app (%s)', (_label, loading, root, major) => {
  let app: RunningApp;
  let report: any;

  beforeAll(async () => {
    app = await startExample(loading, 'awilix-app', root);
    report = app.readReport();
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('writes diag-report.json at ready with framework awilix and every registration as the user named it', () => {
    expect(report.framework).toBe('awilix');
    expect(report.container).toEqual({ name: 'awilix', version: expect.stringMatching(new RegExp(`^${major}\\.`)) });
    const nodes = Object.fromEntries(report.graph.nodes.map((n: any) => [n.name, n]));
    expect(Object.keys(nodes).sort()).toEqual([
      'clock',
      'config',
      'legacyExporter',
      'mailer',
      'orderEvents',
      'ordersRepository',
      'ordersService',
      'startupCheck',
      'timeSource',
    ]);
    expect(nodes.clock).toMatchObject({ kind: 'class', className: 'Clock', scope: 'singleton', resolved: true });
    // an application class's origin and file, looked up at ready (not inside the app's register calls)
    expect(nodes.clock).toMatchObject({ framework: false, source: expect.stringMatching(/^services\.m?js$/) });
    expect(nodes.startupCheck).toMatchObject({ kind: 'class', scope: 'transient', resolved: true });
    // a library's class (rxjs's Subject, CommonJS or ESM as the app loads it) bound under the app's own name
    expect(nodes.orderEvents).toMatchObject({ kind: 'class', className: 'Subject', resolved: false, framework: true });
    expect(nodes.legacyExporter).toMatchObject({ scope: 'singleton', resolved: false });
    expect(nodes.ordersService).toMatchObject({ scope: 'request', resolved: false });
    expect(nodes.mailer).toMatchObject({ kind: 'factory', resolved: false });
    expect(nodes.config).toMatchObject({ kind: 'value', scope: 'singleton', resolved: true });
    expect(nodes.timeSource).toMatchObject({ kind: 'alias', resolved: false });
    // observed while startupCheck was first built (PROXY injection reads the cradle in the constructor)
    expect(report.graph.edges).toEqual(
      expect.arrayContaining([
        { from: 'startupCheck', to: 'clock', kind: 'constructor' },
        { from: 'timeSource', to: 'clock', kind: 'alias' },
      ]),
    );
  });

  it('lists the registrations never resolved by ready as candidates', () => {
    expect(report.ghostCandidates.beans).toEqual([
      'legacyExporter',
      'mailer',
      'ordersRepository',
      'ordersService',
      'timeSource',
    ]);
    expect(report.summary.applicationBeans).toBe(8);
  });

  it('keeps neverResolved current as requests resolve registrations; the dead ones stay', async () => {
    const port = actuatorPort(app);
    const ghosts = async () => (await getJson(port, '/actuator/diag/ghosts')).body;
    expect((await ghosts()).framework).toBe('awilix');
    // clock, a singleton, is called before ready (startupCheck.run() while the app starts): tracked from its
    // resolution, it is touched with no request yet, where tracking it from ready reported it never called
    expect((await ghosts()).touched).toContain('clock');
    expect((await ghosts()).neverResolved).toEqual([
      'legacyExporter',
      'mailer',
      'ordersRepository',
      'ordersService',
      'timeSource',
    ]);

    expect((await getJson(app.port, '/orders')).body.orders).toEqual([{ id: 1 }, { id: 2 }]);
    await waitFor(async () => !(await ghosts()).neverResolved.includes('ordersService'));
    const after = await ghosts();
    expect(after.neverResolved).toEqual(['legacyExporter', 'mailer', 'timeSource']);
    // resolved before ready and tracked then, or resolved after and tracked at once: both touched by the request
    expect(after.touched).toEqual(expect.arrayContaining(['clock', 'ordersRepository']));
    expect(after.untrackable.ordersService).toBe('non-singleton');

    expect((await getJson(app.port, '/reports')).body).toEqual({ report: 'mailed ops@example.com' });
    await waitFor(async () => (await ghosts()).neverResolved.length === 2);
    expect((await ghosts()).neverResolved).toEqual(['legacyExporter', 'timeSource']);
  });

  it('preserves identity: the same singleton, its class, its prototype', async () => {
    await expectIdentityPreserved(app);
  });

  it('writes diag-ghost-report.json with neverResolved and the framework at exit', async () => {
    const ghosts = await ghostReportAtExit(app);
    expect(ghosts).toMatchObject({
      framework: 'awilix',
      neverResolved: ['legacyExporter', 'timeSource'],
      neverResolvedCount: 2,
    });
    // and each method of a called singleton with its own verdict (method depth)
    expectMethodVerdicts(app, ghosts, 'ordersRepository');
  });
});
