/**
 * The ghost detector on an InversifyJS application (examples/inversify: Express routes resolving their
 * controller per request), started as a process under the same preload as the Nest apps, on InversifyJS 7 (the
 * root's 7.11, test/fixtures/inversify7-0's 7.0.0 and inversify7-8's 7.8.1) and 6 (test/fixtures/inversify6's),
 * CommonJS and ESM, and 8 (test/fixtures/inversify8's, ESM-only): "ready" is the HTTP server listening, the
 * bindings never resolved by then are the Phase 1 candidates, and with Phase 2 on `neverResolved` shrinks as
 * requests resolve them.
 */
import { actuatorPort, getJson, waitFor, type LoadingCase, type RunningApp } from '../support/app-process';
import { expectIdentityPreserved, expectMethodVerdicts, ghostReportAtExit, startExample } from './example-app';

/** Each case's InversifyJS: the release the report must name (a prefix of its version) and its major. */
const CASES: Array<[label: string, loading: LoadingCase, root: string | undefined, version: string]> = [
  ['InversifyJS 7.11, CommonJS', 'nest11-cjs', undefined, '7.11.'],
  ['InversifyJS 7.11, ESM', 'nest12-esm', undefined, '7.11.'],
  // the oldest 7 (test/fixtures/inversify7-0): @inversifyjs/core 4, where 7.11 has 9
  ['InversifyJS 7.0, CommonJS', 'nest11-cjs', 'inversify7-0', '7.0.0'],
  ['InversifyJS 7.0, ESM', 'nest12-esm', 'inversify7-0', '7.0.0'],
  // the release issue #34 found silent: core 7, outside the range the adapter had
  ['InversifyJS 7.8, CommonJS', 'nest11-cjs', 'inversify7-8', '7.8.1'],
  ['InversifyJS 6, CommonJS', 'nest11-cjs', 'inversify6', '6.'],
  ['InversifyJS 6, ESM', 'nest12-esm', 'inversify6', '6.'],
  // ESM-only: an ESM application (or require(esm), Node ≥ 22.12) loads it
  ['InversifyJS 8, ESM', 'nest12-esm', 'inversify8', '8.'],
];

/**
 * `toService(Clock)` is a factory of its own on InversifyJS 6, resolved only through itself, so never here; on 7
 * and 8 a redirection InversifyJS never activates, counted resolved once Clock is (at start-up).
 */
const TIME_SOURCE: Record<string, string[]> = { '6': ['TimeSource'], '7': [], '8': [] };
const neverAtReady = (major: string): string[] => [
  'LegacyExporter',
  'Mailer',
  'OrdersController',
  'OrdersRepository',
  'OrdersService',
  'ReportBuilder',
  'ReportsController',
  ...TIME_SOURCE[major]!,
];

describe.each(CASES)('InversifyJS app (%s)', (_label, loading, root, version) => {
  const major = version.split('.')[0]!;
  let app: RunningApp;
  let report: any;

  beforeAll(async () => {
    app = await startExample(loading, 'inversify-app', root);
    report = app.readReport();
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('writes diag-report.json at ready with framework inversify, its version, every binding and the @inject() edges', () => {
    // every package InversifyJS loads is in a supported range, @inversifyjs/core 1 under InversifyJS 6 included
    expect(app.stderr()).not.toMatch(/outside the versions/);
    expect(report.framework).toBe('inversify');
    expect(report.container).toEqual({
      name: 'inversify',
      version: expect.stringMatching(new RegExp(`^${version.replaceAll('.', '\\.')}`)),
    });
    const nodes = Object.fromEntries(report.graph.nodes.map((n: any) => [n.name, n]));
    expect(Object.keys(nodes).sort()).toEqual(
      ['Clock', 'Config', ...neverAtReady('6'), 'OrderEvents', 'StartupCheck'].sort(),
    );
    expect(nodes.Clock).toMatchObject({ kind: 'class', scope: 'singleton', resolved: true });
    // an application class's origin and file, looked up at ready (not inside the app's resolve calls)
    expect(nodes.Clock).toMatchObject({ framework: false, source: expect.stringMatching(/^services\.m?js$/) });
    expect(nodes.StartupCheck).toMatchObject({ kind: 'class', scope: 'transient', resolved: true });
    // a library's class (rxjs's Subject, CommonJS or ESM as the app loads it) bound under the app's own token
    expect(nodes.OrderEvents).toMatchObject({ kind: 'class', className: 'Subject', resolved: false, framework: true });
    expect(nodes.Config).toMatchObject({ kind: 'value', resolved: true });
    expect(nodes.Mailer).toMatchObject({ kind: 'factory', resolved: false });
    expect(nodes.LegacyExporter).toMatchObject({ scope: 'singleton', resolved: false });
    expect(report.graph.edges).toEqual(
      expect.arrayContaining([
        { from: 'StartupCheck', to: 'Clock', kind: 'constructor' },
        { from: 'OrdersService', to: 'OrdersRepository', kind: 'constructor' },
        { from: 'OrdersService', to: 'Clock', kind: 'constructor' },
        { from: 'ReportBuilder', to: 'Mailer', kind: 'constructor' },
      ]),
    );
  });

  it('lists the bindings never resolved by ready as candidates (the routes resolve their controllers later)', () => {
    expect(report.ghostCandidates.beans).toEqual(neverAtReady(major));
    if (major !== '6') expect(report.graph.edges).toContainEqual({ from: 'TimeSource', to: 'Clock', kind: 'alias' });
  });

  it('keeps neverResolved current as requests resolve bindings; the dead ones stay', async () => {
    const port = actuatorPort(app);
    const ghosts = async () => (await getJson(port, '/actuator/diag/ghosts')).body;
    expect((await ghosts()).neverResolved).toEqual(neverAtReady(major));
    // Clock, a singleton, is called before ready (StartupCheck.run() while the app starts): tracked from its
    // resolution, it is touched with no request yet, where tracking it from ready reported it never called
    expect((await ghosts()).touched).toContain('Clock');
    expect((await getJson(app.port, '/orders')).body.orders).toEqual([{ id: 1 }, { id: 2 }]);
    await waitFor(async () => !(await ghosts()).neverResolved.includes('OrdersService'));
    const after = await ghosts();
    expect(after.framework).toBe('inversify');
    expect(after.neverResolved).toEqual([
      'LegacyExporter',
      'Mailer',
      'ReportBuilder',
      'ReportsController',
      ...TIME_SOURCE[major]!,
    ]);
    expect(after.touched).toEqual(expect.arrayContaining(['Clock', 'OrdersRepository']));

    // Mailer has the application's own onActivation, set after the binding was added: it ran, and the first
    // resolution was seen all the same
    expect((await getJson(app.port, '/reports')).body).toEqual({ report: 'mailed ops@example.com, signed' });
    await waitFor(async () => !(await ghosts()).neverResolved.includes('Mailer'));
    expect((await ghosts()).neverResolved).toEqual(['LegacyExporter', ...TIME_SOURCE[major]!]);
  });

  it('preserves identity: the same singleton, its class, its prototype', async () => {
    await expectIdentityPreserved(app);
  });

  it('writes diag-ghost-report.json with neverResolved and the framework at exit', async () => {
    const ghosts = await ghostReportAtExit(app);
    expect(ghosts).toMatchObject({
      framework: 'inversify',
      neverResolved: ['LegacyExporter', ...TIME_SOURCE[major]!],
    });
    // and each method of a called singleton with its own verdict (method depth)
    expectMethodVerdicts(app, ghosts);
  });
});

describe('InversifyJS 6 with inversify-express-utils (CommonJS)', () => {
  let app: RunningApp;

  beforeAll(async () => {
    app = await startExample('nest11-cjs', 'express-utils-app', 'inversify6');
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('sees the controllers the server binds and resolves while it builds (with what they need); what nothing resolves stays', async () => {
    const report = app.readReport();
    const controllerNode = report.graph.nodes.find((n: any) => n.className === 'OrdersController');
    // InversifyExpressServer#build resolves every controller to register its routes: in use before ready
    expect(controllerNode).toMatchObject({ token: 'Controller', kind: 'class', resolved: true });
    expect(report.graph.edges).toEqual(
      expect.arrayContaining([{ from: controllerNode.name, to: 'OrdersService', kind: 'constructor' }]),
    );
    expect(report.ghostCandidates.beans).toEqual(['Unused']);
    // a value inversify-express-utils binds itself is the library's: told by who called bind()
    expect(report.graph.nodes.find((n: any) => n.token === 'HttpContext')).toMatchObject({
      kind: 'value',
      framework: true,
    });

    expect((await getJson(app.port, '/orders')).body).toEqual([{ id: 1 }, { id: 2 }]);
    const ghosts = async () => (await getJson(actuatorPort(app), '/actuator/diag/ghosts')).body;
    expect((await ghosts()).neverResolved).toEqual(['Unused']);
  });
});
