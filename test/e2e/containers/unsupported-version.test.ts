/**
 * A container in a version none of its hooks supports (InversifyJS 5, test/fixtures/inversify5) is left
 * unpatched, and the instrumentation says so instead of staying silent: one WARN naming the package, its version
 * and the supported ranges, however many times the package passes the hooks (an ESM import of a CommonJS
 * package passes both import-in-the-middle and the CommonJS hook). The application runs as it would without us.
 */
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
    app = await startApp(loading, { app: 'inversify-app', root: 'inversify5' });
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
});
