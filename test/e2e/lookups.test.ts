/**
 * Lookups by token after start-up (issue #34, part 5). Phase 1 reads injections and cannot see `app.get`,
 * `app.select(m).get`, `moduleRef.get` or `moduleRef.resolve`; the process sees them when they happen, and a
 * candidate looked up leaves the live report and every report written after, with how and when.
 */
import { actuatorPort, getJson, LOADING_CASES, startApp, waitFor, type RunningApp } from './support/app-process';

interface Node {
  name: string;
  verdict?: string;
  lookedUp?: { via: string; at: string };
}
interface Report {
  ghostCandidates: { beans: string[]; count: number; lookedUpExcluded: number; disclaimer: string };
  graph: { nodes: Node[] };
}

const node = (report: Report, name: string) => report.graph.nodes.find((n) => n.name === name);

describe.each(LOADING_CASES)('lookups by token after start-up (%s)', (loading) => {
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp(loading, {
      app: 'lookup-app',
      env: { MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag', MANAGEMENT_SERVER_PORT: '0' },
    });
  });
  afterAll(() => app?.stop('SIGKILL'));

  it('lists the beans that only lookups use as candidates until a lookup happens, and says it could not see them', () => {
    const report: Report = app.readReport();
    expect(report.ghostCandidates.beans).toEqual([
      'CsvExporter',
      'LATE_FLAG',
      'LIST',
      'NeverLookedUp',
      'ReportService',
      'TOKEN_PLUGIN',
    ]);
    expect(report.ghostCandidates.lookedUpExcluded).toBe(0);
    expect(report.ghostCandidates.disclaimer).toMatch(/lookups by token made in a constructor or a factory/);
  });

  it('takes each candidate off at its first lookup, in the live report and in diag-report.json, with how', async () => {
    const asked = {
      report: '/lookup/report',
      export: '/lookup/export',
      plugin: '/lookup/plugin',
      flag: '/lookup/flag',
      list: '/lookup/list',
    };
    for (const path of Object.values(asked)) expect((await getJson(app.port, path)).status).toBe(200);
    await waitFor(async () => (app.readReport() as Report).ghostCandidates.lookedUpExcluded === 5);

    const written: Report = app.readReport();
    const live: Report = (await getJson(actuatorPort(app), '/actuator/diag')).body;
    for (const report of [written, live]) {
      expect(report.ghostCandidates.beans).toEqual(['NeverLookedUp']);
      expect(report.ghostCandidates.count).toBe(1);
      expect(node(report, 'ReportService')).toMatchObject({ verdict: 'looked-up', lookedUp: { via: 'moduleRef.get' } });
      expect(node(report, 'CsvExporter')).toMatchObject({
        verdict: 'looked-up',
        lookedUp: { via: 'moduleRef.resolve' },
      });
      expect(node(report, 'TOKEN_PLUGIN')).toMatchObject({ verdict: 'looked-up', lookedUp: { via: 'moduleRef.get' } });
      expect(node(report, 'LATE_FLAG')).toMatchObject({ verdict: 'looked-up', lookedUp: { via: 'moduleRef.get' } });
      // a value that is an array is the bean itself, not a list of instances (that is `{ each: true }`)
      expect(node(report, 'LIST')).toMatchObject({ verdict: 'looked-up', lookedUp: { via: 'moduleRef.get' } });
      expect(node(report, 'NeverLookedUp')).toMatchObject({ verdict: 'candidate' });
      expect(Date.parse(node(report, 'ReportService')!.lookedUp!.at)).toBeGreaterThan(Date.now() - 60_000);
    }
    expect(app.stdout()).toMatch(
      /ghost candidate ReportService was looked up by token \(moduleRef\.get\); it is no longer a candidate/,
    );
  });

  it('answers lookups as without the instrumentation, again and again', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await getJson(app.port, '/lookup/report')).text).toBe('report');
      expect((await getJson(app.port, '/lookup/export')).text).toBe('a,b');
    }
  });
});

describe('a lookup the application never awaits', () => {
  it('still ends the process by its unhandled rejection, as without the instrumentation', async () => {
    const ends: Array<{ code: number | null; unknownElement: boolean }> = [];
    for (const bare of [true, false]) {
      const app = await startApp(LOADING_CASES[0]!, { app: 'lookup-app', bare });
      const exited = new Promise<number | null>((resolve) => app.proc.once('exit', (code) => resolve(code)));
      expect((await getJson(app.port, '/lookup/forget')).text).toBe('sent');
      ends.push({ code: await exited, unknownElement: /NOT_A_PROVIDER/.test(app.stderr()) });
    }
    expect(ends).toEqual([
      { code: 1, unknownElement: true },
      { code: 1, unknownElement: true },
    ]);
  });
});

describe.each(LOADING_CASES)('a standalone application context used through app.get (%s)', (loading) => {
  it('never lists the beans main.ts looks up, and keeps the one it does not', async () => {
    const app = await startApp(loading, { app: 'standalone-app', env: { DIAG_GHOST_TRACKING_ENABLED: 'true' } });
    try {
      expect(app.stdout()).toContain('RESULTS [f],hello,dynamic,hi');
      await waitFor(async () => (app.readReport() as Report).ghostCandidates.lookedUpExcluded === 4);
    } finally {
      expect(await app.stop('SIGTERM')).toBe(0);
    }
    const report: Report = app.readReport();
    expect(report.ghostCandidates.beans).toEqual(['UnusedService']);
    expect(node(report, 'AppService')).toMatchObject({ verdict: 'looked-up', lookedUp: { via: 'app.get' } });
    expect(node(report, 'MyDynamicProvider')).toMatchObject({ verdict: 'looked-up', lookedUp: { via: 'app.get' } });
    expect(node(report, 'GREETING')).toMatchObject({ verdict: 'looked-up', lookedUp: { via: 'app.get' } });
    // Phase 2: a value provider called on the line after create() was already tracked, so the call touched it.
    const ghost = app.readReport('diag-ghost-report.json');
    expect(ghost.touched).toEqual(expect.arrayContaining(['AppService', 'FORMATTER']));
    expect(ghost.untouched).toEqual(['UnusedService']);
    expect(app.stdout()).toMatch(/ghost report written to .*diag-ghost-report\.json \(close\)/);
  });
});
