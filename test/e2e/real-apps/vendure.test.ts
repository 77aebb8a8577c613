/**
 * A real plugin framework from the registry: Vendure 3 (bench/startup/vendure, installed there once). Its
 * `@VendurePlugin()` calls Nest's `Module()` from inside `@vendure/core` for every plugin, the application's and
 * its own, and it hosts each plugin's GraphQL resolvers in a module class built at run time. The application's
 * beans are exactly its plugin's (greeting.plugin.js); DefaultSearchPlugin, registered through init(), and the
 * modules hosting its resolvers are Vendure's: never tracked, never reported untouched.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { quietOtelEnv, tempDir, waitFor } from '../support/app-process';
import { freePort } from '../../support/ports';
import { REQUIRE_SERVICES_ENV, servicesRequired } from '../../support/services';
import { trackChild } from '../../support/children';

const VENDURE = path.resolve(__dirname, '..', '..', '..', 'bench', 'startup', 'vendure');
const PRELOAD = path.resolve(__dirname, '..', '..', 'fixtures', 'telemetry', 'telemetry.cjs');
const installed = fs.existsSync(path.join(VENDURE, 'node_modules', '@vendure', 'core', 'package.json'));
const INSTALL = `npm ci --prefix bench/startup/vendure`;

interface Node {
  name: string;
  framework: boolean;
  source?: string;
}

function describeWithVendure(title: string, body: () => void): void {
  if (installed) return describe(title, body);
  if (servicesRequired()) {
    return describe(title, () =>
      it('needs Vendure installed', () => {
        throw new Error(`Vendure is not installed: run \`${INSTALL}\`; ${REQUIRE_SERVICES_ENV}=1 makes it a failure`);
      }),
    );
  }
  describe.skip(`${title} — skipped: Vendure is not installed (\`${INSTALL}\`)`, body);
}

describeWithVendure('Vendure 3 with a plugin of its own and one of the application', () => {
  let report: {
    ghostCandidates: { beans: string[] };
    graph: { nodes: Node[] };
    endpoints: Array<{ kind: string; route: string; path?: string; bean: string; method: string }>;
  };
  let ghost: { touched: string[]; untouched: string[]; untrackable: Record<string, string>; frameworkSkipped: number };
  let greeting: unknown;

  beforeAll(async () => {
    const dir = tempDir('vendure');
    const env = { ...process.env, ...quietOtelEnv(), VENDURE_DB: path.join(dir, 'vendure.sqlite') };
    // The schema first, without the instrumentation.
    const sync = spawnSync(process.execPath, ['plugins-server.js'], {
      cwd: VENDURE,
      env: { ...env, VENDURE_SYNC: '1', PORT: String(await freePort()) },
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (sync.status !== 0) throw new Error(`Vendure could not create its database:\n${sync.stderr}`);

    const port = await freePort();
    const reportDir = path.join(dir, 'reports');
    const proc = trackChild(
      spawn(process.execPath, ['--require', PRELOAD, 'plugins-server.js'], {
        cwd: VENDURE,
        env: { ...env, PORT: String(port), DIAG_REPORT_DIR: reportDir, DIAG_GHOST_TRACKING_ENABLED: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      proc.once('exit', (code, signal) => resolve(signal ?? code)),
    );
    try {
      await waitFor(
        async () => out.includes('LISTENING ') && fs.existsSync(path.join(reportDir, 'diag-report.json')),
        90_000,
      );
      const res = await fetch(`http://127.0.0.1:${port}/shop-api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ greeting }' }),
      });
      greeting = await res.json();
      // Vendure enables Nest's shutdown hooks: SIGINT closes the app, which writes the ghost report.
      proc.kill('SIGINT');
      expect(await exited).toBe('SIGINT');
    } catch (err) {
      proc.kill('SIGKILL');
      throw new Error(`${String(err)}\n${out}`);
    }
    report = JSON.parse(fs.readFileSync(path.join(reportDir, 'diag-report.json'), 'utf8'));
    ghost = JSON.parse(fs.readFileSync(path.join(reportDir, 'diag-ghost-report.json'), 'utf8'));
  }, 180_000);

  it('answers the plugin query as without the instrumentation', () => {
    expect(greeting).toEqual({ data: { greeting: 'hello world' } });
  });

  it("has exactly the application's plugin as the application's beans", () => {
    const appBeans = report.graph.nodes.filter((n) => !n.framework).map((n) => n.name);
    expect(appBeans.sort()).toEqual([
      'GreetingPlugin',
      'GreetingPluginDynamicShopModule',
      'GreetingResolver',
      'GreetingService',
      'LegacyExportService',
    ]);
    expect(report.graph.nodes.find((n) => n.name === 'LegacyExportService')?.source).toMatch(/greeting\.plugin\.js$/);
  });

  it("lists every GraphQL field of its shop and admin APIs among the endpoints, the plugin's query with its resolver", () => {
    expect(report.endpoints.filter((e) => e.bean === 'GreetingResolver')).toEqual([
      { kind: 'graphql', route: 'Query.greeting', path: '/shop-api', bean: 'GreetingResolver', method: 'greeting' },
    ]);
    // each API's field says its API: the admin's Query.product is not the shop's
    const product = report.endpoints.filter((e) => e.route === 'Query.product').map((e) => `${e.path} ${e.bean}`);
    expect(product.sort()).toEqual(['/admin-api ProductResolver', '/shop-api ShopProductsResolver']);
    // Vendure's own resolvers, one bean per API module that hosts them (2026-11-27: 519 fields, 102 queries)
    expect(report.endpoints.filter((e) => e.route.startsWith('Query.')).length).toBeGreaterThan(90);
    expect(report.endpoints).toContainEqual({
      kind: 'http',
      route: 'GET /health',
      bean: 'HealthController',
      method: 'check',
    });
    const beans = new Set(report.graph.nodes.map((n) => n.name));
    expect(report.endpoints.filter((e) => !beans.has(e.bean))).toEqual([]);
  });

  it("lists the application's unused provider as the one ghost candidate", () => {
    expect(report.ghostCandidates.beans).toEqual(['LegacyExportService']);
  });

  it("tracks the application's beans only, and leaves the search plugin's resolvers to Vendure", () => {
    expect(ghost.touched).toEqual(['GreetingResolver', 'GreetingService']);
    expect(ghost.untouched).toEqual(['LegacyExportService']);
    expect(ghost.frameworkSkipped).toBeGreaterThan(300);
    for (const name of [
      'ShopFulltextSearchResolver',
      'AdminFulltextSearchResolver',
      'DefaultSearchPluginDynamicShopModule',
    ]) {
      expect(report.graph.nodes.find((n) => n.name === name)).toMatchObject({ framework: true });
    }
  });
});
