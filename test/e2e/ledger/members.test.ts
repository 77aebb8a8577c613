/**
 * Methods and endpoints in the ghost ledger (issue #43, the fleet half), on a real Redis with real NestJS processes
 * and the service's window shortened to seconds: two v1 replicas called over HTTP, then a v2 deploy that removes
 * one route (and its method) and adds another. The CLI's JSON, text and SARIF, its gate, and `{base}/diag/ledger`
 * must show the called route in use, the never-called one never-touched, the removed one retired and the added one
 * insufficient-evidence, and each bean's methods likewise.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeWithService } from '../../support/services';
import { freePort } from '../../support/ports';
import { RedisServer, sleep, until } from '../fleet/harness';
import { actuatorPort, getJson, startApp, tempDir, type RunningApp } from '../support/app-process';
import { ledgerAppEnv, ledgerCli } from './support';

/** The service's evidence window: long enough that the v2 deploy is judged well inside it on a busy machine. */
const WINDOW_MS = 20_000;

interface Method {
  name: string;
  verdict: string;
  source?: { file: string; line: number };
}
interface Endpoint {
  kind: string;
  route: string;
  bean: string;
  method: string;
  verdict: string;
  source?: { file: string; line: number };
}
interface Answer {
  provenance: { liveProcesses: number; versionDetails: { version: string; firstSeen: string }[] };
  beans: { name: string; verdict: string; methods?: Method[] }[];
  endpoints?: Endpoint[];
  memberCounts?: { methods: Record<string, number>; endpoints: Record<string, number> };
}

function answer(url: string, args: string[] = []): Answer | undefined {
  try {
    return JSON.parse(ledgerCli(url, ['--format', 'json', ...args]).stdout) as Answer;
  } catch {
    return undefined;
  }
}

const endpoint = (a: Answer | undefined, route: string) => a?.endpoints?.find((e) => e.route === route);
const method = (a: Answer | undefined, bean: string, name: string) =>
  a?.beans.find((b) => b.name === bean)?.methods?.find((m) => m.name === name);
const verdictsOf = (a: Answer) => Object.fromEntries((a.endpoints ?? []).map((e) => [e.route, e.verdict]));

describeWithService('redis', 'methods and endpoints in the ghost ledger (issue #43)', (bin) => {
  const apps: RunningApp[] = [];
  const servers: RedisServer[] = [];

  async function app(url: string, version: string, extra: NodeJS.ProcessEnv = {}): Promise<RunningApp> {
    const started = await startApp('nest11-cjs', {
      app: 'ledger-app',
      env: ledgerAppEnv(url, version, {
        // The service's thresholds, as its processes state them: the CLI is told none.
        DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS: String(WINDOW_MS / 86_400_000),
        DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS: '0',
        DIAG_GHOST_TRACKING_LAST_USE_RESOLUTION_MS: '1000',
        ...extra,
      }),
    });
    apps.push(started);
    return started;
  }

  afterEach(async () => {
    for (const a of apps.splice(0)) await a.stop('SIGKILL');
    for (const s of servers.splice(0)) await s.stop();
  });

  it('judges each route and method across replicas and a deploy that removes one route and adds another', async () => {
    const redis = new RedisServer(bin, await freePort(), 'members-pw', []);
    servers.push(redis);
    await redis.start();

    // v1: two replicas; GET /orders on one, GET /legacy on the other. GET /audit and GET /reports are never called.
    const [a, b] = await Promise.all([app(redis.url, 'v1'), app(redis.url, 'v1')]);
    expect((await getJson(a!.port, '/orders')).status).toBe(200);
    expect((await getJson(b!.port, '/legacy')).status).toBe(200);
    const early = await until('both replicas’ method uses in the ledger', 15_000, async () => {
      const now = answer(redis.url);
      return now?.provenance.liveProcesses === 2 &&
        endpoint(now, 'GET /orders')?.verdict === 'in-use' &&
        endpoint(now, 'GET /legacy')?.verdict === 'in-use'
        ? now
        : undefined;
    });
    // Inside the window the never-called route is not judged yet.
    expect(endpoint(early, 'GET /audit')).toMatchObject({
      kind: 'http',
      bean: 'ShopController',
      method: 'audit',
      verdict: 'insufficient-evidence',
    });
    expect(endpoint(early, 'GET /recommendations')).toBeUndefined();
    expect(method(early, 'OrderService', 'list')!.verdict).toBe('in-use');
    expect(method(early, 'OrderService', 'cancel')!.verdict).toBe('insufficient-evidence');

    // Past the window since v1 first ran, the deploy: a v2 replica comes (GET /orders called there), the v1 ones go.
    const v1Since = Date.parse(early.provenance.versionDetails.find((v) => v.version === 'v1')!.firstSeen);
    await sleep(Math.max(0, v1Since + WINDOW_MS + 500 - Date.now()));
    const c = await app(redis.url, 'v2', {
      MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag',
      MANAGEMENT_SERVER_PORT: '0',
    });
    expect((await getJson(c.port, '/orders')).status).toBe(200);
    await a!.stop('SIGTERM');
    await b!.stop('SIGTERM');
    const deployed = await until('only v2 live, /legacy retired, its /orders use in', 15_000, async () => {
      const now = answer(redis.url);
      const orders = endpoint(now, 'GET /orders');
      return now?.provenance.liveProcesses === 1 &&
        endpoint(now, 'GET /legacy')?.verdict === 'retired' &&
        orders?.verdict === 'in-use' &&
        Date.parse((orders as { lastTouched?: string }).lastTouched ?? '0') > v1Since + WINDOW_MS
        ? now
        : undefined;
    });
    const v2Since = Date.parse(deployed.provenance.versionDetails.find((v) => v.version === 'v2')!.firstSeen);
    expect(Date.now() - v2Since).toBeLessThan(WINDOW_MS); // else the added route would be judged already

    // The JSON: each endpoint on the variants that had it.
    expect(endpoint(deployed, 'GET /orders')).toMatchObject({
      bean: 'ShopController',
      method: 'list',
      verdict: 'in-use',
    });
    expect(endpoint(deployed, 'GET /audit')).toMatchObject({ method: 'audit', verdict: 'never-touched' });
    expect(endpoint(deployed, 'GET /legacy')).toMatchObject({ method: 'legacy', verdict: 'retired' });
    expect(endpoint(deployed, 'GET /recommendations')).toMatchObject({
      method: 'recommendations',
      verdict: 'insufficient-evidence',
    });
    // ... and each bean's methods likewise, with their lines.
    expect(method(deployed, 'ShopController', 'list')!.verdict).toBe('in-use');
    expect(method(deployed, 'ShopController', 'audit')!.verdict).toBe('never-touched');
    expect(method(deployed, 'ShopController', 'legacy')!.verdict).toBe('retired');
    expect(method(deployed, 'ShopController', 'recommendations')!.verdict).toBe('insufficient-evidence');
    expect(method(deployed, 'OrderService', 'list')!.verdict).toBe('in-use');
    expect(method(deployed, 'OrderService', 'cancel')).toMatchObject({
      verdict: 'never-touched',
      source: { file: expect.stringMatching(/beans\.(js|ts)$/), line: expect.any(Number) },
    });
    expect(endpoint(deployed, 'GET /reports')!.verdict).toBe('never-touched');
    expect(deployed.memberCounts!.endpoints).toMatchObject({
      'in-use': 1,
      'never-touched': 2,
      'insufficient-evidence': 1,
      retired: 1,
    });

    // For people: the never-called endpoints, then each bean's never-called methods; the gate fails on them.
    const text = ledgerCli(redis.url, []);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^never-called endpoints \(2 of 5\)$/m);
    expect(text.stdout).toMatch(/^ {2}http GET \/audit → ShopController\.audit \(main\.(js|ts):\d+\)$/m);
    expect(text.stdout).toMatch(/^ {2}not judged yet: http GET \/recommendations/m);
    expect(text.stdout).not.toMatch(/GET \/legacy →/);
    expect(text.stdout).toMatch(
      /^ {2}OrderService \(in-use\): 1 of 2 methods never called\n {4}cancel \(beans\.(js|ts):\d+\)$/m,
    );

    // SARIF: one result per never-touched method and endpoint, at its file and line; none for retired or new ones.
    const sarif = JSON.parse(ledgerCli(redis.url, ['--format', 'sarif']).stdout) as {
      runs: {
        results: {
          ruleId: string;
          locations: {
            physicalLocation?: { artifactLocation: { uri: string }; region: { startLine: number } };
            logicalLocations: { fullyQualifiedName: string }[];
          }[];
        }[];
      }[];
    };
    const results = sarif.runs[0]!.results.filter((r) => r.ruleId !== 'never-touched-bean');
    const named = results.map((r) => `${r.ruleId} ${r.locations[0]!.logicalLocations[0]!.fullyQualifiedName}`).sort();
    expect(named).toEqual(
      expect.arrayContaining([
        'never-touched-endpoint ShopController.audit',
        'never-touched-method OrderService.cancel',
      ]),
    );
    // a handler is its endpoint, once, as the check gate has it: GET /audit, not ShopController.audit beside it
    expect(named).not.toContain('never-touched-method ShopController.audit');
    expect(text.stdout).not.toMatch(/^ {4}audit /m);
    expect(named.join('\n')).not.toMatch(/legacy|recommendations|\.list$/m);
    const cancel = results.find(
      (r) => r.locations[0]!.logicalLocations[0]!.fullyQualifiedName === 'OrderService.cancel',
    )!;
    expect(cancel.locations[0]!.physicalLocation!.artifactLocation.uri).toMatch(/beans\.(js|ts)$/);
    expect(cancel.locations[0]!.physicalLocation!.region.startLine).toBeGreaterThan(0);
    // Run outside the application's folder, the contracts of TypeScript methods could not be read: the run says so.
    const notes = (
      (sarif.runs[0] as { invocations?: { toolExecutionNotifications: { message: { text: string } }[] }[] })
        .invocations?.[0]?.toolExecutionNotifications ?? []
    ).map((n) => n.message.text);
    if (/\.ts$/.test(cancel.locations[0]!.physicalLocation!.artifactLocation.uri))
      expect(notes).toEqual([expect.stringMatching(/^The methods' TypeScript files, such as \S+\.ts, are not under /)]);
    // named in compiled files only (this build has no maps): no interface can be read, and the note says so
    else
      expect(notes).toEqual([
        expect.stringMatching(/^The methods are named in their compiled files, such as \S+\.js: /),
      ]);
    // The JSON says the same, and the text's closing advice asks for that look before a method is deleted.
    const json = JSON.parse(ledgerCli(redis.url, ['--format', 'json']).stdout) as { contractsUnread?: string };
    expect(json.contractsUnread).toBe(notes[0]);
    expect(text.stdout).toMatch(
      /^No baseline given: .*; before deleting a method, look whether an interface or abstract class declares it \(not read here\)\.$/m,
    );

    // The gate: the new never-touched members fail it until accepted into the baseline.
    const cwd = tempDir('ledger-members-gate');
    expect(ledgerCli(redis.url, ['--baseline', 'b.json', '--update-baseline'], cwd).code).toBe(0);
    const accepted = JSON.parse(fs.readFileSync(path.join(cwd, 'b.json'), 'utf8')) as { members: string[] };
    expect(accepted.members).toEqual(expect.arrayContaining(['http GET /audit', 'OrderService#cancel']));
    expect(accepted.members).not.toContain('ShopController#audit');
    expect(accepted.members.join('\n')).not.toMatch(/legacy|recommendations/);
    const clean = ledgerCli(redis.url, ['--baseline', 'b.json'], cwd);
    expect(clean.code).toBe(0);
    // and says so, as check does: an exit 0 under the findings listed must not read as an oversight
    expect(clean.stdout).toMatch(/\nNo new findings: .*, all in b\.json\.\n$/);

    // {base}/diag/ledger of the v2 replica answers the same verdicts from the real ledger.
    const served = await getJson(actuatorPort(c), '/actuator/diag/ledger');
    expect(served.status).toBe(200);
    expect(verdictsOf(served.body as Answer)).toEqual(verdictsOf(answer(redis.url)!));
    expect(verdictsOf(served.body as Answer)).toMatchObject({
      'GET /orders': 'in-use',
      'GET /audit': 'never-touched',
      'GET /legacy': 'retired',
      'GET /recommendations': 'insufficient-evidence',
    });
  }, 150_000);

  it('member records lost from Redis (evicted): counted missing, and no method or endpoint is called never-touched', async () => {
    const redis = new RedisServer(bin, await freePort(), 'members-pw', []);
    servers.push(redis);
    await redis.start();
    const a = await app(redis.url, 'v1');
    expect((await getJson(a.port, '/orders')).status).toBe(200);
    const judgeNow = ['--min-days', '0', '--min-process-hours', '0'];
    const before = await until('the /orders use in the ledger', 15_000, async () => {
      const now = answer(redis.url, judgeNow);
      return endpoint(now, 'GET /orders')?.verdict === 'in-use' ? now : undefined;
    });
    expect(endpoint(before, 'GET /audit')!.verdict).toBe('never-touched');
    await redis.command('DEL', ...Array.from({ length: 512 }, (_, i) => `diag:ledger:{shop}:members:${i}`));
    const lost = answer(redis.url, judgeNow)!;
    expect((lost.provenance as { lostTouches?: number }).lostTouches).toBeGreaterThan(0);
    expect(endpoint(lost, 'GET /audit')!.verdict).toBe('insufficient-evidence');
    expect(method(lost, 'OrderService', 'cancel')!.verdict).toBe('insufficient-evidence');
    expect(lost.memberCounts!.methods['never-touched']).toBe(0);
  }, 60_000);
});
