import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { io } from 'socket.io-client';
import { freePort } from '../support/ports';
import { LOADING_CASES, startApp, TRACKED_ONE_RUN_ENV, waitFor, type RunningApp } from './support/app-process';

/**
 * The inventory of entry points in diag-report.json (`endpoints`), on real NestJS applications started as
 * processes (test/fixtures/apps/endpoints-app): every kind Nest has, each tied to its handler bean and method.
 * Each HTTP route of the inventory is then called through a real HTTP client and must reach the very method the
 * inventory names, so that the inventory cannot drift from what Nest serves.
 */

interface Endpoint {
  kind: string;
  route: string;
  bean: string;
  method: string;
  schedule?: { everyMs?: number; cron?: string; nextAt?: string };
}

/** The report's inventory, once the analysis (after ready) has written it. */
async function inventory(app: RunningApp): Promise<{ endpoints: Endpoint[]; generatedAt: string }> {
  let report: any;
  await waitFor(async () => {
    try {
      report = app.readReport();
    } catch {
      return false;
    }
    return Array.isArray(report.endpoints);
  }, 10_000);
  return report;
}

/** Calls one HTTP endpoint of the inventory as a client would: `:id` filled in, its version header if it says one. */
async function call(port: number, endpoint: Endpoint): Promise<{ status: number; handler: unknown }> {
  // (several versions: the last one named)
  const m = /^(\w+) (\S+)(?: \(header ([\w-]+): (?:\w+ or )*(\w+)\))?$/.exec(endpoint.route);
  if (!m) throw new Error(`unexpected route ${endpoint.route}`);
  const [, verb, path, header, version] = m;
  const res = await fetch(`http://127.0.0.1:${port}${path!.replace(':id', '7')}`, {
    method: verb,
    headers: header ? { [header]: version! } : {},
  });
  const text = await res.text();
  return {
    status: res.status,
    handler: text.startsWith('{') ? (JSON.parse(text) as { handler?: unknown }).handler : text,
  };
}

/** The first time at or after `from` (to the minute, seconds 0) that `fits` holds, in local time. */
function nextLocal(from: Date, fits: (d: Date) => boolean): string {
  const t = new Date(from.getTime());
  t.setSeconds(0, 0);
  t.setMinutes(t.getMinutes() + 1);
  while (!fits(t)) t.setMinutes(t.getMinutes() + 1);
  return t.toISOString();
}

describe('endpoint inventory on Express (nest11-cjs): every kind, routes as served', () => {
  let app: RunningApp;
  let rpcPort: number;

  beforeAll(async () => {
    rpcPort = await freePort();
    app = await startApp('nest11-cjs', { app: 'endpoints-app', env: { ENDPOINTS_RPC_PORT: String(rpcPort) } });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('lists every entry point with its handler bean and method, jobs with their schedule', async () => {
    const { endpoints, generatedAt } = await inventory(app);
    const at = new Date(generatedAt);
    // computed here minute by minute, independently of the package's cron reader (seconds and all)
    const yearly = nextLocal(
      at,
      (d) => d.getMonth() === 0 && d.getDate() === 1 && d.getHours() === 0 && d.getMinutes() === 0,
    );
    const weekly = nextLocal(at, (d) => d.getDay() === 1 && d.getHours() === 4 && d.getMinutes() === 30);
    const tokyo = nextLocal(at, (d) => d.getUTCHours() === 0 && d.getUTCMinutes() === 0);
    expect(endpoints).toEqual([
      { kind: 'http', route: 'GET /api/admin/users', bean: 'AdminUsersController', method: 'list' },
      { kind: 'http', route: 'GET /api/items/legacy', bean: 'ItemsController', method: 'legacy' },
      { kind: 'http', route: 'GET /api/v1/items/:id', bean: 'ItemsController', method: 'findOne' },
      { kind: 'http', route: 'GET /api/v1/items/batch', bean: 'ItemsController', method: 'batch' },
      { kind: 'http', route: 'GET /api/v1/items/find', bean: 'ItemsController', method: 'search' },
      { kind: 'http', route: 'GET /api/v1/items/search', bean: 'ItemsController', method: 'search' },
      { kind: 'http', route: 'GET /api/v2/items/:id', bean: 'ItemsController', method: 'findOneV2' },
      { kind: 'http', route: 'GET /api/v3/items/batch', bean: 'ItemsController', method: 'batch' },
      { kind: 'http', route: 'GET /health', bean: 'HealthController', method: 'check' },
      { kind: 'http', route: 'POST /api/v1/items/import', bean: 'ItemsController', method: 'importItems' },
      { kind: 'graphql', route: 'Item.owner', path: '/graphql', bean: 'ItemResolver', method: 'owner' },
      { kind: 'graphql', route: 'Mutation.importItems', path: '/graphql', bean: 'ItemResolver', method: 'importItems' },
      { kind: 'graphql', route: 'Query.items', path: '/graphql', bean: 'ItemResolver', method: 'items' },
      { kind: 'rpc', route: 'item.created', bean: 'MessagesController', method: 'itemCreated' },
      { kind: 'rpc', route: '{"cmd":"sum","v":1}', bean: 'MessagesController', method: 'sum' },
      { kind: 'ws', route: 'chat', bean: 'ChatGateway', method: 'chat' },
      { kind: 'event', route: 'item.imported', bean: 'AuditListener', method: 'onItemImported' },
      { kind: 'event', route: 'order.created', bean: 'AuditListener', method: 'onOrderCreated' },
      {
        kind: 'cron',
        route: 'JobsService.weeklyCleanup',
        bean: 'JobsService',
        method: 'weeklyCleanup',
        schedule: { cron: '0 30 4 * * 1', nextAt: weekly },
      },
      {
        kind: 'cron',
        route: 'tokyo-morning',
        bean: 'JobsService',
        method: 'tokyoMorning',
        schedule: { cron: '0 0 9 * * *', nextAt: tokyo },
      },
      {
        kind: 'cron',
        route: 'yearly-report',
        bean: 'JobsService',
        method: 'yearlyReport',
        schedule: { cron: '0 0 1 1 *', nextAt: yearly },
      },
      {
        kind: 'interval',
        route: 'heartbeat',
        bean: 'JobsService',
        method: 'heartbeat',
        schedule: { everyMs: 3_600_000 },
      },
      { kind: 'timeout', route: 'JobsService.warmUp', bean: 'JobsService', method: 'warmUp' },
      { kind: 'cqrs', route: 'CreateItemCommand', bean: 'CreateItemHandler', method: 'execute' },
      { kind: 'cqrs', route: 'GetItemQuery', bean: 'GetItemHandler', method: 'execute' },
      { kind: 'cqrs', route: 'ItemCreatedEvent', bean: 'ItemEventsHandler', method: 'handle' },
      { kind: 'cqrs', route: 'ItemImportedEvent', bean: 'ItemEventsHandler', method: 'handle' },
    ]);
    // every handler is a bean of the report, under the report's name
    const beans = new Set(app.readReport().graph.nodes.map((n: { name: string }) => n.name));
    for (const e of endpoints) expect(beans.has(e.bean)).toBe(true);
  });

  it('each HTTP route of the inventory is served at that path and reaches that method', async () => {
    const { endpoints } = await inventory(app);
    const http = endpoints.filter((e) => e.kind === 'http');
    expect(http.length).toBeGreaterThan(0);
    for (const e of http) {
      const answer = await call(app.port, e);
      expect({ route: e.route, status: answer.status, handler: answer.handler }).toEqual({
        route: e.route,
        status: e.route.startsWith('POST') ? 201 : 200,
        handler: e.method,
      });
    }
    // and not where the prefix or the version would be missing, or where the exclusion takes the prefix off
    for (const path of ['/v1/items/7', '/api/items/7', '/api/health', '/admin/users']) {
      expect({ path, status: (await fetch(`http://127.0.0.1:${app.port}${path}`)).status }).toEqual({
        path,
        status: 404,
      });
    }
  });

  it('the other transports answer under the names the inventory gives them', async () => {
    const { endpoints } = await inventory(app);
    const route = (kind: string, method: string) =>
      endpoints.find((e) => e.kind === kind && e.method === method)!.route;
    const graphql = await fetch(`http://127.0.0.1:${app.port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ items { id owner } }' }),
    });
    expect(route('graphql', 'items')).toBe('Query.items');
    expect(await graphql.json()).toEqual({ data: { items: [{ id: '1', owner: 'owner of 1' }] } });

    const client: ClientProxy = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: rpcPort },
    });
    try {
      await client.connect();
      expect(await firstValueFrom(client.send(JSON.parse(route('rpc', 'sum')), [1, 2, 3]))).toBe(6);
    } finally {
      await client.close();
    }

    const socket = io(`http://127.0.0.1:${app.port}`, { transports: ['websocket'], reconnection: false });
    try {
      const echoed = new Promise<unknown>((resolve) => socket.once('chat', resolve));
      socket.emit(route('ws', 'chat'), 'hello');
      expect(await echoed).toBe('hello');
    } finally {
      socket.close();
    }
  });
});

describe('an HTTP application that connects no microservice (nest11-cjs): its patterns are not served', () => {
  let app: RunningApp | undefined;
  afterAll(async () => {
    await app?.stop();
  });

  it('marks them unserved, and never reads their silence: the patterns, their handlers and their bean say nothing', async () => {
    app = await startApp('nest11-cjs', {
      app: 'endpoints-app',
      env: { ...TRACKED_ONE_RUN_ENV, ENDPOINTS_NO_MICROSERVICE: '1' },
    });
    const { endpoints } = await inventory(app);
    const reason = 'its HTTP application connects no microservice (app.connectMicroservice)';
    expect(endpoints.filter((e) => e.kind === 'rpc')).toEqual([
      { kind: 'rpc', route: 'item.created', bean: 'MessagesController', method: 'itemCreated', unserved: reason },
      { kind: 'rpc', route: '{"cmd":"sum","v":1}', bean: 'MessagesController', method: 'sum', unserved: reason },
    ]);
    // Everything else is served as in the application with its microservice.
    expect(endpoints.filter((e) => e.kind !== 'rpc' && 'unserved' in e)).toEqual([]);
    await app.stop();

    const ghosts = app.readReport('diag-ghost-report.json');
    const messages = ghosts.verdicts.find((v: { name: string }) => v.name === 'MessagesController');
    expect(messages).toMatchObject({
      verdict: 'untrackable',
      why: `its endpoints are not served: ${reason}; no call could reach them, so its silence says nothing`,
    });
    expect(messages.methods.map((m: { name: string; verdict: string }) => `${m.name}:${m.verdict}`)).toEqual([
      'itemCreated:untrackable',
      'sum:untrackable',
    ]);
    // What only the controller injects is reached through its patterns alone: no verdict of its own either.
    expect(ghosts.verdicts.find((v: { name: string }) => v.name === 'SumCalculator')).toMatchObject({
      verdict: 'untrackable',
      why: `only MessagesController injects it, and MessagesController's endpoints are not served: ${reason}; no call could reach it here, so its silence says nothing`,
    });
    const judged = (kind: string) =>
      ghosts.endpoints
        .filter((e: { kind: string }) => e.kind === kind)
        .map((e: { route: string; verdict: string; why?: string }) => `${e.route}: ${e.verdict}: ${e.why}`);
    const why = `not served: ${reason}; no call could reach it, so its silence says nothing`;
    expect(judged('rpc')).toEqual([`item.created: untrackable: ${why}`, `{"cmd":"sum","v":1}: untrackable: ${why}`]);
    // A served route nobody called is still a finding.
    expect(ghosts.endpoints.find((e: { route: string }) => e.route === 'GET /health').verdict).toBe('never-touched');
    // The API's one Query field, never called here, is what its schema cannot build without: kept, with that reason,
    // on the endpoint and on its handler method; the mutation beside it is a finding as any route.
    const schemaReason =
      'the only Query field of /graphql: a GraphQL schema needs one, so without it the schema does not build and the application does not start';
    expect(ghosts.endpoints.find((e: { route: string }) => e.route === 'Query.items')).toMatchObject({
      verdict: 'never-touched',
      kept: schemaReason,
    });
    const items = ghosts.verdicts.find((v: { name: string }) => v.name === 'ItemResolver');
    expect(items.methods.find((m: { name: string }) => m.name === 'items')).toMatchObject({ kept: schemaReason });
    // Its resolver, never called as a whole, stays with it: deleting the class deletes the field (a trial of
    // domain-driven-hexagon removed such a resolver and the application stopped starting).
    expect(items).toMatchObject({ verdict: 'never-touched', kept: `with its method items: ${schemaReason}` });
    expect(ghosts.endpoints.find((e: { route: string }) => e.route === 'Mutation.importItems')).not.toHaveProperty(
      'kept',
    );
    // The check gate on this run follows the verdicts: neither the controller nor its patterns are a finding.
    const cli = path.resolve(__dirname, '..', '..', 'dist', 'ghost', 'cli', 'index.js');
    const gate = spawnSync(
      process.execPath,
      [cli, 'check', path.join(app.reportDir, 'diag-ghost-report.json'), '--format', 'sarif'],
      { encoding: 'utf8' },
    );
    const results = (JSON.parse(gate.stdout) as { runs: Array<{ results: unknown[] }> }).runs[0]!.results;
    expect(results.length).toBeGreaterThan(0);
    expect(results.map((r) => JSON.stringify(r)).filter((r) => r.includes('MessagesController'))).toEqual([]);
    const findings = results.map((r) => JSON.stringify(r));
    expect(findings.filter((r) => r.includes('Query.items'))).toEqual([]);
    expect(findings.filter((r) => r.includes('untouched-bean') && r.includes('ItemResolver'))).toEqual([]);
    // and the text says why the resolver nobody called is not listed
    const text = spawnSync(process.execPath, [cli, 'check', path.join(app.reportDir, 'diag-ghost-report.json')], {
      encoding: 'utf8',
    });
    expect(text.stdout).toContain(`\nkept, no finding: ItemResolver (with its method items: ${schemaReason})\n`);
    expect(findings.filter((r) => r.includes('Mutation.importItems'))).not.toEqual([]);
  });
});

describe('endpoint inventory on Fastify (nest11-cjs): header versioning said in words', () => {
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp('nest11-cjs', { app: 'endpoints-app', env: { ENDPOINTS_PLATFORM: 'fastify' } });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('lists the routes as served, each version by its header, and each reaches its method', async () => {
    const { endpoints } = await inventory(app);
    expect(endpoints).toEqual([
      { kind: 'http', route: 'GET /api/admin/users', bean: 'AdminUsersController', method: 'list' },
      {
        kind: 'http',
        route: 'GET /api/items/:id (header X-API-Version: 1)',
        bean: 'ItemsController',
        method: 'findOne',
      },
      {
        kind: 'http',
        route: 'GET /api/items/:id (header X-API-Version: 2)',
        bean: 'ItemsController',
        method: 'findOneV2',
      },
      {
        kind: 'http',
        route: 'GET /api/items/batch (header X-API-Version: 1 or 3)',
        bean: 'ItemsController',
        method: 'batch',
      },
      {
        kind: 'http',
        route: 'GET /api/items/find (header X-API-Version: 1)',
        bean: 'ItemsController',
        method: 'search',
      },
      {
        kind: 'http',
        route: 'GET /api/items/legacy (header X-API-Version: neutral)',
        bean: 'ItemsController',
        method: 'legacy',
      },
      {
        kind: 'http',
        route: 'GET /api/items/search (header X-API-Version: 1)',
        bean: 'ItemsController',
        method: 'search',
      },
      { kind: 'http', route: 'GET /health', bean: 'HealthController', method: 'check' },
      {
        kind: 'http',
        route: 'POST /api/items/import (header X-API-Version: 1)',
        bean: 'ItemsController',
        method: 'importItems',
      },
    ]);
    for (const e of endpoints) {
      // a version-neutral route is the one served without the header
      const answer = await call(app.port, { ...e, route: e.route.replace(' (header X-API-Version: neutral)', '') });
      expect({ route: e.route, status: answer.status, handler: answer.handler }).toEqual({
        route: e.route,
        status: e.route.startsWith('POST') ? 201 : 200,
        handler: e.method,
      });
    }
  });
});

describe('endpoint inventory of a schema-first GraphQL API (nest11-cjs, sketch-graphql-app)', () => {
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp('nest11-cjs', { app: 'sketch-graphql-app' });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it("names each field by the schema's type and field, from @Resolver('Query') and @Query('…')", async () => {
    const { endpoints } = await inventory(app);
    expect(endpoints.filter((e) => e.bean === 'QuotaResolver')).toEqual([
      { kind: 'graphql', route: 'Query.open', path: '/graphql', bean: 'QuotaResolver', method: 'open' },
      { kind: 'graphql', route: 'Query.quota', path: '/graphql', bean: 'QuotaResolver', method: 'quota' },
      { kind: 'graphql', route: 'Query.search', path: '/graphql', bean: 'QuotaResolver', method: 'search' },
    ]);
  });
});

describe.each(LOADING_CASES)('endpoint inventory of the example shop (%s)', (loading) => {
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp(loading);
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('is the same on every NestJS and module format: routes, an inherited @Cron, an @Interval, an @OnEvent', async () => {
    const { endpoints, generatedAt } = await inventory(app);
    const nightly = nextLocal(new Date(generatedAt), (d) => d.getHours() === 3 && d.getMinutes() === 0);
    expect(endpoints).toEqual([
      { kind: 'http', route: 'GET /billing', bean: 'BillingController', method: 'bill' },
      { kind: 'http', route: 'GET /users', bean: 'UsersController', method: 'list' },
      { kind: 'http', route: 'GET /users/lookup', bean: 'UsersController', method: 'lookup' },
      { kind: 'http', route: 'GET /users/order', bean: 'UsersController', method: 'order' },
      { kind: 'http', route: 'POST /users/login', bean: 'UsersController', method: 'login' },
      { kind: 'event', route: 'order.created', bean: 'AuditListener', method: 'onOrder' },
      {
        kind: 'cron',
        route: 'NightlyJob.nightly',
        bean: 'NightlyJob',
        method: 'nightly',
        schedule: { cron: '0 0 3 * * *', nextAt: nightly },
      },
      { kind: 'interval', route: 'HeartbeatJob.beat', bean: 'HeartbeatJob', method: 'beat', schedule: { everyMs: 50 } },
    ]);
    expect((await fetch(`http://127.0.0.1:${app.port}/users`)).status).toBe(200);
  });
});
