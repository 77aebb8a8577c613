import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeWithService } from '../../support/services';
import { tempDir } from '../../support/temp';
import { freePort } from '../../support/ports';
import { trackChild } from '../../support/children';

/**
 * A real backend: two instances of examples/prometheus (NodeSDK + PrometheusExporter + the instrumentation,
 * Phase 2 on) scraped every second by Debian's `prometheus` server, queried through its HTTP API. Instance A
 * serves GET /users, instance B serves GET /billing: each alone has untouched beans, but the fleet-wide query
 * from docs/telemetry.md must name only the bean neither touched.
 *
 * Needs the `prometheus` binary (Debian package `prometheus`, or PROMETHEUS_BIN): without it the test is skipped
 * with a line saying so, and under DIAG_REQUIRE_SERVICES=1 (CI) it fails instead.
 */

const root = path.resolve(__dirname, '../../..');
const example = path.join(root, 'examples/prometheus');
const JOB = 'diag-example';

interface Proc {
  readonly proc: ChildProcess;
  output(): string;
}

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd = root): Proc {
  const proc = trackChild(
    spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let out = '';
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  return { proc, output: () => out };
}

async function until<T>(
  what: string,
  ms: number,
  probe: () => Promise<T | undefined> | T | undefined,
  detail = () => '',
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${ms} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}\n${detail()}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function stop(p: Proc | undefined): Promise<void> {
  if (!p || p.proc.exitCode !== null || p.proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => p.proc.once('exit', () => resolve()));
  p.proc.kill('SIGTERM');
  const timer = setTimeout(() => p.proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.text() };
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

let promUrl = '';
async function query(promql: string): Promise<Sample[]> {
  const { status, body } = await get(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const parsed = JSON.parse(body) as {
    status: string;
    data?: { resultType: string; result: Sample[] };
    error?: string;
  };
  if (status !== 200 || parsed.status !== 'success') throw new Error(`query ${promql} failed: ${status} ${body}`);
  return parsed.data!.result;
}

/** Where a scrape of `instance` stands: Prometheus's target health and the bean lines the instance exposes. */
async function describeScrape(instance: string, metricsPort: number): Promise<string> {
  const targets = await get(`${promUrl}/api/v1/targets`).catch((err: unknown) => ({ status: 0, body: String(err) }));
  const target = /"activeTargets":\[.*\]/.test(targets.body)
    ? ((
        JSON.parse(targets.body) as { data: { activeTargets: Array<Record<string, unknown>> } }
      ).data.activeTargets.find((t) => (t.labels as Record<string, string> | undefined)?.instance === instance) ??
      'not a target')
    : targets.body;
  const own = await get(`http://127.0.0.1:${metricsPort}/metrics`).catch((err: unknown) => ({
    status: 0,
    body: String(err),
  }));
  const beans = own.body.split('\n').filter((l) => l.startsWith('diag_bean_touched'));
  return `target: ${JSON.stringify(target)}\nexposed (${own.status}): ${beans.join('\n') || '(no diag_bean_touched line)'}`;
}

/** The fleet-wide query exactly as documented: the first ```promql block of docs/telemetry.md. */
function documentedFleetQuery(): string {
  const doc = fs.readFileSync(path.join(root, 'docs/telemetry.md'), 'utf8');
  const m = doc.match(/```promql\n([\s\S]*?)```/);
  if (!m) throw new Error('docs/telemetry.md has no ```promql block');
  return m[1]!.trim();
}

describeWithService('prometheus', 'two instrumented apps scraped by a real Prometheus server', (bin) => {
  const instances: Record<'a' | 'b', { app?: Proc; appPort: number; metricsPort: number }> = {
    a: { appPort: 0, metricsPort: 0 },
    b: { appPort: 0, metricsPort: 0 },
  };
  let prometheus: Proc | undefined;
  let tmp = '';

  beforeAll(async () => {
    if (!fs.existsSync(path.join(root, 'dist/index.js'))) {
      throw new Error('dist/ is missing: run `node scripts/prepare-test-fixtures.js` (jest globalSetup does) first');
    }
    tmp = tempDir('prometheus');
    for (const [id, inst] of Object.entries(instances)) {
      inst.appPort = await freePort();
      inst.metricsPort = await freePort();
      const reportDir = path.join(tmp, `reports-${id}`);
      inst.app = start(
        process.execPath,
        ['--require', path.join(example, 'telemetry.js'), path.join(example, 'app.js')],
        {
          PORT: String(inst.appPort),
          METRICS_PORT: String(inst.metricsPort),
          DIAG_REPORT_DIR: reportDir,
          // The start-up span on stdout, checked below in a real NestJS process.
          OTEL_TRACES_EXPORTER: 'console',
          DIAG_LOG_LEVEL: 'info',
        },
      );
    }
    for (const inst of Object.values(instances)) {
      const app = inst.app!;
      await until(
        'the example app to listen',
        30_000,
        () => (/LISTENING \d+/.test(app.output()) ? true : undefined),
        app.output,
      );
      await until(
        'its metrics endpoint',
        10_000,
        async () => ((await get(`http://127.0.0.1:${inst.metricsPort}/metrics`)).status === 200 ? true : undefined),
        app.output,
      );
    }

    const promPort = await freePort();
    promUrl = `http://127.0.0.1:${promPort}`;
    const config = path.join(tmp, 'prometheus.yml');
    fs.writeFileSync(
      config,
      [
        // Scrapes of 2 s: with the whole suite on two cores, the per-bean series below did not show within the
        // 30 s wait once in three full runs with 1 s scrapes (it never failed alone); 2 s leaves a starved collection room.
        'global:',
        '  scrape_interval: 2s',
        '  scrape_timeout: 2s',
        '  evaluation_interval: 2s',
        'scrape_configs:',
        `  - job_name: ${JOB}`,
        '    static_configs:',
        `      - targets: ['127.0.0.1:${instances.a.metricsPort}', '127.0.0.1:${instances.b.metricsPort}']`,
        '',
      ].join('\n'),
    );
    prometheus = start(
      bin,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(tmp, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--log.level=warn',
      ],
      {},
      tmp,
    );
    await until(
      'prometheus to be ready',
      30_000,
      async () => ((await get(`${promUrl}/-/ready`)).status === 200 ? true : undefined),
      prometheus.output,
    );
  }, 120_000);

  afterAll(async () => {
    await stop(prometheus);
    await Promise.all(Object.values(instances).map((i) => stop(i.app)));
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }, 30_000);

  const perBean = (samples: Sample[]) =>
    Object.fromEntries(
      samples.map((s) => [
        s.metric.diag_bean_name,
        { value: Number(s.value[1]), module: s.metric.diag_bean_module, candidate: s.metric.diag_bean_ghost_candidate },
      ]),
    );

  it('exposes the per-bean touch state and the counts to a real Prometheus, and answers the fleet-wide question', async () => {
    const a = `http://127.0.0.1:${instances.a.appPort}`;
    const b = `http://127.0.0.1:${instances.b.appPort}`;
    expect((await get(`${a}/users`)).status).toBe(200);
    expect((await get(`${b}/billing`)).status).toBe(200);
    const instA = `127.0.0.1:${instances.a.metricsPort}`;
    const instB = `127.0.0.1:${instances.b.metricsPort}`;

    // Per-bean series of instance A, once a scrape after its request has landed.
    // 60 s: once in a full run on two cores this series had not shown after 30 s, with no error to say why;
    // should it happen again, the scrape's own state and the instance's exposition are printed with it.
    let scrapeState = '';
    const seriesA = await until(
      'the per-bean series of instance A with UsersService touched',
      60_000,
      async () => {
        const result = await query(`diag_bean_touched{job="${JOB}",instance="${instA}"}`);
        if (perBean(result).UsersService?.value === 1) return result;
        scrapeState = await describeScrape(instA, instances.a.metricsPort);
        return undefined;
      },
      () => `${scrapeState}\n${prometheus!.output()}`,
    );
    expect(perBean(seriesA)).toEqual({
      UsersController: { value: 1, module: 'UsersModule', candidate: 'false' },
      UsersService: { value: 1, module: 'UsersModule', candidate: 'false' },
      PriceCalculator: { value: 1, module: 'UsersModule', candidate: 'false' },
      BillingController: { value: 0, module: 'BillingModule', candidate: 'false' },
      InvoiceService: { value: 0, module: 'BillingModule', candidate: 'false' },
      LegacyReportService: { value: 0, module: 'AppModule', candidate: 'true' },
    });

    // 60 s and the scrape's state, as for instance A: a full run beside other work once waited 30 s for it in vain
    const seriesB = await until(
      'instance B with InvoiceService touched',
      60_000,
      async () => {
        const result = await query(`diag_bean_touched{job="${JOB}",instance="${instB}"}`);
        if (perBean(result).InvoiceService?.value === 1) return result;
        scrapeState = await describeScrape(instB, instances.b.metricsPort);
        return undefined;
      },
      () => `${scrapeState}\n${prometheus!.output()}`,
    );
    expect(
      Object.entries(perBean(seriesB))
        .filter(([, v]) => v.value === 0)
        .map(([k]) => k)
        .sort(),
    ).toEqual(['LegacyReportService', 'PriceCalculator', 'UsersController', 'UsersService']);

    // The counts, against the instance's own diag-report.json and against the per-bean series.
    const single = async (promql: string) => {
      const r = await query(promql);
      expect(r).toHaveLength(1);
      return Number(r[0]!.value[1]);
    };
    const report = JSON.parse(fs.readFileSync(path.join(tmp, 'reports-a', 'diag-report.json'), 'utf8')) as {
      ghostCandidates: { count: number; beans: string[] };
    };
    expect(report.ghostCandidates.beans).toEqual(['LegacyReportService']);
    const sel = `{job="${JOB}",instance="${instA}"}`;
    expect(await single(`diag_ghost_candidates${sel}`)).toBe(report.ghostCandidates.count);
    expect(await single(`diag_ghost_tracked${sel}`)).toBe(6);
    expect(await single(`diag_ghost_touched${sel}`)).toBe(3);
    expect(await single(`diag_ghost_untouched${sel}`)).toBe(3);
    expect(await single(`count(diag_bean_touched${sel})`)).toBe(await single(`diag_ghost_tracked${sel}`));
    expect(await single(`sum(diag_bean_touched${sel})`)).toBe(await single(`diag_ghost_touched${sel}`));
    expect(await single(`diag_ghost_untrackable${sel}`)).toBeGreaterThanOrEqual(0);
    expect(await single(`diag_ghost_framework_skipped${sel}`)).toBeGreaterThan(0);

    // The documented fleet-wide query: only the bean no instance touched.
    const fleet = documentedFleetQuery();
    expect(fleet).toContain('max_over_time');
    const never = await query(fleet);
    expect(never.map((s) => s.metric.diag_bean_name)).toEqual(['LegacyReportService']);
    expect(never[0]!.metric.diag_bean_module).toBe('AppModule');

    // The start-up span of a real NestJS bootstrap, from the console exporter.
    const out = instances.a.app!.output();
    expect(out).toContain("name: 'diag.container.startup'");
    expect(out).toMatch(/'diag\.ghost\.candidate_count': 1\b/);
    expect(out).toContain("name: 'diag.bean.instantiation'");
    expect(out).toContain("'diag.bean.name': 'LegacyReportService'");
  }, 120_000);
});
