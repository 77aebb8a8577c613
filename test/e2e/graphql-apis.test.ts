/**
 * A GraphQL field says which API serves it (issue #43): an application with two GraphQL APIs (Apollo, each
 * `GraphQLModule` with `include` of its own module, as Vendure serves its shop and admin APIs) started as a process,
 * queried over HTTP on one of them. `Query.product` of the shop and of the admin are two endpoints, each with its
 * path, everywhere endpoints appear; a resolver both APIs take (through an included module's imports) is listed
 * once per API.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { actuatorPort, getJson, startApp, type RunningApp, TRACKED_ONE_RUN_ENV } from './support/app-process';

const BIN = path.resolve(__dirname, '..', '..', 'dist', 'ghost', 'cli', 'index.js');

async function query(port: number, apiPath: string, body: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${apiPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: body }),
  });
  return res.json();
}

const graphql = (endpoints: any[]) =>
  endpoints
    .filter((e) => e.kind === 'graphql')
    .map(({ route, path: api, bean, method, verdict }) => ({ route, path: api, bean, method, verdict }))
    .sort((a, b) => `${a.path} ${a.route} ${a.bean}`.localeCompare(`${b.path} ${b.route} ${b.bean}`));

describe('two GraphQL APIs in one application (nest11-cjs, graphql-apis-app)', () => {
  let app: RunningApp | undefined;
  let live: any;
  let ledger: any;
  let report: any;
  let ghosts: any;

  beforeAll(async () => {
    try {
      app = await startApp('nest11-cjs', { app: 'graphql-apis-app', env: TRACKED_ONE_RUN_ENV });
      // the shop's product and greeting are called; nothing of the admin API is
      expect(await query(app.port, '/shop-api', '{ product greeting }')).toEqual({
        data: { product: 'product shop', greeting: 'hello' },
      });
      live = (await getJson(actuatorPort(app), '/actuator/diag/ghosts')).body;
      ledger = (await getJson(actuatorPort(app), '/actuator/diag/ledger')).body;
      await app.stop('SIGTERM');
      report = app.readReport();
      ghosts = app.readReport('diag-ghost-report.json');
    } finally {
      await app?.stop('SIGKILL');
    }
  }, 90_000);

  it('lists each field with the path of the API that serves it, the global prefix in where the API asks for it', () => {
    const inventory = graphql(report.endpoints).map(({ verdict: _none, ...e }) => e);
    expect(inventory).toEqual([
      {
        route: 'Mutation.deleteProduct',
        path: '/api/admin-api',
        bean: 'ProductAdminResolver',
        method: 'deleteProduct',
      },
      { route: 'Query.greeting', path: '/api/admin-api', bean: 'GreetingResolver', method: 'greeting' },
      { route: 'Query.product', path: '/api/admin-api', bean: 'ProductResolver', method: 'product' },
      { route: 'Query.greeting', path: '/shop-api', bean: 'GreetingResolver', method: 'greeting' },
      { route: 'Query.product', path: '/shop-api', bean: 'ShopProductsResolver', method: 'product' },
    ]);
  });

  it("judges each API's field apart, in the ghost report, the actuator and the ledger answer", () => {
    for (const endpoints of [ghosts.endpoints, live.endpoints, ledger.endpoints]) {
      expect(graphql(endpoints)).toEqual([
        expect.objectContaining({ route: 'Mutation.deleteProduct', path: '/api/admin-api', verdict: 'never-touched' }),
        // one handler, in both APIs: its call through the shop is its call (a touch does not say which API)
        expect.objectContaining({ route: 'Query.greeting', path: '/api/admin-api', verdict: 'in-use' }),
        expect.objectContaining({ route: 'Query.product', path: '/api/admin-api', verdict: 'never-touched' }),
        expect.objectContaining({ route: 'Query.greeting', path: '/shop-api', verdict: 'in-use' }),
        expect.objectContaining({ route: 'Query.product', path: '/shop-api', verdict: 'in-use' }),
      ]);
    }
  });

  it('check names the API of each never-called field, in text and in SARIF', () => {
    const ghostReport = path.join(app!.reportDir, 'diag-ghost-report.json');
    const text = spawnSync(process.execPath, [BIN, 'check', ghostReport], { encoding: 'utf8' });
    expect(text.stdout).toContain('endpoint graphql /api/admin-api Query.product never called in this run');
    expect(text.stdout).toContain('endpoint graphql /api/admin-api Mutation.deleteProduct never called in this run');
    expect(text.stdout).not.toContain('/shop-api Query.product');
    const sarif = spawnSync(process.execPath, [BIN, 'check', ghostReport, '--format', 'sarif'], { encoding: 'utf8' });
    const messages = (JSON.parse(sarif.stdout).runs[0].results as any[]).map((r) => r.message.text as string);
    expect(messages).toEqual(
      expect.arrayContaining([expect.stringMatching(/^graphql \/api\/admin-api Query\.product: /)]),
    );
  });
});
