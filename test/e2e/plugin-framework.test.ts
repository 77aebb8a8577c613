/**
 * Who registered a bean when a library's own decorator declares the module (issue #34, part 1). The app runs on
 * test/fixtures/packages/plugin-framework, shaped like Vendure: `@Plugin()` calls Nest's `Module()` from inside
 * the library for the application's plugin and for the framework's own SearchPlugin alike, and the framework
 * hosts each plugin's resolvers in a module class it builds at run time. The application's plugin and its beans
 * are the application's (LegacyExportService, which nothing uses, is the ghost); the SearchPlugin's beans and
 * the module hosting its resolver are the framework's, never tracked nor reported.
 */
import { LOADING_CASES, startApp, type RunningApp } from './support/app-process';

// The fixture package is copied into the NestJS fixture folders; matrix cells do not install it.
const CASES = process.env.DIAG_MATRIX_DIR ? [] : LOADING_CASES;

interface Node {
  name: string;
  framework: boolean;
  source?: string;
}

describe.each(CASES)('an app on a plugin framework (%s)', (loading) => {
  let app: RunningApp;
  let report: { ghostCandidates: { beans: string[] }; graph: { nodes: Node[] } };
  let ghost: { touched: string[]; untouched: string[]; untrackable: Record<string, string> };

  beforeAll(async () => {
    app = await startApp(loading, { app: 'plugin-app', env: { DIAG_GHOST_TRACKING_ENABLED: 'true' } });
    try {
      report = app.readReport();
      for (const resolver of ['GreetingResolver', 'SearchResolver']) {
        const res = await fetch(`http://127.0.0.1:${app.port}/api/${resolver}`);
        expect(res.status).toBe(200);
      }
    } finally {
      await app.stop('SIGTERM');
    }
    ghost = app.readReport('diag-ghost-report.json');
  });

  it("counts the application's plugin, its beans and the module hosting its resolver as the application's", () => {
    const appBeans = report.graph.nodes.filter((n) => !n.framework).map((n) => n.name);
    expect(appBeans.sort()).toEqual(
      [
        'ClockService',
        'CoreModule',
        'GreetingPlugin',
        'GreetingPluginApiModule',
        'GreetingResolver',
        'GreetingService',
        'LegacyExportService',
        'PluginAppModule',
      ].sort(),
    );
    expect(report.graph.nodes.find((n) => n.name === 'LegacyExportService')?.source).toMatch(/greeting\.plugin\.js$/);
  });

  it("counts the framework's own plugin, its beans and the module it built to host them as the framework's", () => {
    for (const name of [
      'SearchPlugin',
      'SearchIndexService',
      'SearchResolver',
      'SearchPluginApiModule',
      'FrameworkModule',
    ]) {
      expect(report.graph.nodes.find((n) => n.name === name)).toMatchObject({ framework: true });
    }
  });

  it("lists the application's unused provider as a candidate, and no framework bean", () => {
    expect(report.ghostCandidates.beans).toContain('LegacyExportService');
    expect(report.ghostCandidates.beans).not.toContain('SearchResolver');
    expect(report.ghostCandidates.beans).not.toContain('SearchIndexService');
  });

  it("tracks the application's beans only: its resolver and service touched, its unused provider not", () => {
    expect(ghost.touched).toEqual(['ClockService', 'GreetingResolver', 'GreetingService']);
    expect(ghost.untouched).toEqual(['LegacyExportService']);
    // Module classes are not beans a method call can touch: they are no longer tracked, so they no longer count as
    // untrackable (#44: one count, one meaning), the plugin's and the application's alike.
    expect(Object.keys(ghost.untrackable)).toEqual([]);
  });
});
