/**
 * The report page in a real browser: Debian's Chromium driven by playwright-core (no browser download), on
 * the example shop's own report — opened from disk and served live by the actuator — and on a report whose
 * bean names are markup.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { reportPageHtml } from '../../../src/ghost/page';
import type { PageData } from '../../../src/ghost/page/types';
import { describeWithService } from '../../support/services';
import { actuatorPort, getJson, startApp, tempDir, type RunningApp } from '../support/app-process';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describeWithService('chromium', 'the report page in Chromium', (chromiumBin) => {
  let browser: Browser;
  let app: RunningApp;
  let diag: any;

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumBin, args: CHROMIUM_ARGS, headless: true });
    app = await startApp('nest11-cjs', {
      env: {
        DIAG_GHOST_TRACKING_ENABLED: 'true',
        MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag',
        MANAGEMENT_SERVER_PORT: '0',
      },
    });
    expect((await getJson(app.port, '/users')).status).toBe(200);
    diag = (await getJson(actuatorPort(app), '/actuator/diag')).body;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop('SIGKILL');
  });

  /** Opens a URL and collects every request and console error the page makes. */
  async function open(url: string): Promise<{ page: Page; requests: string[]; errors: string[]; dialogs: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const requests: string[] = [];
    const errors: string[] = [];
    const dialogs: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(url);
    await page.waitForSelector('#counts');
    return { page, requests, errors, dialogs };
  }

  const countOf = async (page: Page, key: string) =>
    Number(await page.locator(`[data-count="${key}"] b`).textContent());

  it('opens from disk with no network request, its counts matching the JSON; search finds a bean, a click shows it', async () => {
    const stopped = await app.stop('SIGTERM'); // the page on disk is rewritten with Phase 2's state at close
    void stopped;
    const file = path.join(app.reportDir, 'diag-report.html');
    expect(fs.existsSync(file)).toBe(true);
    const report = app.readReport();
    const ghosts = app.readReport('diag-ghost-report.json');
    const { page, requests, errors } = await open(`file://${file}`);
    expect(requests).toEqual([`file://${file}`]);
    expect(errors).toEqual([]);
    expect(await countOf(page, 'beans')).toBe(report.summary.beans);
    expect(await countOf(page, 'application')).toBe(report.summary.applicationBeans);
    expect(await countOf(page, 'candidates')).toBe(report.ghostCandidates.count);
    expect(await countOf(page, 'touched')).toBe(ghosts.touchedCount);
    expect(await countOf(page, 'untouched')).toBe(ghosts.untouchedCount);

    // The inventory of entry points, above the beans: every endpoint of the report, each with its handler.
    expect(report.endpoints.length).toBeGreaterThan(0);
    const routes = await page
      .locator('#endpoints tr[data-endpoint-route]')
      .evaluateAll((rows) =>
        rows.map((r) => `${r.getAttribute('data-endpoint-kind')} ${r.getAttribute('data-endpoint-route')}`),
      );
    expect(routes.sort()).toEqual(report.endpoints.map((e: any) => `${e.kind} ${e.route}`).sort());
    const order = await page.locator('body > *').evaluateAll((es) => es.map((e) => e.id || e.tagName.toLowerCase()));
    expect(order.indexOf('endpoints')).toBeLessThan(order.indexOf('main'));

    await page.fill('#search', 'legacy');
    const visible = await page.locator('#modules li:not(.hidden) button.bean').allTextContents();
    expect(visible.map((t) => t.replace(/^\S+\s/, ''))).toEqual(['LegacyReportService']);
    await page.locator('button.bean[data-bean="LegacyReportService"]').click();
    expect(await page.locator('#bean-details h2').textContent()).toBe('LegacyReportService');
    expect(await page.locator('#bean-details [data-field="Phase 1"]').textContent()).toBe('candidate');
    // One verdict from both phases, this run's: never called, too soon to say never-touched.
    expect(await page.locator('#bean-details [data-field="verdict"]').textContent()).toMatch(
      /^insufficient-evidence: /,
    );
    expect(await page.locator('#bean-details [data-field="Phase 2"]').textContent()).toBe('tracked, never called');
    expect(await page.locator('#bean-details [data-field="module"]').textContent()).toBe('ShopModule');
    expect(await page.locator('#bean-details [data-field="state"]').textContent()).toBe(
      'ghost candidate and never called (most likely dead)',
    );
    // A value provider has no class file: the page says where its module registers it, the line a reader deletes.
    const flags = report.graph.nodes.find((n: any) => n.name === 'FEATURE_FLAGS');
    expect(flags.registeredIn).toMatchObject({
      file: expect.stringMatching(/shop\.module\.(ts|js)$/),
      line: expect.any(Number),
    });
    await page.fill('#search', 'FEATURE_FLAGS');
    await page.locator('button.bean[data-bean="FEATURE_FLAGS"]').click();
    expect(await page.locator('#bean-details [data-field="registered at"]').textContent()).toBe(
      // not judged dead in one run: where it stands, without a word of deleting it
      `${flags.registeredIn.file}:${flags.registeredIn.line} (no class file of its own: its registration is all of it)`,
    );
    // The waterfall has a bar per bean created at start-up: the ones that took no time behind the box.
    const shown = await page.locator('#waterfall .boot-row:not(.hidden)').count();
    await page.check('#boot-all-rows');
    const all = await page.locator('#waterfall .boot-row:not(.hidden)').count();
    expect(all).toBeGreaterThan(shown);
    expect(await page.locator('#waterfall .row').count()).toBeGreaterThan(10);
    // The critical path has its own mark: ★ is the verdicts' "most likely dead" (a trial read one for the other).
    const waterfall = (await page.locator('#waterfall').textContent()) ?? '';
    expect(waterfall).toContain('◆ ');
    expect(waterfall).not.toContain('★');
    await page.fill('#search', '');
    const shot = path.join(tempDir('page'), 'report-page.png');
    await page.screenshot({ path: shot, fullPage: false });
    expect(fs.statSync(shot).size).toBeGreaterThan(20_000);
    if (process.env.DIAG_UPDATE_SCREENSHOT === '1')
      fs.copyFileSync(shot, path.resolve(__dirname, '..', '..', '..', 'docs', 'report-page.png'));
    await page.close();
  }, 60_000);

  it('leads with the endpoints nobody calls, then the dead methods per bean, from the verdicts (ledger answer shape)', async () => {
    const evil = '<img src=x onerror="window.__xss=3">';
    const endpoint = (kind: string, route: string, bean: string, method: string, verdict: string, extra = {}) => ({
      kind,
      route,
      bean,
      method,
      verdict,
      source: { file: `src/${bean}.ts`, line: 10 },
      ...extra,
    });
    const bean = (name: string, verdict: string, methods: Array<[string, string, number, object?]>) => ({
      name,
      verdict,
      module: 'ShopModule',
      source: `src/${name}.ts`,
      ghostCandidate: false,
      why: verdict,
      firstSeen: '2026-11-01T00:00:00.000Z',
      processHours: 900,
      methods: methods.map(([m, v, line, extra]) => ({
        name: m,
        verdict: v,
        source: { file: `src/${name}.ts`, line },
        ...extra,
      })),
    });
    const verdicts = {
      service: 'shop',
      generatedAt: '2026-11-27T12:00:00.000Z',
      thresholds: { minDays: 14, minProcessHours: 336 },
      provenance: {
        source: 'redis',
        ledger: '127.0.0.1:6379',
        since: '2026-11-01T00:00:00.000Z',
        processes: 3,
        liveProcesses: 2,
        processHours: 900,
        versions: 1,
        lastWriteAgoMs: 1000,
        reset: false,
        silent: false,
      },
      counts: { 'never-touched': 0, 'insufficient-evidence': 0, untrackable: 0, retired: 0, 'in-use': 3 },
      beans: [
        bean('UsersController', 'in-use', [
          ['list', 'in-use', 12],
          ['exportAll', 'never-touched', 30],
        ]),
        bean('REPORTS_SERVICE', 'in-use', [
          ['daily', 'in-use', 5],
          ['legacyCsv', 'never-touched', 40],
          [
            evil,
            'never-touched',
            50,
            // an interface declares it, and another bean's implementation was called: it stays
            {
              contract: {
                kind: 'interface',
                name: 'Exporter',
                file: 'src/exporter.ts',
                line: 3,
                calledIn: ['CsvExport'],
              },
            },
          ],
          ['yearly', 'insufficient-evidence', 60],
          ['rebuild', 'insufficient-evidence', 70],
          ['partnerSync', 'never-touched', 80, { kept: 'partner calls quarterly' }],
          ['findOne', 'never-touched', 90, { calledThrough: ['UsersRepository'] }],
          ['findAll', 'never-touched', 0, { source: { file: 'src/base.ts', line: 7 } }],
        ]),
        // never touched as a whole: the bean is the finding (the verdicts below), its methods are not listed again
        bean('GhostExportService', 'never-touched', [['exportAll', 'never-touched', 4]]),
        // the same inherited findAll, called through neither: one piece of dead code
        bean('HealthService', 'in-use', [
          ['check', 'in-use', 3],
          ['findAll', 'never-touched', 0, { source: { file: 'src/base.ts', line: 7 } }],
        ]),
        // a library's class the application registers: its file is the module's, where the registration goes
        { ...bean('Logger', 'never-touched', []), source: 'src/users.module.ts', line: 14, registered: true },
        // never called, but holding a kept member: it stays, and says why
        { ...bean('OpsResolver', 'never-touched', []), kept: 'with its method health: the only Query field' },
      ].map((b) => (b.name === 'REPORTS_SERVICE' ? { ...b, className: 'ReportsService' } : b)),
      endpoints: [
        endpoint('http', 'GET /users', 'UsersController', 'list', 'in-use'),
        endpoint('http', 'GET /users/export', 'UsersController', 'exportAll', 'never-touched'),
        endpoint('event', evil, 'REPORTS_SERVICE', 'legacyCsv', 'never-touched'),
        endpoint('cron', 'yearly-report', 'REPORTS_SERVICE', 'yearly', 'insufficient-evidence', {
          schedule: { cron: '0 0 1 1 *', nextAt: '2027-01-01T00:00:00.000Z' },
        }),
        endpoint('http', 'POST /webhooks/partner', 'UsersController', 'webhook', 'never-touched', {
          kept: 'partner calls quarterly',
        }),
      ],
    };
    const contractsNote = 'The methods are named in their compiled files, such as dist/x.js: …';
    const data = { live: false, report: diag, verdicts, contractsNote } as unknown as PageData;
    const file = path.join(tempDir('page'), 'judged.html');
    fs.writeFileSync(file, reportPageHtml(data));
    const { page, errors, dialogs } = await open(`file://${file}`);
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(await page.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss)).toBeUndefined();

    // first the endpoints, most likely dead first; the one in use folded away until asked for
    const ids = await page.locator('body > section').evaluateAll((s) => s.map((e) => e.id));
    expect(ids.slice(0, 3)).toEqual(['endpoints', 'dead-methods', 'verdicts']);
    // a kept endpoint is shown with its reason, never counted as one nobody calls
    expect(await page.locator('#endpoints h2').textContent()).toBe('Endpoints nobody calls: 2 of 5');
    const rows = () =>
      page
        .locator('#endpoints tbody tr:not(.hidden)')
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(await rows()).toEqual([
      ['never touched', 'http', 'GET /users/export', 'UsersController.exportAll()', 'src/UsersController.ts:10', ''],
      ['never touched', 'event', evil, 'REPORTS_SERVICE.legacyCsv()', 'src/REPORTS_SERVICE.ts:10', ''],
      [
        'kept',
        'http',
        'POST /webhooks/partnerkept: partner calls quarterly',
        'UsersController.webhook()',
        'src/UsersController.ts:10',
        '',
      ],
      [
        'not enough evidence yet',
        'cron',
        'yearly-report',
        'REPORTS_SERVICE.yearly()',
        'src/REPORTS_SERVICE.ts:10',
        '0 0 1 1 *, next 2027-01-01T00:00:00.000Z',
      ],
    ]);
    await page.click('#show-endpoints');
    expect((await rows()).map((r) => r[2])).toEqual([
      'GET /users/export',
      evil,
      'POST /webhooks/partnerkept: partner calls quarterly',
      'yearly-report',
      'GET /users',
    ]);

    // then each bean's methods nobody called, the bean with the most first; a bean with none is not listed, and an
    // endpoint's handler is left to the endpoints above (a dead route is one finding, not two)
    // (kept ones and inherited code another bean runs are listed with why, never counted; those not judged yet are)
    expect(await page.locator('#dead-methods h2').textContent()).toBe(
      'Dead methods: 2 never called, in 2 beans; 1 not judged yet',
    );
    expect(await page.locator('#dead-methods p.evidence:not(.contracts-note)').textContent()).toBe(
      '3 endpoint handlers are listed with the endpoints above.',
    );
    const dead = await page.locator('#dead-methods .dead-bean').evaluateAll((boxes) =>
      boxes.map((b) => ({
        bean: b.getAttribute('data-dead-bean'),
        title: b.querySelector('h3')?.textContent,
        methods: [...b.querySelectorAll('li')].map((li) => li.textContent),
      })),
    );
    expect(dead).toEqual([
      {
        bean: 'REPORTS_SERVICE',
        // named by its DI token, it says its class
        title: 'REPORTS_SERVICE class ReportsService · ShopModule · src/REPORTS_SERVICE.ts · 1 in use',
        methods: [
          `${evil}() never touched src/REPORTS_SERVICE.ts:50 · declared by interface Exporter (src/exporter.ts:3), which CsvExport also implements, called there: it stays while Exporter requires it`,
          'findAll() never touched src/base.ts:7 · shared code, never called through HealthService either',
          'rebuild() not enough evidence yet src/REPORTS_SERVICE.ts:70',
          'partnerSync() kept: partner calls quarterly src/REPORTS_SERVICE.ts:80',
          'findOne() not called here; its shared code runs through UsersRepository src/REPORTS_SERVICE.ts:90',
        ],
      },
      {
        bean: 'HealthService',
        title: 'HealthService ShopModule · src/HealthService.ts · 1 in use',
        methods: ['findAll() never touched src/base.ts:7 · shared code, never called through REPORTS_SERVICE either'],
      },
    ]);
    // the verdicts: a registered bean's file is its registration's line, said so
    expect(
      await page
        .locator('#verdicts tr[data-verdict="never-touched"]')
        .evaluateAll((trs) => trs.map((tr) => tr.querySelector('td.file')?.textContent)),
    ).toEqual([
      'src/GhostExportService.ts',
      'src/users.module.ts:14registered here: the registration goes',
      'src/OpsResolver.ts',
    ]);
    expect(await page.locator('#verdicts tr.v-kept td.verdict').allTextContents()).toEqual(['never touched · kept']);
    expect(await page.locator('#verdicts tr.v-kept .kept-reason').allTextContents()).toEqual([
      'kept: with its method health: the only Query field',
    ]);
    expect(await page.locator('#dead-methods .contracts-note').textContent()).toBe(contractsNote);
    expect(await page.locator('img').count()).toBe(0);
    await page.close();
  }, 60_000);

  it('draws a bean never called but judged untrackable (its endpoints not served) as untrackable, not untouched', async () => {
    const name = diag.graph.nodes.find((n: any) => !n.framework && n.role === 'controller').name as string;
    const data = {
      live: false,
      report: diag,
      ghosts: {
        touched: [],
        untouched: [name],
        untrackable: {},
        trackedCount: 1,
        touchedCount: 0,
        untouchedCount: 1,
        untrackableCount: 0,
      },
      verdicts: {
        service: 'shop',
        generatedAt: '2026-11-27T12:00:00.000Z',
        thresholds: { minDays: 14, minProcessHours: 336 },
        provenance: { source: 'this-process', since: '2026-11-27T11:00:00.000Z', processes: 1, liveProcesses: 1 },
        counts: { untrackable: 1 },
        beans: [
          {
            name,
            verdict: 'untrackable',
            ghostCandidate: false,
            why: 'its endpoints are not served: …',
            evidence: '',
            // standing at its registration, yet not judged dead: no "the registration goes"
            source: 'src/app.module.ts',
            line: 3,
            registered: true,
          },
        ],
      },
    } as unknown as PageData;
    const file = path.join(tempDir('page'), 'unserved.html');
    fs.writeFileSync(file, reportPageHtml(data));
    const { page, errors } = await open(`file://${file}`);
    expect(errors).toEqual([]);
    expect(await page.locator(`#modules button.bean[data-bean="${name}"]`).getAttribute('class')).toContain(
      'c-untrackable',
    );
    expect(await page.locator(`#verdicts tr[data-verdict="untrackable"] td.file`).allTextContents()).toEqual([
      'src/app.module.ts:3registered here',
    ]);
    // and counted where it is drawn
    expect(await countOf(page, 'untouched')).toBe(0);
    expect(await countOf(page, 'untrackable')).toBe(1);
    await page.close();
  }, 60_000);

  it('escapes every name: markup in tokens renders as text and runs nothing', async () => {
    const evil = '<img src=x onerror="window.__xss=1">';
    const module = '</script><script>window.__xss=2</script>';
    const data: PageData = {
      live: false,
      report: {
        ...diag,
        orphans: [evil],
        ghostCandidates: { ...diag.ghostCandidates, count: 1, beans: [evil] },
        graph: {
          nodes: [
            ...diag.graph.nodes,
            {
              name: evil,
              token: evil,
              module,
              kind: 'value',
              scope: 'singleton',
              role: 'provider',
              framework: false,
              eager: true,
              dependents: 0,
              verdict: 'candidate',
            },
          ],
          edges: diag.graph.edges,
        },
      },
    };
    const file = path.join(tempDir('page'), 'evil.html');
    fs.writeFileSync(file, reportPageHtml(data));
    const { page, errors, dialogs } = await open(`file://${file}`);
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(await page.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(await page.locator('img').count()).toBe(0);
    await page.locator('button.bean', { hasText: 'onerror' }).click();
    expect(await page.locator('#bean-details h2').textContent()).toBe(evil);
    expect(await page.locator('#bean-details [data-field="module"]').textContent()).toBe(module);
    await page.close();
  }, 60_000);

  it('stays usable with thousands of beans: grouped by module, framework beans on request, a grid past 400', async () => {
    const nodes = Array.from({ length: 3000 }, (_, i) => ({
      name: `Bean${i}`,
      token: `Bean${i}`,
      module: `Module${i % 60}`,
      kind: 'class',
      scope: 'singleton',
      role: 'provider',
      framework: i % 3 === 0,
      eager: true,
      dependents: i % 5 === 0 ? 0 : 1,
    }));
    const edges = nodes.slice(1).map((n, i) => ({ from: n.name, to: nodes[i]!.name, kind: 'constructor' }));
    const data: PageData = {
      live: false,
      report: {
        ...diag,
        summary: { ...diag.summary, beans: 3000, applicationBeans: 2000, frameworkBeans: 1000 },
        ghostCandidates: { ...diag.ghostCandidates, count: 0, beans: [] },
        graph: { nodes, edges },
        endpoints: nodes
          .slice(0, 300)
          .map((n, i) => ({ kind: 'http' as const, route: `GET /route/${i}`, bean: n.name, method: 'handle' })),
      },
    };
    const file = path.join(tempDir('page'), 'large.html');
    fs.writeFileSync(file, reportPageHtml(data));
    const { page, errors } = await open(`file://${file}`);
    expect(errors).toEqual([]);
    expect(await countOf(page, 'beans')).toBe(3000);
    // the inventory without verdicts: its first rows, the rest on request, so that the beans stay in sight
    expect(await page.locator('#endpoints tbody tr:not(.hidden)').count()).toBe(20);
    await page.click('#show-endpoints');
    expect(await page.locator('#endpoints tbody tr:not(.hidden)').count()).toBe(300);
    expect(await page.locator('details.module').count()).toBe(60);
    await page.check('#show-framework');
    await page.fill('#search', 'Bean2999');
    expect(await page.locator('#modules li:not(.hidden)').count()).toBe(1);
    await page.locator('button.bean[data-bean="Bean2999"]').click();
    expect(await page.locator('#bean-details h2').textContent()).toBe('Bean2999');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('is served live by the actuator under a Content-Security-Policy that allows only its own inline bundle', async () => {
    const live = await startApp('nest11-cjs', {
      env: {
        DIAG_GHOST_TRACKING_ENABLED: 'true',
        MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag',
        MANAGEMENT_SERVER_PORT: '0',
      },
    });
    try {
      await getJson(live.port, '/users');
      const url = `http://127.0.0.1:${actuatorPort(live)}/actuator/diag/view`;
      const res = await fetch(url);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toMatch(/default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-[^']+'/);
      await res.arrayBuffer(); // read to its end: a body left unread holds the connection open past the test
      // The shop's @Interval job touches beans on its own: the page's count lies between two snapshots.
      const before = (await getJson(actuatorPort(live), '/actuator/diag/ghosts')).body;
      const { page, requests, errors } = await open(url);
      const after = (await getJson(actuatorPort(live), '/actuator/diag/ghosts')).body;
      expect(requests).toEqual([url]);
      expect(errors).toEqual([]);
      const touched = await countOf(page, 'touched');
      expect(touched).toBeGreaterThanOrEqual(before.touchedCount);
      expect(touched).toBeLessThanOrEqual(after.touchedCount);
      expect(await countOf(page, 'tracked')).toBe(after.trackedCount);
      expect(await page.locator('.meta').textContent()).toContain('live');
      await page.close();
    } finally {
      await live.stop('SIGKILL');
    }
  }, 60_000);
});
