/**
 * Methods and endpoints in the ghost ledger (issue #43), its pure parts: the inventory's encoding of them, the member
 * records' names and buckets, and the reader's merge over variants (ledger/members.ts) judged by the answer. Redis
 * itself is exercised by test/e2e/ledger/members.test.ts.
 */
import type { EndpointRecord } from '../../../src/ghost/analysis/bean-graph';
import { judgedBy, ledgerAnswer, type LedgerProvenance } from '../../../src/ghost/ledger/answer';
import {
  decodeInventory,
  encodeInventory,
  inventoryDigest,
  inventoryVersion,
  withMembers,
  type Inventory,
  type InventoryBean,
} from '../../../src/ghost/ledger/inventory';
import { ledgerKeys, MEMBER_BUCKETS, memberId, TOUCH_BUCKETS } from '../../../src/ghost/ledger/keys';
import { mergeMembers, type VariantView } from '../../../src/ghost/ledger/members';

const DAY = 86_400_000;
const T0 = Date.parse('2026-11-01T00:00:00Z');

const shop = (methods: string[]): InventoryBean => ({
  name: 'ShopController',
  module: 'ShopModule',
  source: 'dist/shop.controller.js',
  ghostCandidate: false,
  tracked: true,
  methods: methods.map((name, i) => ({ name, source: { file: 'src/shop.controller.ts', line: 10 + i * 5 } })),
});

const http = (route: string, method: string): EndpointRecord => ({
  kind: 'http',
  route,
  bean: 'ShopController',
  method,
});

describe('the inventory with members', () => {
  it('round-trips methods (line, file, kept) and endpoints (schedule, kept), deflated', () => {
    const inventory: Inventory = {
      framework: 'nestjs',
      tracking: true,
      beans: [
        {
          ...shop(['audit', 'list']),
          line: 8,
          methods: [
            { name: 'audit', source: { file: 'src/shop.controller.ts', line: 12 }, kept: 'quarterly partner call' },
            { name: 'list', source: { file: 'src/shop.controller.ts', line: 20 } },
            { name: 'inherited', source: { file: 'src/base.controller.ts', line: 3 } },
            { name: 'unlocated' },
          ],
        },
        { name: 'CONFIG', ghostCandidate: false, tracked: 'no-methods' },
        { name: 'ArchiveRepository', ghostCandidate: true, neededOnlyBy: ['ArchiveService'], tracked: true },
        {
          name: 'Logger',
          source: 'src/user.module.ts',
          line: 46,
          registered: true,
          ghostCandidate: true,
          tracked: true,
        },
        {
          name: 'UnexportedHelper',
          source: 'src/user.module.ts',
          line: 47,
          registered: true,
          classFileUnknown: true,
          ghostCandidate: true,
          tracked: true,
        },
      ],
      endpoints: [
        http('GET /orders', 'list'),
        { kind: 'cron', route: 'yearly', bean: 'ShopController', method: 'audit', schedule: { cron: '0 0 1 1 *' } },
        { kind: 'interval', route: 'poll', bean: 'ShopController', method: 'list', schedule: { everyMs: 5000 } },
        { ...http('GET /audit', 'audit'), kept: 'disaster recovery' },
      ],
    };
    const bytes = encodeInventory(inventory);
    expect(decodeInventory(bytes)).toEqual(inventory);
    // A class's methods share one file: named once per bean.
    expect(JSON.stringify(decodeInventory(bytes)).split('src/shop.controller.ts').length - 1).toBe(2);
  });

  it('keeps the watched methods of tracked beans and the application’s endpoints, never a moving next fire time', () => {
    const beans: InventoryBean[] = [
      { name: 'ShopController', ghostCandidate: false, tracked: true },
      { name: 'Untracked', ghostCandidate: false, tracked: 'no-methods' },
    ];
    const endpoints = (nextAt: string): EndpointRecord[] => [
      {
        kind: 'cron',
        route: 'nightly',
        bean: 'ShopController',
        method: 'audit',
        schedule: { cron: '0 3 * * *', nextAt },
      },
      { kind: 'graphql', route: 'Query.framework', bean: 'FrameworkResolver', method: 'resolve' },
    ];
    const facts = {
      methodsOf: (bean: string) => (bean === 'ShopController' ? ['list', 'audit'] : ['never']),
      source: (_bean: string, method: string) => ({ file: 'src/shop.ts', line: method.length }),
      kept: (_bean: string, method: string) => (method === 'audit' ? 'yearly audit' : undefined),
    };
    const early = withMembers(beans, endpoints('2026-11-02T03:00:00.000Z'), facts);
    const later = withMembers(beans, endpoints('2026-11-03T03:00:00.000Z'), facts);
    expect(early.beans[0]!.methods).toEqual([
      { name: 'audit', source: { file: 'src/shop.ts', line: 5 }, kept: 'yearly audit' },
      { name: 'list', source: { file: 'src/shop.ts', line: 4 } },
    ]);
    expect(early.beans[1]!.methods).toBeUndefined();
    expect(early.endpoints).toEqual([
      {
        kind: 'cron',
        route: 'nightly',
        bean: 'ShopController',
        method: 'audit',
        schedule: { cron: '0 3 * * *' },
        kept: 'yearly audit',
      },
    ]);
    // Replicas started a day apart hold one inventory, not one each.
    const inv = (m: typeof early): Inventory => ({ framework: 'nestjs', tracking: true, ...m });
    expect(inventoryDigest(encodeInventory(inv(early)))).toBe(inventoryDigest(encodeInventory(inv(later))));
  });

  it('makes a deploy that changes routes a new code version, not one that only watches differently', () => {
    const base: Inventory = {
      framework: 'nestjs',
      tracking: true,
      beans: [shop(['list'])],
      endpoints: [http('GET /a', 'list')],
    };
    const untracked: Inventory = { ...base, tracking: false, beans: [{ ...shop([]), methods: undefined }] };
    expect(inventoryVersion(untracked)).toBe(inventoryVersion(base));
    expect(inventoryVersion({ ...base, endpoints: [http('GET /b', 'list')] })).not.toBe(inventoryVersion(base));
  });
});

describe('the member records', () => {
  it('are named by a short digest of bean#member, the same in every process, in their own buckets', () => {
    const id = memberId('OrderService', 'list');
    expect(id).toEqual(memberId('OrderService', 'list'));
    expect(id.field).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(memberId('OrderService', 'cancel')).not.toEqual(id);
    const k = ledgerKeys('shop');
    expect(k.memberRecord('OrderService', 'list')).toEqual({
      bucket: `diag:ledger:{shop}:members:${id.bucket}`,
      field: id.field,
    });
    expect(k.memberBuckets).toHaveLength(MEMBER_BUCKETS);
    expect(new Set([...k.memberBuckets, ...k.touchBuckets]).size).toBe(MEMBER_BUCKETS + TOUCH_BUCKETS);
  });

  it('spread 30,000 methods so that every bucket stays in the compact encoding (under 128 fields)', () => {
    const verbs = ['find', 'create', 'update', 'remove', 'list', 'count', 'export', 'import', 'sync', 'validate'];
    const perBucket = new Array<number>(MEMBER_BUCKETS).fill(0);
    const fields = new Set<string>();
    for (let b = 0; b < 3000; b++) {
      for (const verb of verbs) {
        const id = memberId(`Feature${b % 150}Service${b}`, `${verb}Item${b % 7}`);
        perBucket[id.bucket]!++;
        fields.add(`${id.bucket}/${id.field}`);
      }
    }
    expect(fields.size).toBe(30_000);
    expect(Math.max(...perBucket)).toBeLessThan(128);
  });
});

describe("the reader's merge of members over variants", () => {
  const v1: VariantView = {
    version: 'v1',
    firstSeen: T0,
    hours: 48,
    processes: 2,
    current: false,
    inventory: {
      framework: 'nestjs',
      tracking: true,
      beans: [shop(['audit', 'legacy', 'list'])],
      endpoints: [http('GET /orders', 'list'), http('GET /audit', 'audit'), http('GET /legacy', 'legacy')],
    },
  };
  const v2: VariantView = {
    version: 'v2',
    firstSeen: T0 + 20 * DAY,
    hours: 24,
    processes: 1,
    current: true,
    inventory: {
      framework: 'nestjs',
      tracking: true,
      beans: [shop(['audit', 'list', 'recommend'])],
      endpoints: [http('GET /orders', 'list'), http('GET /audit', 'audit'), http('GET /recs', 'recommend')],
    },
  };
  const now = T0 + 22 * DAY;
  const uses: Record<string, number> = { list: now - DAY, legacy: T0 + DAY };
  const lastUse = (bean: string, member: string) => (bean === 'ShopController' ? uses[member] : undefined);
  const provenance: LedgerProvenance = {
    source: 'redis',
    since: new Date(T0).toISOString(),
    processes: 3,
    liveProcesses: 1,
    processHours: 72,
    trackedProcesses: 3,
    untrackedProcessHours: 0,
    versions: 2,
    lastWriteAgoMs: 0,
    reset: false,
    silent: false,
    versionDetails: [],
  };

  function judge(variants: VariantView[], lost = 0) {
    const merged = mergeMembers(variants, lastUse, now);
    const methods = merged.methodsOf('ShopController')!;
    return ledgerAnswer(
      'shop',
      [
        {
          name: 'ShopController',
          ghostCandidate: false,
          tracked: true,
          firstSeen: T0,
          processHours: 72,
          live: true,
          lastTouched: now - DAY,
          methods: methods.calls,
          methodFacts: methods.facts,
        },
      ],
      judgedBy({ minDays: 14, minProcessHours: 10 }, 'service'),
      { ...provenance, ...(lost > 0 ? { lostTouches: lost } : {}) },
      now,
      { endpoints: merged.endpoints!, lookups: merged.lookups, endpointFacts: merged.endpointFacts },
    );
  }

  it('keeps one GraphQL field of two APIs apart: stored with its path, merged and judged as two endpoints', () => {
    const field = (path: string): EndpointRecord => ({
      kind: 'graphql',
      route: 'Query.product',
      path,
      bean: 'ShopController',
      method: 'list',
    });
    const apis: VariantView = {
      ...v2,
      inventory: { ...v2.inventory, endpoints: [field('/shop-api'), field('/admin-api')] },
    };
    expect(decodeInventory(encodeInventory(apis.inventory)).endpoints).toEqual([
      field('/shop-api'),
      field('/admin-api'),
    ]);
    // a deploy that moves a field to another API is another version
    expect(inventoryVersion(apis.inventory)).not.toBe(
      inventoryVersion({ ...apis.inventory, endpoints: [field('/shop-api'), field('/other-api')] }),
    );
    const merged = mergeMembers([apis], lastUse, now);
    expect(merged.endpoints).toEqual([field('/shop-api'), field('/admin-api')]);
    expect(merged.endpointFacts(field('/admin-api'))).toMatchObject({ versions: ['v2'], live: true });
    expect(judge([apis]).endpoints!.map((e) => `${e.path} ${e.route}`)).toEqual([
      '/admin-api Query.product',
      '/shop-api Query.product',
    ]);
  });

  it('judges each method and endpoint on the variants that had it: used, never, removed, added', () => {
    const merged = mergeMembers([v2, v1], lastUse, now);
    const facts = merged.methodsOf('ShopController')!.facts;
    expect(facts.get('list')).toMatchObject({
      firstSeen: T0,
      versions: ['v1', 'v2'],
      processes: { total: 3, tracked: 3 },
      live: true,
    });
    expect(facts.get('legacy')).toMatchObject({ versions: ['v1'], live: false });
    expect(facts.get('recommend')).toMatchObject({ firstSeen: T0 + 20 * DAY, processHours: 24, live: true });

    const answer = judge([v2, v1]);
    const methods = Object.fromEntries(answer.beans[0]!.methods!.map((m) => [m.name, m.verdict]));
    expect(methods).toEqual({
      list: 'in-use',
      audit: 'never-touched',
      legacy: 'retired',
      recommend: 'insufficient-evidence',
    });
    expect(answer.beans[0]!.methods!.find((m) => m.name === 'audit')!.source).toEqual({
      file: 'src/shop.controller.ts',
      line: 10,
    });
    const endpoints = Object.fromEntries(answer.endpoints!.map((e) => [e.route, e.verdict]));
    expect(endpoints).toEqual({
      'GET /orders': 'in-use',
      'GET /audit': 'never-touched',
      'GET /legacy': 'retired',
      'GET /recs': 'insufficient-evidence',
    });
    expect(answer.endpoints!.find((e) => e.route === 'GET /legacy')!.why).toMatch(/does not serve it any more/);
    expect(answer.memberCounts!.endpoints).toMatchObject({
      'in-use': 1,
      'never-touched': 1,
      retired: 1,
      'insufficient-evidence': 1,
    });
  });

  it('counts only the variants that served an endpoint, for it and for a method that only handles it', () => {
    const noTransport = 'its HTTP application connects no microservice (app.connectMicroservice)';
    const noHttp = 'this process runs a microservice, which serves no HTTP';
    const rpc = (unserved?: string): EndpointRecord => ({
      kind: 'rpc',
      route: '{"cmd":"sum"}',
      bean: 'ShopController',
      method: 'sum',
      ...(unserved !== undefined ? { unserved } : {}),
    });
    // The HTTP API, which connects no microservice, and a worker (a microservice) of the same code.
    const api: VariantView = {
      ...v2,
      version: 'v2',
      firstSeen: T0,
      inventory: {
        ...v2.inventory,
        beans: [shop(['audit', 'list', 'sum'])],
        endpoints: [http('GET /orders', 'list'), http('GET /audit', 'audit'), rpc(noTransport)],
      },
    };
    const worker: VariantView = {
      ...api,
      firstSeen: T0 + 2 * DAY,
      hours: 48,
      processes: 2,
      inventory: {
        ...api.inventory,
        endpoints: [
          { ...http('GET /orders', 'list'), unserved: noHttp },
          { ...http('GET /audit', 'audit'), unserved: noHttp },
          rpc(),
        ],
      },
    };
    // stored and read back with its reason
    expect(decodeInventory(encodeInventory(api.inventory)).endpoints).toContainEqual(rpc(noTransport));

    // The API alone: nothing served the pattern, so its handler and the pattern say nothing.
    const alone = judge([api]);
    expect(alone.endpoints!.find((e) => e.kind === 'rpc')).toMatchObject({
      verdict: 'untrackable',
      why: `not served: ${noTransport}; no call could reach it, so its silence says nothing`,
    });
    expect(alone.beans[0]!.methods!.find((m) => m.name === 'sum')).toMatchObject({ verdict: 'untrackable' });
    expect(alone.beans[0]!.methods!.find((m) => m.name === 'audit')!.verdict).toBe('never-touched');

    // With the worker: the pattern is judged on the worker's processes only, and so is its handler; the routes on
    // the API's only (the worker does not serve them).
    const merged = mergeMembers([worker, api], lastUse, now);
    expect(merged.endpoints!.find((e) => e.kind === 'rpc')).toEqual(rpc());
    expect(merged.endpointFacts(rpc())).toMatchObject({ processes: { total: 2, tracked: 2 }, processHours: 48 });
    expect(merged.endpointFacts(http('GET /audit', 'audit'))).toMatchObject({
      processes: { total: 1, tracked: 1 },
      processHours: 24,
    });
    const facts = merged.methodsOf('ShopController')!.facts;
    expect(facts.get('sum')).toMatchObject({ processes: { total: 2, tracked: 2 }, firstSeen: T0 + 2 * DAY });
    expect(facts.get('audit')).toMatchObject({ processes: { total: 1, tracked: 1 }, firstSeen: T0 });
    const both = judge([worker, api]);
    expect(both.endpoints!.find((e) => e.kind === 'rpc')!.verdict).toBe('never-touched');
    expect(both.beans[0]!.methods!.find((m) => m.name === 'sum')!.verdict).toBe('never-touched');
    // Each variant served some endpoint of the controller: every process counts for the bean itself.
    expect(merged.beanFacts('ShopController')).toBeUndefined();

    // A bean whose only endpoints a variant did not serve: judged as a bean on the variants that served them.
    const messages: InventoryBean = { name: 'MessagesController', ghostCandidate: false, tracked: true };
    const only = (v: VariantView, e: EndpointRecord): VariantView => ({
      ...v,
      inventory: { ...v.inventory, beans: [...v.inventory.beans, messages], endpoints: [...v.inventory.endpoints!, e] },
    });
    const pattern = { ...rpc(), bean: 'MessagesController', route: '{"cmd":"count"}', method: 'count' };
    const apiOnly = only(api, { ...pattern, unserved: noTransport });
    expect(mergeMembers([apiOnly], lastUse, now).beanFacts('MessagesController')).toBeUndefined();
    expect(mergeMembers([only(worker, pattern), apiOnly], lastUse, now).beanFacts('MessagesController')).toMatchObject({
      firstSeen: T0 + 2 * DAY,
      processHours: 48,
      processes: { total: 2, tracked: 2 },
      versions: ['v2'],
    });
    // So is a bean only that controller injects, where the controller's endpoints were not served.
    const formatter: InventoryBean = {
      name: 'SumFormatter',
      ghostCandidate: false,
      tracked: true,
      reachedOnlyThrough: ['MessagesController'],
    };
    const withFormatter = (v: VariantView): VariantView => ({
      ...v,
      inventory: { ...v.inventory, beans: [...v.inventory.beans, formatter] },
    });
    expect(decodeInventory(encodeInventory(withFormatter(apiOnly).inventory)).beans).toContainEqual(formatter);
    expect(
      mergeMembers([withFormatter(only(worker, pattern)), withFormatter(apiOnly)], lastUse, now).beanFacts(
        'SumFormatter',
      ),
    ).toMatchObject({ processHours: 48, processes: { total: 2, tracked: 2 } });
  });

  it('a route a deploy added to an old method starts its evidence at that deploy', () => {
    const v3: VariantView = {
      ...v2,
      version: 'v3',
      firstSeen: now - DAY,
      inventory: { ...v2.inventory, endpoints: [...v2.inventory.endpoints!, http('GET /audit/v2', 'audit')] },
    };
    const answer = judge([v3, { ...v2, current: false }, v1]);
    const added = answer.endpoints!.find((e) => e.route === 'GET /audit/v2')!;
    expect(added.verdict).toBe('insufficient-evidence');
    expect(added.why).toMatch(/a verdict needs 13 days more/);
    expect(answer.endpoints!.find((e) => e.route === 'GET /audit')!.verdict).toBe('never-touched');
  });

  it('counts a variant that did not tell the methods apart as processes whose calls were not seen', () => {
    const dark: VariantView = {
      ...v2,
      version: 'v2',
      hours: 24,
      processes: 1,
      inventory: {
        framework: 'nestjs',
        tracking: false,
        beans: [{ ...shop([]), methods: undefined }],
        endpoints: v2.inventory.endpoints!,
      },
    };
    const answer = judge([v2, dark, v1]);
    const audit = answer.beans[0]!.methods!.find((m) => m.name === 'audit')!;
    expect(audit.verdict).toBe('insufficient-evidence');
    const facts = mergeMembers([v2, dark, v1], lastUse, now).methodsOf('ShopController')!.facts.get('audit')!;
    expect(facts.processes).toEqual({ total: 4, tracked: 3 });
    expect(facts.untrackedProcessHours).toBe(24);
    expect(answer.endpoints!.find((e) => e.route === 'GET /audit')!.verdict).toBe('insufficient-evidence');
  });

  it('says no method or endpoint never-touched while member records are missing', () => {
    const answer = judge([v2, v1], 1);
    expect(answer.beans[0]!.methods!.find((m) => m.name === 'audit')!.verdict).toBe('insufficient-evidence');
    expect(answer.endpoints!.find((e) => e.route === 'GET /audit')!.verdict).toBe('insufficient-evidence');
  });

  it('gives a cron job read from the ledger its next fire time as of now', () => {
    const cron: VariantView = {
      ...v2,
      inventory: {
        ...v2.inventory,
        endpoints: [
          { kind: 'cron', route: 'yearly', bean: 'ShopController', method: 'audit', schedule: { cron: '0 0 1 1 *' } },
        ],
      },
    };
    const [job] = mergeMembers([cron], lastUse, now).endpoints!;
    expect(Date.parse(job!.schedule!.nextAt!)).toBeGreaterThan(now);
  });
});
