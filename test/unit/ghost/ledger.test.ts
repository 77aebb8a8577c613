/**
 * The ghost ledger's pure parts: the stored inventory, the code version, the service a process speaks for, the
 * keys and touch records, the answer and the CLI's table, the fleet metrics. Redis itself is exercised by
 * test/e2e/ledger (a real redis-server, and a real cluster).
 */
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { ledgerText } from '../../../src/ghost/cli/ledger';
import { memberFindings } from '../../../src/ghost/cli/members';
import type { EndpointRecord } from '../../../src/ghost/analysis/bean-graph';
import { schemaKeeps } from '../../../src/ghost/kept';
import { judgedBy, ledgerAnswer, thisProcessLedger, type LedgerProvenance } from '../../../src/ghost/ledger/answer';
import { ledgerIdentity } from '../../../src/ghost/ledger/identity';
import {
  decodeInventory,
  encodeInventory,
  inventoryDigest,
  inventoryVersion,
  type Inventory,
} from '../../../src/ghost/ledger/inventory';
import { ledgerKeys, parseTouchRecord, TOUCH_BUCKETS } from '../../../src/ghost/ledger/keys';
import { DiagMetrics } from '../../../src/telemetry/metrics';
import { ATTRIBUTES, METRICS } from '../../../src/telemetry/names';
import { collect, metric, TestReader } from '../telemetry/helpers';

const DAY = 86_400_000;

const inventory = (tracking = true): Inventory => ({
  framework: 'nestjs',
  tracking,
  beans: [
    {
      name: 'OrderService',
      module: 'ShopModule',
      source: 'src/order.service.ts',
      ghostCandidate: false,
      tracked: true,
    },
    { name: 'AuditTrail', module: 'ShopModule', className: 'AuditTrailService', ghostCandidate: true, tracked: true },
    { name: 'CONFIG', module: 'ShopModule', ghostCandidate: false, tracked: 'no-methods' },
  ],
});

describe('the stored inventory', () => {
  it('round-trips every field, deflated', () => {
    const bytes = encodeInventory(inventory());
    expect(decodeInventory(bytes)).toEqual(inventory());
    expect(bytes.length).toBeLessThan(JSON.stringify(inventory()).length);
  });

  it('refuses bytes that are not an inventory', () => {
    expect(() => decodeInventory(Buffer.from('not deflated'))).toThrow();
  });

  it('names the content by digest, and the code version by which beans exist where, not how they were watched', () => {
    const tracked = encodeInventory(inventory(true));
    const untracked = encodeInventory(inventory(false));
    expect(inventoryDigest(tracked)).not.toBe(inventoryDigest(untracked));
    expect(inventoryVersion(inventory(true))).toBe(inventoryVersion(inventory(false)));
    const renamed = {
      ...inventory(),
      beans: [...inventory().beans.slice(1), { ...inventory().beans[0]!, name: 'Orders' }],
    };
    expect(inventoryVersion(renamed)).not.toBe(inventoryVersion(inventory()));
    expect(inventoryVersion(inventory())).toMatch(/^inv-[0-9a-f]{12}$/);
  });
});

describe('the service a process speaks for', () => {
  it('takes the setting, else the SDK resource, else OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES', () => {
    const env = { OTEL_SERVICE_NAME: 'from-env', OTEL_RESOURCE_ATTRIBUTES: 'service.name=attr,service.version=1%2E2' };
    expect(ledgerIdentity('configured', { serviceName: 'resource' }, env).serviceName).toBe('configured');
    expect(ledgerIdentity(undefined, { serviceName: 'resource' }, env).serviceName).toBe('resource');
    expect(ledgerIdentity(undefined, undefined, env)).toEqual({ serviceName: 'from-env', serviceVersion: '1.2' });
    expect(ledgerIdentity(undefined, undefined, { OTEL_RESOURCE_ATTRIBUTES: 'a=b, service.name = attr ' })).toEqual({
      serviceName: 'attr',
    });
  });

  it("never takes the SDK's default unknown_service as a name: unrelated services would share a ledger", () => {
    expect(ledgerIdentity(undefined, { serviceName: 'unknown_service:node' }, {})).toEqual({});
    expect(ledgerIdentity('  ', undefined, {})).toEqual({});
  });
});

describe('the keys', () => {
  it('share one hash tag per service, the service percent-encoded so a brace cannot move it', () => {
    const k = ledgerKeys('shop{a}');
    expect(k.meta).toBe('diag:ledger:{shop%7Ba%7D}:meta');
    expect(k.touchBuckets).toHaveLength(TOUCH_BUCKETS);
    for (const key of [k.procs, k.inventory('abc'), k.touchBucket('OrderService'), ...k.touchBuckets]) {
      expect(key.startsWith('diag:ledger:{shop%7Ba%7D}:')).toBe(true);
    }
    expect(k.touchBuckets).toContain(k.touchBucket('OrderService'));
  });

  it('parses a touch record, and refuses a malformed one', () => {
    expect(parseTouchRecord('1700000000000|1699999990000|2|1,2')).toEqual({
      lastTouched: 1700000000000,
      processStartedAt: 1699999990000,
      version: '2',
      versions: ['1', '2'],
    });
    expect(parseTouchRecord('garbage')).toBeUndefined();
  });
});

const provenance = (over: Partial<LedgerProvenance> = {}): LedgerProvenance => ({
  source: 'redis',
  ledger: 'redis://redis:6379',
  since: new Date(Date.UTC(2026, 10, 1)).toISOString(),
  processes: 12,
  liveProcesses: 3,
  processHours: 500,
  trackedProcesses: 12,
  untrackedProcessHours: 0,
  versions: 2,
  lastWriteAgoMs: 12_000,
  reset: false,
  silent: false,
  versionDetails: [],
  ...over,
});

describe('the answer and its table', () => {
  const now = Date.UTC(2026, 10, 25);
  const answer = (over: Partial<LedgerProvenance> = {}) =>
    ledgerAnswer(
      'shop',
      [
        {
          name: 'Used',
          ghostCandidate: false,
          tracked: true,
          lastTouched: now - DAY,
          firstSeen: now - 20 * DAY,
          processHours: 500,
          live: true,
          touchedIn: ['v1'],
        },
        {
          name: 'Dead',
          module: 'M',
          source: 'src/dead.ts',
          ghostCandidate: true,
          tracked: true,
          firstSeen: now - 20 * DAY,
          processHours: 500,
          live: true,
        },
        { name: 'New', ghostCandidate: false, tracked: true, firstSeen: now - 2 * DAY, processHours: 40, live: true },
        {
          name: 'Gone',
          ghostCandidate: false,
          tracked: true,
          firstSeen: now - 20 * DAY,
          processHours: 100,
          live: false,
        },
      ],
      // a settings group with its URL: only the numbers may come out
      judgedBy({ minDays: 14, minProcessHours: 168, url: 'redis://:s3cret@redis:6379' } as never, 'service'),
      provenance(over),
      now,
    );

  it('says where a bean stands at its registration, and whether only the registration goes', () => {
    const dead = { ghostCandidate: false, tracked: true, firstSeen: now - 20 * DAY, processHours: 500, live: true };
    const text = ledgerText(
      ledgerAnswer(
        'shop',
        [
          { ...dead, name: 'Logger', module: 'M', source: 'src/m.module.ts', line: 9, registered: true },
          {
            ...dead,
            name: 'Hidden',
            module: 'M',
            source: 'src/m.module.ts',
            line: 10,
            registered: true,
            classFileUnknown: true,
          },
        ],
        judgedBy({ minDays: 14, minProcessHours: 168 }, 'service'),
        provenance(),
        now,
      ),
      false,
    );
    expect(text).toContain(
      "  Logger (M, registered at src/m.module.ts:9): never called on any process that had it; remove Logger from M's providers (the line shown)",
    );
    expect(text).toContain(
      "  Hidden (M, registered at src/m.module.ts:10): never called on any process that had it; remove Hidden from M's providers (the line shown) (its class's file was not found: a class no module exports, or a library's); if the class is the application's, delete it too",
    );
  });

  it('keeps a never-called bean holding a kept member, says why, and leaves its other never-called methods findings', () => {
    const dead = { ghostCandidate: false, tracked: true, firstSeen: now - 20 * DAY, processHours: 500, live: true };
    const endpoints: EndpointRecord[] = [
      { kind: 'graphql', route: 'Query.health', path: '/ops', bean: 'OpsResolver', method: 'health' },
      { kind: 'graphql', route: 'Mutation.restart', path: '/ops', bean: 'OpsResolver', method: 'restart' },
    ];
    const schema = schemaKeeps(endpoints);
    const never = (...names: string[]) => new Map(names.map((n): [string, number | undefined] => [n, undefined]));
    const a = ledgerAnswer(
      'shop',
      [
        {
          ...dead,
          name: 'OpsResolver',
          module: 'OpsModule',
          source: 'src/ops.resolver.ts',
          methods: never('health', 'restart', 'stale'),
        },
        { ...dead, name: 'Dead', module: 'M', source: 'src/dead.ts', methods: never('run') },
      ],
      judgedBy({ minDays: 14, minProcessHours: 168 }, 'service'),
      provenance(),
      now,
      { endpoints, lookups: { kept: schema.method, keptEndpoint: schema.endpoint } },
    );
    const reason =
      'with its method health: the only Query field of /ops: a GraphQL schema needs one, so without it the schema does not build and the application does not start';
    expect(a.beans.map((b) => [b.name, b.verdict, b.kept])).toEqual([
      ['Dead', 'never-touched', undefined],
      ['OpsResolver', 'never-touched', reason],
    ]);
    // The bean is no finding; its mutation and its other never-called method are, each; the kept field is not.
    expect(memberFindings(a).map((f) => f.key)).toEqual(['graphql /ops Mutation.restart', 'OpsResolver#stale']);
    const text = ledgerText(a, false);
    expect(text).toContain(
      `  OpsResolver (OpsModule, src/ops.resolver.ts): never called on any process that had it; kept: ${reason}`,
    );
    expect(text).not.toContain('remove OpsResolver');
    expect(text).toContain('\nnever-touched (2, 1 kept)\n');
    expect(text).toContain('  Dead (M, src/dead.ts): never called on any process that had it');
  });

  it('judges each bean, counts the verdicts, and carries only the thresholds, and whose they are', () => {
    const a = answer();
    expect(a.beans.map((b) => [b.name, b.verdict])).toEqual([
      ['Dead', 'never-touched'],
      ['New', 'insufficient-evidence'],
      ['Used', 'in-use'],
      ['Gone', 'retired'],
    ]);
    expect(a.counts).toEqual({
      'never-touched': 1,
      dormant: 0,
      'insufficient-evidence': 1,
      untrackable: 0,
      'in-use': 1,
      retired: 1,
    });
    expect(a.thresholds).toEqual({
      minDays: 14,
      minProcessHours: 168,
      minTrackedShare: 1,
      lastUseResolutionMs: DAY,
      source: 'service',
    });
    expect(JSON.stringify(a)).not.toContain('s3cret');
    expect(a.beans.find((b) => b.name === 'New')!.needs).toEqual({ days: 12, processHours: 128 });
  });

  it('prints provenance first, never-touched first, in-use summarised, and flags silence and a reset', () => {
    const text = ledgerText(answer(), false);
    expect(text).toMatch(/^ghost ledger of shop at redis:\/\/redis:6379\n/);
    expect(text).toContain('(24 days): 12 processes, 2 versions; 500 process-hours of tracking');
    expect(text).toContain('last write 12 s ago from 3 live processes');
    expect(text).toContain(
      "judged by the service's thresholds (the strictest its processes state): 14 days of evidence",
    );
    expect(text.indexOf('never-touched (1)')).toBeLessThan(text.indexOf('in-use (1)'));
    // what a ghost candidate adds is the verdict's own words (`why`), not said a second time beside them
    expect(text).toContain('  Dead (M, src/dead.ts): never called');
    expect(text).not.toContain('also a ghost candidate');
    // every verdict line carries its own evidence, in plain units
    expect(text).toMatch(/ {6}evidence: since 2026-11-05T00:00:00.000Z \(20 days\); 500 process-hours of tracking/);
    expect(text).toContain('a verdict needs 12 days more and 128 process-hours more of tracking');
    expect(text).toContain('1 bean used within the window (--all lists them)');
    expect(text).not.toMatch(/production|first touch|0\.00 days/);
    expect(ledgerText(answer(), true)).toMatch(
      / {2}Used: last used 1 day ago \(2026-11-24T00:00:00.000Z\); used in v1/,
    );
    const silent = ledgerText(
      answer({ silent: true, liveProcesses: 0, reset: true, resetAt: '2026-11-20T00:00:00.000Z' }),
      false,
    );
    expect(silent).toMatch(/WARNING: the service has gone silent \(no live process\)/);
    // its evidence ends at its last write, as each bean's does (a trial read 104 s in the header, 48 s per bean)
    const quiet = ledgerText(answer({ silent: true, liveProcesses: 0, lastWriteAgoMs: 4 * 24 * 3600 * 1000 }), false);
    expect(quiet).toContain('(20 days, to its last write)');
    expect(silent).toMatch(/NOTE: the ledger was found emptied at 2026-11-20T00:00:00.000Z/);
  });

  it('answers one run in the same shape: this process, its uptime as evidence', () => {
    const a = thisProcessLedger(
      'shop',
      inventory().beans,
      new Map([['OrderService', now]]),
      true,
      { minDays: 0, minProcessHours: 0 },
      now,
      now - 3_600_000,
      1,
    );
    expect(a.provenance).toMatchObject({ source: 'this-process', processes: 1, liveProcesses: 1, processHours: 1 });
    expect(a.beans.map((b) => [b.name, b.verdict])).toEqual([
      ['AuditTrail', 'never-touched'],
      ['CONFIG', 'untrackable'],
      ['OrderService', 'in-use'],
    ]);
  });
});

describe('the fleet metrics', () => {
  it('report the verdict counts, live processes, write failures and the last write age', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const now = Date.now();
    const answer = ledgerAnswer(
      'shop',
      [{ name: 'Dead', ghostCandidate: true, tracked: true, firstSeen: now - 20 * DAY, processHours: 500, live: true }],
      judgedBy({ minDays: 14, minProcessHours: 168 }, 'service'),
      provenance(),
      now,
    );
    const metrics = new DiagMetrics({
      report: () => undefined,
      ghosts: () => undefined,
      sketches: () => undefined,
      ledger: () => ({
        status: {
          service: 'shop',
          address: 'redis://redis:6379',
          failures: 2,
          pendingTouches: 0,
          degraded: false,
          lastWriteAt: now - 5_000,
        },
        answer,
      }),
    });
    try {
      metrics.install(provider.getMeter('test'));
      const data = await collect(reader);
      const beans = metric(data, METRICS.ghostFleetBeans.name);
      expect(Object.fromEntries(beans.dataPoints.map((p) => [p.attributes[ATTRIBUTES.ghostVerdict], p.value]))).toEqual(
        {
          'never-touched': 1,
          dormant: 0,
          'insufficient-evidence': 0,
          untrackable: 0,
          'in-use': 0,
          retired: 0,
        },
      );
      expect(metric(data, METRICS.ghostFleetLiveProcesses.name).dataPoints[0]!.value).toBe(3);
      expect(metric(data, METRICS.ghostFleetWriteFailures.name).dataPoints[0]!.value).toBe(2);
      expect(metric(data, METRICS.ghostFleetLastWriteAge.name).dataPoints[0]!.value).toBeGreaterThanOrEqual(5);
    } finally {
      metrics.uninstall();
      await provider.shutdown();
    }
  });
});

describe('the member metrics', () => {
  it('report methods and endpoints per kind and verdict, kept ones apart', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const zero = {
      'in-use': 0,
      dormant: 0,
      'never-touched': 0,
      'insufficient-evidence': 0,
      untrackable: 0,
      retired: 0,
      kept: 0,
    };
    const metrics = new DiagMetrics({
      report: () => undefined,
      ghosts: () => undefined,
      sketches: () => undefined,
      members: () => ({
        methods: { ...zero, 'in-use': 7, 'never-touched': 3, kept: 1, shared: 2 },
        endpoints: { ...zero, 'never-touched': 2 },
      }),
    });
    try {
      metrics.install(provider.getMeter('test'));
      const data = await collect(reader);
      const points = metric(data, METRICS.ghostMembers.name).dataPoints.map(
        (p) =>
          `${String(p.attributes[ATTRIBUTES.ghostMemberKind])} ${String(p.attributes[ATTRIBUTES.ghostVerdict])} ${String(p.value)}`,
      );
      expect(points).toEqual(
        expect.arrayContaining([
          'method in-use 7',
          'method never-touched 3',
          'method kept 1',
          'method shared 2',
          'endpoint never-touched 2',
        ]),
      );
    } finally {
      metrics.uninstall();
      await provider.shutdown();
    }
  });
});
