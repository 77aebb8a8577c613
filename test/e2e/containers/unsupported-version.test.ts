/**
 * A container in a version none of its hooks supports (InversifyJS 5, test/fixtures/inversify5) is left
 * unpatched, and the instrumentation says so instead of staying silent: one WARN naming the package, its version
 * and the supported ranges, however many times the package passes the hooks (an ESM import of a CommonJS
 * package passes both import-in-the-middle and the CommonJS hook). The application runs as it would without us.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { getJson, startApp, type LoadingCase, type RunningApp } from '../support/app-process';
import { expectIdentityPreserved } from './example-app';

const WARNING =
  '[diag] WARN inversify 5.1.1 is outside the versions diag-instrumentation supports (>=6.0.0 <7, >=7.0.0 <9): ' +
  'it is left unpatched and the detector sees nothing of it';

describe.each<[string, LoadingCase]>([
  ['CommonJS', 'nest11-cjs'],
  ['ESM', 'nest12-esm'],
])('InversifyJS 5, outside the supported versions (%s)', (_label, loading) => {
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp(loading, {
      app: 'inversify-app',
      root: 'inversify5',
      env: { DIAG_GHOST_TRACKING_ENABLED: 'true' },
    });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('warns exactly once, naming the package, its version and the supported ranges', () => {
    expect(
      app
        .stderr()
        .split('\n')
        .filter((line) => line.includes('[diag] WARN')),
    ).toEqual([WARNING]);
  });

  it('leaves the application working', async () => {
    expect((await getJson(app.port, '/orders')).body.orders).toEqual([{ id: 1 }, { id: 2 }]);
    await expectIdentityPreserved(app);
  });

  it('says in the ghost report, and the gate on it, why nothing of the container is there', async () => {
    await app.stop();
    const file = path.join(app.reportDir, 'diag-ghost-report.json');
    const ghosts = app.readReport('diag-ghost-report.json');
    expect(ghosts.trackedCount).toBe(0);
    expect(ghosts.unsupported).toEqual([
      { package: 'inversify', version: '5.1.1', supported: ['>=6.0.0 <7', '>=7.0.0 <9'] },
    ]);
    const cli = path.resolve(__dirname, '..', '..', '..', 'dist', 'ghost', 'cli', 'index.js');
    const check = spawnSync(process.execPath, [cli, 'check', file], { encoding: 'utf8' });
    // nothing tracked because of it: exit 2, never a green gate
    expect(check.status).toBe(2);
    expect(check.stderr).toContain(
      'diag-instrumentation check: note: inversify 5.1.1 is outside the versions diag-instrumentation supports ' +
        '(>=6.0.0 <7, >=7.0.0 <9): the run left it unpatched, so this report shows none of its beans',
    );
  });
});
