import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EndpointRecord } from '../../../src/ghost/analysis/bean-graph';
import { Kept, keptBy, keptNames, keptPatterns, keptReason, schemaKeeps } from '../../../src/ghost/kept';
import {
  addMemberResults,
  beanLine,
  memberFindings,
  membersText,
  memberWords,
  runMemberFindings,
} from '../../../src/ghost/cli/members';
import { inBaseline, toSarif, writeBaseline, readBaseline } from '../../../src/ghost/cli/check';
import { thisProcessLedger } from '../../../src/ghost/ledger/answer';
import { classLine, methodLine, registrationLine } from '../../../src/ghost/member-source';
import { cronPeriodMs, endpointVerdicts, methodVerdicts } from '../../../src/ghost/member-verdicts';
import type { BeanEvidence } from '../../../src/ghost/verdicts';
import { GhostTracker } from '../../../src/ghost/tracking/tracker';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-27T12:00:00Z');
const thresholds = { minDays: 14, minProcessHours: 168 };
/**
 * One process's answer, thirty days and a thousand process-hours of tracking in: `beans` with `touched` (first call
 * each) and what the process knows of their members.
 */
const oneRun = (
  beans: Parameters<typeof thisProcessLedger>[1],
  touched: Parameters<typeof thisProcessLedger>[2],
  members?: Parameters<typeof thisProcessLedger>[9],
) => thisProcessLedger('svc', beans, touched, true, thresholds, NOW, NOW - 30 * DAY, 1000, undefined, members);
const bean = (over: Partial<BeanEvidence> = {}): BeanEvidence => ({
  name: 'Orders',
  ghostCandidate: false,
  tracked: true,
  firstSeen: NOW - 30 * DAY,
  processHours: 1000,
  live: true,
  lastTouched: NOW - DAY,
  ...over,
});

describe('method verdicts', () => {
  it("judge each method by the bean's rules and evidence, with the method's first call", () => {
    const calls = new Map<string, number | undefined>([
      ['list', NOW - DAY],
      ['purge', undefined],
    ]);
    expect(methodVerdicts(bean(), calls, thresholds, NOW).map((m) => [m.name, m.verdict])).toEqual([
      ['purge', 'never-touched'],
      ['list', 'in-use'],
    ]);
    // Young evidence: not yet a verdict.
    expect(methodVerdicts(bean({ firstSeen: NOW - DAY }), calls, thresholds, NOW)[0]!.verdict).toBe(
      'insufficient-evidence',
    );
    // A retired or untrackable bean's methods share its verdict.
    expect(methodVerdicts(bean({ live: false }), calls, thresholds, NOW).map((m) => m.verdict)).toEqual([
      'retired',
      'retired',
    ]);
  });
});

describe('inherited code shared by beans', () => {
  /** One run of tracked beans (`touched`: those called), each with `methods`, judged past the thresholds. */
  const run = (
    beans: ReadonlyArray<string | { name: string; className: string }>,
    touched: readonly string[],
    methodsOf: (bean: string) => Map<string, number | undefined>,
    source?: (bean: string, method: string) => { file: string; line: number },
  ) =>
    oneRun(
      beans.map((b) => ({
        ...(typeof b === 'string' ? { name: b } : b),
        ghostCandidate: false,
        tracked: true as const,
      })),
      new Map(touched.map((name) => [name, NOW - DAY])),
      { methodsOf, ...(source !== undefined ? { lookups: { source } } : {}) },
    );

  // Two repositories extend one base (a real app's SqlRepositoryBase, on a trial): its delete runs through one.
  const base = { file: 'src/libs/sql-repository.base.ts', line: 79 };
  const answer = () =>
    run(
      // a bean named otherwise than its class (a DI token) says its class
      ['UserRepository', 'WalletRepository', { name: 'AuditRepository', className: 'SqlAuditRepository' }],
      ['UserRepository', 'WalletRepository', 'AuditRepository'],
      (name) =>
        new Map<string, number | undefined>([
          ['delete', name === 'UserRepository' ? NOW - DAY : undefined],
          ['own', NOW - DAY],
          // the same name and line on one bean only, never called: a finding
          ...(name === 'AuditRepository' ? [['purge', undefined] as [string, undefined]] : []),
        ]),
      (bean, method) =>
        method === 'delete'
          ? base
          : method === 'purge'
            ? { file: 'src/audit.ts', line: 3 }
            : { file: `src/${bean}.ts`, line: 5 },
    );

  it('keeps each bean its own verdict, names the beans that ran the code, and makes it no finding', () => {
    const a = answer();
    const method = (bean: string, name: string) =>
      a.beans.find((b) => b.name === bean)!.methods!.find((m) => m.name === name)!;
    expect(method('WalletRepository', 'delete')).toEqual({
      name: 'delete',
      verdict: 'never-touched',
      source: base,
      calledThrough: ['UserRepository'],
    });
    expect(method('AuditRepository', 'delete').calledThrough).toEqual(['UserRepository']);
    expect(method('UserRepository', 'delete')).not.toHaveProperty('calledThrough');
    expect(method('AuditRepository', 'purge')).not.toHaveProperty('calledThrough');
    expect(memberFindings(a).map((f) => f.key)).toEqual(['AuditRepository#purge']);
    expect(a.memberCounts!.methods).toMatchObject({ 'never-touched': 1, shared: 2, 'in-use': 4 });
    const text = membersText(a);
    expect(text).toContain(
      '    delete() not called on this bean, but its shared code runs through UserRepository (src/libs/sql-repository.base.ts:79)',
    );
    expect(text).not.toMatch(/^ {4}delete /m);
    expect(text).toContain('  AuditRepository, class SqlAuditRepository (in-use): 1 of 3 methods never called\n');
    // one run's gate reads the same from the report's verdicts
    const report = { verdicts: a.beans, methods: {} };
    expect(runMemberFindings(report, new Set()).map((f) => f.key)).toEqual(['AuditRepository#purge']);
  });

  it('makes code no bean called one finding, under the first bean by name, naming the others', () => {
    // findAll of the same base, called through none of the three; AuditRepository never touched as a whole
    const a = run(
      ['WalletRepository', 'UserRepository', 'AuditRepository'],
      ['UserRepository', 'WalletRepository'],
      (name) =>
        new Map<string, number | undefined>([
          ['findAll', undefined],
          ['own', name === 'AuditRepository' ? undefined : NOW - DAY],
        ]),
      (bean, method) =>
        method === 'findAll' ? { file: 'src/base.ts', line: 49 } : { file: `src/${bean}.ts`, line: 5 },
    );
    const findings = memberFindings(a);
    expect(findings.map((f) => [f.key, f.alsoThrough])).toEqual([['UserRepository#findAll', ['WalletRepository']]]);
    expect(memberWords(findings[0]!)).toBe(
      'method UserRepository.findAll never called in any process, nor through WalletRepository (shared code) (src/base.ts:49)',
    );
    const text = membersText(a);
    expect(text).toContain('    findAll (src/base.ts:49) (shared code, never called through WalletRepository either)');
    expect(text).toContain('    findAll: the same code as UserRepository.findAll, listed there');
    // the bean never touched as a whole is its own finding: its methods are not listed again
    expect(text).not.toMatch(/AuditRepository/);
    const report = { verdicts: a.beans, methods: {} };
    expect(runMemberFindings(report, new Set(['AuditRepository'])).map((f) => [f.key, f.alsoThrough])).toEqual([
      ['UserRepository#findAll', ['WalletRepository']],
    ]);
  });

  it("says what goes with a registration: the bean from its module's providers, with the candidates that alone inject it", () => {
    const sarif = toSarif(
      'ghost-candidate',
      [
        {
          bean: 'UserModule/Logger',
          module: 'UserModule',
          className: 'Logger',
          source: 'src/user.module.ts',
          line: 46,
          registration: 'only',
          neededOnlyBy: ['CreateUserCliController'],
        },
      ],
      new Set(),
      '0.0.0',
    ) as any;
    const text: string = sarif.runs[0].results[0].message.text;
    // not "nothing injects", and never "remove it" alone: removed alone, the module no longer starts
    expect(text).toBe(
      'UserModule/Logger: bean created at startup that only the candidate CreateUserCliController injects; ' +
        "remove Logger from UserModule's providers (the line shown), together with CreateUserCliController, which alone injects it.",
    );
  });

  it('keeps shared code in a baseline when a bean that sorts earlier comes to share it (its key moves)', () => {
    const shared = (names: string[]) =>
      memberFindings(
        run(
          names,
          names,
          () =>
            new Map<string, number | undefined>([
              ['findAll', undefined],
              ['own', NOW - DAY],
            ]),
          (bean, method) =>
            method === 'findAll' ? { file: 'src/base.ts', line: 49 } : { file: `src/${bean}.ts`, line: 5 },
        ),
      ).map((member) => ({ bean: member.key, member }));
    const before = shared(['UserRepository', 'WalletRepository']);
    expect(before.map((f) => f.bean)).toEqual(['UserRepository#findAll']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-baseline-'));
    try {
      const file = path.join(dir, 'baseline.json');
      writeBaseline(file, 'never-touched-bean', before);
      const known = readBaseline(file, 'never-touched-bean');
      // AccountRepository joins the same code: the finding now stands under it, and is still accepted
      const after = shared(['UserRepository', 'WalletRepository', 'AccountRepository']);
      expect(after.map((f) => [f.bean, f.member.alsoThrough])).toEqual([
        ['AccountRepository#findAll', ['UserRepository', 'WalletRepository']],
      ]);
      expect(after.filter((f) => !inBaseline(known, f))).toEqual([]);
      // while other code of the same name elsewhere is not, nor a sharing bean's own method of that name later
      expect(known).toEqual(new Set(['UserRepository#findAll']));
      expect(inBaseline(known, { bean: 'OrderRepository#findAll' })).toBe(false);
      expect(inBaseline(known, { bean: 'WalletRepository#findAll' })).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never joins code it cannot place: a method without a source line stands alone', () => {
    const a = run(['A', 'B'], ['A', 'B'], (name) => new Map([['run', name === 'A' ? NOW - DAY : undefined]]));
    expect(memberFindings(a).map((f) => f.key)).toEqual(['B#run']);
  });
});

describe('endpoint verdicts', () => {
  const endpoints: EndpointRecord[] = [
    { kind: 'http', route: 'GET /api/v1/orders', bean: 'OrdersController', method: 'list' },
    { kind: 'http', route: 'DELETE /api/v1/orders/:id', bean: 'OrdersController', method: 'remove' },
    { kind: 'graphql', route: 'Query.orders', bean: 'OrdersResolver', method: 'orders' },
    {
      kind: 'cron',
      route: 'yearly-archive',
      bean: 'Jobs',
      method: 'archive',
      schedule: { cron: '0 0 1 1 *', nextAt: '2027-01-01T00:00:00.000Z' },
    },
    { kind: 'interval', route: 'heartbeat', bean: 'Jobs', method: 'beat', schedule: { everyMs: 60_000 } },
    { kind: 'http', route: 'POST /webhooks/partner', bean: 'OrdersController', method: 'webhook' },
    // A framework's own handler (Vendure's resolvers, on a trial): no bean of the application.
    { kind: 'graphql', route: 'Query.products', bean: 'ProductResolver', method: 'products' },
  ];
  const answer = () =>
    oneRun(
      [
        { name: 'OrdersController', ghostCandidate: false, tracked: true },
        { name: 'OrdersResolver', ghostCandidate: false, tracked: 'already-proxied' },
        { name: 'Jobs', ghostCandidate: false, tracked: true },
      ],
      new Map([
        ['OrdersController', NOW - DAY],
        ['Jobs', NOW - DAY],
      ]),
      {
        endpoints,
        methodsOf: (name) =>
          name === 'OrdersController'
            ? new Map<string, number | undefined>([
                ['list', NOW - DAY],
                ['remove', undefined],
                ['webhook', undefined],
              ])
            : name === 'Jobs'
              ? new Map<string, number | undefined>([
                  ['archive', undefined],
                  ['beat', undefined],
                ])
              : undefined,
        lookups: { keptEndpoint: (e) => keptBy(keptPatterns(['POST /webhooks/*=partner calls quarterly']), e.route) },
      },
    );

  it("take their handler method's verdict; a job rarer than the evidence window is never judged by silence", () => {
    const byRoute = Object.fromEntries(answer().endpoints!.map((e) => [e.route, e]));
    expect(byRoute['GET /api/v1/orders']!.verdict).toBe('in-use');
    expect(byRoute['DELETE /api/v1/orders/:id']!.verdict).toBe('never-touched');
    expect(byRoute['Query.orders']!.verdict).toBe('untrackable');
    // Not the application's to delete, so not judged (it stays in diag-report.json's inventory).
    expect(byRoute['Query.products']).toBeUndefined();
    expect(byRoute['yearly-archive']).toMatchObject({
      verdict: 'insufficient-evidence',
      nextAt: '2027-01-01T00:00:00.000Z',
      why: expect.stringMatching(/less often than the evidence window.*fires next at 2027-01-01/),
    });
    // Fires every minute: its silence over weeks is a verdict.
    expect(byRoute.heartbeat!.verdict).toBe('never-touched');
    expect(byRoute['POST /webhooks/partner']).toMatchObject({
      verdict: 'never-touched',
      kept: 'partner calls quarterly',
    });
  });

  it('never read silence where the endpoint was not served: its handler, and a bean with nothing served, untrackable', () => {
    const noTransport = 'its HTTP application connects no microservice (app.connectMicroservice)';
    const run = oneRun(
      [
        { name: 'ItemsController', ghostCandidate: false, tracked: true },
        { name: 'MessagesController', ghostCandidate: false, tracked: true },
      ],
      new Map([['ItemsController', NOW - DAY]]),
      {
        endpoints: [
          { kind: 'http', route: 'GET /items', bean: 'ItemsController', method: 'list' },
          { kind: 'http', route: 'DELETE /items/:id', bean: 'ItemsController', method: 'remove' },
          { kind: 'rpc', route: '{"cmd":"count"}', bean: 'ItemsController', method: 'count', unserved: noTransport },
          // a served route and an unserved pattern on one method: served, judged by its calls
          { kind: 'http', route: 'GET /items/total', bean: 'ItemsController', method: 'total' },
          { kind: 'rpc', route: '{"cmd":"total"}', bean: 'ItemsController', method: 'total', unserved: noTransport },
          { kind: 'rpc', route: '{"cmd":"sum"}', bean: 'MessagesController', method: 'sum', unserved: noTransport },
          { kind: 'rpc', route: 'item.created', bean: 'MessagesController', method: 'created', unserved: noTransport },
        ],
        methodsOf: (name) =>
          name === 'ItemsController'
            ? new Map<string, number | undefined>([
                ['list', NOW - DAY],
                ['remove', undefined],
                ['count', undefined],
                ['total', undefined],
              ])
            : new Map<string, number | undefined>([
                ['sum', undefined],
                ['created', undefined],
                ['format', undefined],
              ]),
      },
    );
    const bean = (name: string) => run.beans.find((b) => b.name === name)!;
    const methods = (name: string) => Object.fromEntries(bean(name).methods!.map((m) => [m.name, m.verdict]));
    expect(methods('ItemsController')).toEqual({
      remove: 'never-touched',
      total: 'never-touched',
      count: 'untrackable',
      list: 'in-use',
    });
    expect(bean('ItemsController').methods!.find((m) => m.name === 'count')!.why).toBe(
      `not served: ${noTransport}; no call could reach it, so its silence says nothing`,
    );
    expect(bean('ItemsController').verdict).toBe('in-use');
    // None of its endpoints served: the bean and every method of it, its helper `format` too, say nothing.
    expect(bean('MessagesController')).toMatchObject({
      verdict: 'untrackable',
      why: expect.stringMatching(/^its endpoints are not served: its HTTP application connects no microservice/),
    });
    expect(bean('MessagesController')).not.toHaveProperty('needs');
    expect(methods('MessagesController')).toEqual({
      created: 'untrackable',
      format: 'untrackable',
      sum: 'untrackable',
    });
    const endpoints = Object.fromEntries(run.endpoints!.map((e) => [e.route, e.verdict]));
    expect(endpoints).toEqual({
      'DELETE /items/:id': 'never-touched',
      'GET /items/total': 'never-touched',
      '{"cmd":"count"}': 'untrackable',
      '{"cmd":"sum"}': 'untrackable',
      '{"cmd":"total"}': 'untrackable',
      'GET /items': 'in-use',
      'item.created': 'untrackable',
    });
    expect(run.endpoints!.find((e) => e.route === '{"cmd":"total"}')!.why).toMatch(/^not served: its HTTP/);
    expect(run.counts).toMatchObject({ 'in-use': 1, untrackable: 1, 'never-touched': 0 });
    expect(run.memberCounts!.methods).toMatchObject({ untrackable: 4, 'never-touched': 2, 'in-use': 1 });
    // A bean only the unserved controller injects is reached through it alone: its silence says nothing either.
    const through = oneRun(
      [
        { name: 'MessagesController', ghostCandidate: false, tracked: true },
        { name: 'SumFormatter', ghostCandidate: false, tracked: true, reachedOnlyThrough: ['MessagesController'] },
        { name: 'Audit', ghostCandidate: false, tracked: true, reachedOnlyThrough: ['ItemsController'] },
      ],
      new Map(),
      {
        endpoints: [
          { kind: 'rpc', route: '{"cmd":"sum"}', bean: 'MessagesController', method: 'sum', unserved: noTransport },
          { kind: 'http', route: 'GET /items', bean: 'ItemsController', method: 'list' },
        ],
        methodsOf: (name) =>
          new Map<string, number | undefined>(name === 'SumFormatter' ? [['format', undefined]] : [['sum', undefined]]),
      },
    );
    expect(through.beans.find((b) => b.name === 'SumFormatter')).toMatchObject({
      verdict: 'untrackable',
      why: `only MessagesController injects it, and MessagesController's endpoints are not served: ${noTransport}; no call could reach it here, so its silence says nothing`,
      methods: [{ name: 'format', verdict: 'untrackable' }],
    });
    // Injected by a served bean: judged by its own calls.
    expect(through.beans.find((b) => b.name === 'Audit')!.verdict).toBe('never-touched');
    expect(through.counts).toMatchObject({ untrackable: 2, 'never-touched': 1 });
    // The ledger's text says where the endpoints not counted as never called went, with why.
    expect(membersText(run)).toContain(
      `never-called endpoints (2 of 7)\n  http DELETE /items/:id → ItemsController.remove\n  http GET /items/total → ItemsController.total\n` +
        `  untrackable (4): rpc item.created, rpc {"cmd":"count"}, rpc {"cmd":"sum"}, rpc {"cmd":"total"}: ` +
        `not served: ${noTransport}; no call could reach it, so its silence says nothing\n`,
    );
  });

  it('count methods and endpoints per verdict, kept ones apart', () => {
    const a = answer();
    expect(a.memberCounts!.endpoints).toMatchObject({
      'in-use': 1,
      'never-touched': 2,
      'insufficient-evidence': 1,
      untrackable: 1,
      kept: 1,
    });
    expect(a.memberCounts!.methods).toMatchObject({ 'in-use': 1, 'never-touched': 4, kept: 0 });
    expect(a.beans.find((b) => b.name === 'OrdersController')!.methods!.map((m) => m.name)).toEqual([
      'remove',
      'webhook',
      'list',
    ]);
  });

  it('without members, the answer has exactly its former shape', () => {
    const a = thisProcessLedger('svc', [], new Map(), true, thresholds, NOW, NOW, 1);
    expect(a).not.toHaveProperty('endpoints');
    expect(a).not.toHaveProperty('memberCounts');
  });

  it('estimate how often a cron fires, erring towards rarer', () => {
    expect(cronPeriodMs('0 0 1 1 *')).toBe(365 * DAY);
    expect(cronPeriodMs('0 0 0 1 */3 *')).toBe(93 * DAY);
    expect(cronPeriodMs('0 3 * * 1')).toBe(7 * DAY);
    expect(cronPeriodMs('*/5 * * * *')).toBe(3_600_000);
    expect(cronPeriodMs('not a cron')).toBeUndefined();
    const endpoint: EndpointRecord = {
      kind: 'cron',
      route: 'r',
      bean: 'B',
      method: 'm',
      schedule: { cron: '0 3 * * 1' },
    };
    expect(
      endpointVerdicts(
        [endpoint],
        [{ name: 'B', verdict: 'in-use', methods: [{ name: 'm', verdict: 'never-touched' }] }],
        thresholds,
      )[0]!.verdict,
    ).toBe('never-touched');
  });
});

describe('kept on purpose', () => {
  it('@Kept marks a method, or every method of a class, with its reason, at no cost to the method', () => {
    class Partner {
      sync(): number {
        return 1;
      }
      other(): number {
        return 2;
      }
    }
    const sync = Partner.prototype.sync;
    Kept('quarterly partner call')(
      Partner.prototype,
      'sync',
      Object.getOwnPropertyDescriptor(Partner.prototype, 'sync')!,
    );
    expect(Partner.prototype.sync).toBe(sync);
    expect(keptReason(Partner.prototype, 'sync')).toBe('quarterly partner call');
    expect(keptReason(Partner.prototype, 'other')).toBeUndefined();

    @Kept('disaster recovery')
    class Recovery {
      restore(): number {
        return 1;
      }
    }
    class SubRecovery extends Recovery {}
    expect(keptReason(SubRecovery.prototype, 'restore')).toBe('disaster recovery');

    const tracker = new GhostTracker();
    tracker.track('Partner', new Partner());
    expect(keptReason(tracker.prototypeOf('Partner'), 'sync')).toBe('quarterly partner call');
  });

  it('settings patterns match Bean#method, routes and kind:route, with or without a reason', () => {
    const patterns = keptPatterns(['Billing#export*=yearly audit', 'cron:dr-*', 'GET /admin/*']);
    expect(keptBy(patterns, 'Billing#exportAll')).toBe('yearly audit');
    expect(keptBy(patterns, 'Billing#import')).toBeUndefined();
    expect(keptBy(patterns, 'dr-restore', 'cron:dr-restore')).toBe('kept by diag.ghost-tracking.kept');
    expect(keptBy(patterns, 'GET /admin/users/:id')).toBeDefined();
    expect(keptBy(patterns, 'GET /administrators')).toBeUndefined();
  });

  it("keeps one API's GraphQL field by its path, and not the other API's", () => {
    const patterns = keptPatterns(['/shop-api Query.product=storefront preview']);
    const shop = { kind: 'graphql', route: 'Query.product', path: '/shop-api' };
    const admin = { kind: 'graphql', route: 'Query.product', path: '/admin-api' };
    expect(keptBy(patterns, ...keptNames(shop))).toBe('storefront preview');
    expect(keptBy(patterns, ...keptNames(admin))).toBeUndefined();
    // the kind-qualified form too, and a route alone still keeps both
    expect(keptBy(keptPatterns(['graphql:/admin-api *']), ...keptNames(admin))).toBe(
      'kept by diag.ghost-tracking.kept',
    );
    expect(keptBy(keptPatterns(['Query.product']), ...keptNames(shop), ...keptNames(admin))).toBeDefined();
  });

  it("keeps an API's only Query field, which its schema cannot build without, and no field of an API with two", () => {
    const graphql = (route: string, path: string | undefined, bean: string, method: string): EndpointRecord => ({
      kind: 'graphql',
      route,
      ...(path !== undefined ? { path } : {}),
      bean,
      method,
    });
    const endpoints: EndpointRecord[] = [
      // /ops: one placeholder query beside its mutations
      graphql('Query.health', '/ops', 'OpsResolver', 'health'),
      graphql('Mutation.restart', '/ops', 'OpsResolver', 'restart'),
      // /graphql: two queries, the framework's included
      graphql('Query.me', '/graphql', 'UserResolver', 'me'),
      graphql('Query.version', '/graphql', 'FrameworkResolver', 'version'),
      // the same field declared twice is still one field
      graphql('Query.ping', undefined, 'PingResolver', 'ping'),
      graphql('Query.ping', undefined, 'PingResolverV2', 'ping'),
      { kind: 'http', route: 'GET /health', bean: 'OpsResolver', method: 'health' },
    ];
    const keeps = schemaKeeps(endpoints);
    const reason = keeps.endpoint({ kind: 'graphql', route: 'Query.health', path: '/ops' });
    expect(reason).toBe(
      'the only Query field of /ops: a GraphQL schema needs one, so without it the schema does not build and the application does not start',
    );
    expect(keeps.method('OpsResolver', 'health')).toBe(reason);
    expect(keeps.endpoint({ kind: 'graphql', route: 'Mutation.restart', path: '/ops' })).toBeUndefined();
    expect(keeps.method('OpsResolver', 'restart')).toBeUndefined();
    // the same route on another API, or not GraphQL at all, is not that field
    expect(keeps.endpoint({ kind: 'graphql', route: 'Query.health', path: '/graphql' })).toBeUndefined();
    expect(keeps.endpoint({ kind: 'http', route: 'Query.health' })).toBeUndefined();
    expect(keeps.endpoint({ kind: 'graphql', route: 'Query.me', path: '/graphql' })).toBeUndefined();
    expect(keeps.method('UserResolver', 'me')).toBeUndefined();
    expect(keeps.endpoint({ kind: 'graphql', route: 'Query.ping' })).toMatch(
      /^the only Query field of the GraphQL API:/,
    );
    expect(keeps.method('PingResolverV2', 'ping')).toBeDefined();
    // no inventory, or an API of mutations only: nothing kept
    expect(schemaKeeps(undefined).endpoint({ kind: 'graphql', route: 'Query.x' })).toBeUndefined();
    expect(schemaKeeps([graphql('Mutation.a', '/m', 'M', 'a')]).method('M', 'a')).toBeUndefined();
  });
});

describe('method source', () => {
  it('finds the line of a method in its class, compiled or TypeScript', () => {
    const text = [
      'class Other {',
      '  archive() {}',
      '}',
      'class Orders {',
      '  constructor() {}',
      '  @Get()',
      '  public async list(): Promise<void> {}',
      '  async *stream() {}',
      '  archive(id) {',
      '  }',
      '}',
    ].join('\n');
    expect(methodLine(text, 'Orders', 'archive')).toBe(9);
    expect(methodLine(text, 'Orders', 'list')).toBe(7);
    expect(methodLine(text, 'Orders', 'stream')).toBe(8);
    expect(methodLine(text, 'Orders', 'missing')).toBeUndefined();
    // a whole bean's line: its class's declaration, compiled (`let X = class X {`) or not
    expect(classLine(text, 'Orders')).toBe(4);
    expect(classLine('"use strict";\nlet OrdersService = class OrdersService {', 'OrdersService')).toBe(2);
    expect(classLine(text, 'Order')).toBeUndefined();
  });

  it('finds where a module registers a token: the mention nearest its class, imports left out', () => {
    const ts = [
      "import { Logger, Module } from '@nestjs/common';",
      "import { UserService } from './user.service';",
      '@Module({',
      '  providers: [',
      '    UserService,',
      '    Logger,',
      "    { provide: 'WALLET.REPO', useClass: WalletRepository },",
      '  ],',
      '})',
      'export class UserModule {}',
      'export class OtherModule { logger = new Logger(); }',
    ].join('\n');
    // a providers array declared beside the module: the mention nearest its class
    expect(registrationLine('const shared = [Logger];\n\nclass M {}\n', 'M', 'Logger')).toBe(1);
    expect(registrationLine(ts, 'UserModule', 'Logger')).toBe(6);
    expect(registrationLine(ts, 'UserModule', 'WALLET.REPO')).toBe(7);
    expect(registrationLine(ts, 'UserModule', 'Missing')).toBeUndefined();
    // tsc's output registers below the class, in __decorate
    const js = [
      'const common_1 = require("@nestjs/common");',
      'let UserModule = class UserModule {',
      '};',
      'UserModule = __decorate([',
      '    (0, common_1.Module)({',
      '        providers: [user_service_1.UserService, common_1.Logger],',
      '    })',
      '], UserModule);',
    ].join('\n');
    expect(registrationLine(js, 'UserModule', 'Logger')).toBe(6);
    // another provider pointing at it (an alias, a factory's inject list) is not its registration, though nearer
    const pointers = [
      '@Module({',
      '  providers: [',
      '    Logger,',
      '    { provide: ConfigService, useFactory: (l: Logger) => new ConfigService(l), inject: [Logger] },',
      "    { provide: 'LOG', useExisting: Logger },",
      '  ],',
      '})',
      'export class AppModule {}',
    ].join('\n');
    expect(registrationLine(pointers, 'AppModule', 'Logger')).toBe(3);
    // unless nothing else names it
    expect(registrationLine(pointers.replace('    Logger,\n', ''), 'AppModule', 'Logger')).toBe(4);
  });

  it("stands for a whole bean by its class's line, else by its first method's in the same file", () => {
    expect(beanLine({ line: 4, methods: [{ name: 'a', source: { file: 'src/o.ts', line: 9 } }] }, 'src/o.ts')).toBe(4);
    const methods = [
      { name: 'inherited', source: { file: 'src/base.ts', line: 2 } },
      { name: 'archive', source: { file: 'src/o.ts', line: 12 } },
      { name: 'list', source: { file: 'src/o.ts', line: 9 } },
    ];
    expect(beanLine({ methods }, 'src/o.ts')).toBe(9);
    expect(beanLine({ methods: [] }, 'src/o.ts')).toBeUndefined();
  });
});

describe('the ledger command, below the beans', () => {
  const answer = oneRun(
    [{ name: 'OrdersController', ghostCandidate: false, tracked: true }],
    new Map([['OrdersController', NOW - DAY]]),
    {
      endpoints: [
        { kind: 'http', route: 'GET /orders', bean: 'OrdersController', method: 'list' },
        { kind: 'http', route: 'DELETE /orders/:id', bean: 'OrdersController', method: 'remove' },
        { kind: 'http', route: 'POST /dr/restore', bean: 'OrdersController', method: 'restore' },
      ],
      methodsOf: () =>
        new Map<string, number | undefined>([
          ['list', NOW - DAY],
          ['remove', undefined],
          ['restore', undefined],
          ['helper', undefined],
        ]),
      lookups: {
        source: (_bean, method) => ({ file: 'src/orders.controller.ts', line: method.length }),
        kept: (_bean, method) => (method === 'restore' ? 'disaster recovery' : undefined),
      },
    },
  );

  it('finds each never-touched method and endpoint once, kept ones left out, a handler as its endpoint', () => {
    // `remove` handles DELETE /orders/:id: one finding, under the route, as the check gate counts it
    expect(memberFindings(answer).map((f) => f.key)).toEqual(['http DELETE /orders/:id', 'OrdersController#helper']);
  });

  it('prints never-called endpoints, then never-called methods per bean, kept ones with their reason', () => {
    const text = membersText(answer);
    expect(text).toMatch(
      /never-called endpoints \(1 of 3\)\n {2}http DELETE \/orders\/:id → OrdersController\.remove \(src\/orders\.controller\.ts:6\)/,
    );
    expect(text).toMatch(/kept: http POST \/dr\/restore: disaster recovery/);
    expect(text).toMatch(/OrdersController \(in-use\): 1 of 1 methods never called\n {4}helper \(/);
    expect(text).not.toMatch(/^ {4}remove/m);
  });

  it("names a bean's module once in SARIF, also when the bean's name already carries it", () => {
    const sarif = toSarif(
      'never-touched-bean',
      [
        { bean: 'UserModule/Logger', module: 'UserModule', source: 'src/user.module.ts', line: 46 },
        { bean: 'Orders', module: 'ShopModule' },
      ],
      new Set(),
      '0.0.0',
    ) as { runs: Array<{ results: Array<{ message: { text: string }; partialFingerprints: object }> }> };
    expect(sarif.runs[0]!.results.map((r) => [r.message.text.split(':')[0], r.partialFingerprints])).toEqual([
      ['UserModule/Logger', { 'diagBean/v1': 'UserModule/Logger' }],
      ['Orders (ShopModule)', { 'diagBean/v1': 'ShopModule/Orders' }],
    ]);
  });

  it("points a run's registration at its line, or at its file when no line is known", () => {
    const sarif = toSarif(
      'untouched-bean',
      [
        { bean: 'UserModule/Logger', source: 'src/user.module.ts', line: 46, registration: 'only' },
        { bean: 'WalletModule/Logger', source: 'src/wallet.module.ts', registration: 'only' },
      ],
      new Set(),
      '0.0.0',
    ) as { runs: Array<{ results: Array<{ message: { text: string } }> }> };
    const texts = sarif.runs[0]!.results.map((r) => r.message.text);
    expect(texts[0]).toMatch(/; registered on the line shown/);
    expect(texts[1]).toMatch(/; registered in the file shown/);
  });

  it('gives SARIF one result per finding at its TypeScript line, new unless in the baseline', () => {
    const sarif = addMemberResults(
      toSarif('never-touched-bean', [], new Set(), '0.0.0'),
      memberFindings(answer),
      new Set(['OrdersController#helper']),
    ) as {
      runs: Array<{
        results: Array<{
          ruleId: string;
          baselineState: string;
          locations: Array<{ physicalLocation?: { artifactLocation: { uri: string }; region: { startLine: number } } }>;
        }>;
      }>;
    };
    const results = sarif.runs[0]!.results;
    expect(results.map((r) => [r.ruleId, r.baselineState])).toEqual([
      ['never-touched-endpoint', 'new'],
      ['never-touched-method', 'unchanged'],
    ]);
    expect(results[0]!.locations[0]!.physicalLocation).toEqual({
      artifactLocation: { uri: 'src/orders.controller.ts' },
      region: { startLine: 6 },
    });
  });
});

describe("the check gate's members of one run (runMemberFindings)", () => {
  const report = {
    untouched: ['DeadService'],
    methods: {
      ItemsService: { list: '2026-11-28T00:00:00.000Z', archive: null, nightly: null, yearly: null },
      DeadService: { run: null },
    },
    verdicts: [
      {
        name: 'ItemsService',
        verdict: 'in-use',
        methods: [
          { name: 'list', verdict: 'in-use', lastTouched: '2026-11-28T00:00:00.000Z' },
          { name: 'archive', verdict: 'insufficient-evidence', source: { file: 'src/items.service.ts', line: 9 } },
          { name: 'purge', verdict: 'insufficient-evidence', kept: 'disaster recovery' },
          { name: 'nightly', verdict: 'insufficient-evidence' },
          { name: 'yearly', verdict: 'insufficient-evidence' },
        ],
      },
      {
        name: 'DeadService',
        verdict: 'insufficient-evidence',
        methods: [{ name: 'run', verdict: 'insufficient-evidence' }],
      },
    ],
    endpoints: [
      { kind: 'cron', route: 'nightly', bean: 'ItemsService', method: 'nightly', verdict: 'insufficient-evidence' },
      {
        kind: 'cron',
        route: 'yearly',
        bean: 'ItemsService',
        method: 'yearly',
        verdict: 'insufficient-evidence',
        why: 'fires about every 1 year, less often than the evidence window of 14 days: its silence proves nothing',
      },
      { kind: 'http', route: 'GET /items', bean: 'ItemsService', method: 'list', verdict: 'in-use' },
    ],
  };

  it('lists what this run never called: not kept, not a rare job, not the methods of an untouched bean', () => {
    const found = runMemberFindings(report, new Set(['DeadService']));
    expect(found.map((f) => f.key)).toEqual(['cron nightly', 'ItemsService#archive']);
    expect(found.map(memberWords)).toEqual([
      'endpoint cron nightly never called in this run → ItemsService.nightly',
      'method ItemsService.archive never called in this run (src/items.service.ts:9)',
    ]);
  });

  it('reads a foreign or partial report without throwing', () => {
    expect(runMemberFindings({ verdicts: [null, { name: 1 }], endpoints: 'x' }, new Set())).toEqual([]);
  });
});
