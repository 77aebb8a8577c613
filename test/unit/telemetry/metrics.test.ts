import { DataPointType, MeterProvider } from '@opentelemetry/sdk-metrics';
import { ATTRIBUTES, METRICS } from '../../../src/telemetry/names';
import type { SketchRegistryView } from '../../../src/sketch/types';
import type { SyncEvent } from '../../../src/sketch/stores/types';
import {
  collect,
  harness,
  metric,
  PriceCalculator,
  quietLogs,
  startApp,
  TestReader,
  UsersService,
  value,
} from './helpers';

let logs: ReturnType<typeof quietLogs>;
beforeEach(() => (logs = quietLogs()));
afterEach(() => logs.restore());

describe('ghost metrics', () => {
  it('reports every count as a gauge with its unit, read from the live tracker at each collection', async () => {
    const h = harness();
    try {
      const app = startApp(h.detector);
      let metrics = await collect(h.reader);
      for (const spec of [
        METRICS.ghostCandidates,
        METRICS.ghostTracked,
        METRICS.ghostTouched,
        METRICS.ghostUntouched,
        METRICS.ghostUntrackable,
        METRICS.ghostFrameworkSkipped,
      ]) {
        const m = metric(metrics, spec.name);
        expect(m.dataPointType).toBe(DataPointType.GAUGE);
        expect(m.descriptor.unit).toBe('{bean}');
        expect(m.descriptor.description).toBe(spec.description);
      }
      // LegacyReportService is the only orphan without an entry point; the controller is an entry point.
      expect(h.detector.diagReport()!.ghostCandidates.beans).toEqual(['LegacyReportService']);
      expect(value(metrics, METRICS.ghostCandidates.name)).toBe(1);
      expect(value(metrics, METRICS.ghostTracked.name)).toBe(4);
      expect(value(metrics, METRICS.ghostTouched.name)).toBe(0);
      expect(value(metrics, METRICS.ghostUntouched.name)).toBe(4);
      expect(value(metrics, METRICS.ghostUntrackable.name)).toBe(1); // FrozenThing: final-class
      expect(value(metrics, METRICS.ghostFrameworkSkipped.name)).toBe(1);

      app.controller.get(); // touches the controller, UsersService and PriceCalculator
      metrics = await collect(h.reader);
      expect(value(metrics, METRICS.ghostTouched.name)).toBe(3);
      expect(value(metrics, METRICS.ghostUntouched.name)).toBe(1);
      const snapshot = h.detector.tracker!.snapshot();
      expect(value(metrics, METRICS.ghostTracked.name)).toBe(snapshot.trackedCount);
      expect(value(metrics, METRICS.ghostTouched.name)).toBe(snapshot.touchedCount);
    } finally {
      await h.cleanup();
    }
  });

  it('reports each tracked bean as 0 or 1 with its name, module and candidate flag', async () => {
    const h = harness();
    try {
      const app = startApp(h.detector);
      app.users.list();
      const m = metric(await collect(h.reader), METRICS.beanTouched.name);
      expect(m.dataPointType).toBe(DataPointType.GAUGE);
      expect(m.descriptor.unit).toBe('1');
      const points = m.dataPoints
        .map((p) => ({ attributes: p.attributes, value: p.value }))
        .sort((a, b) =>
          String(a.attributes[ATTRIBUTES.beanName]).localeCompare(String(b.attributes[ATTRIBUTES.beanName])),
        );
      expect(points).toEqual([
        {
          attributes: {
            [ATTRIBUTES.beanName]: 'LegacyReportService',
            [ATTRIBUTES.beanModule]: 'AppModule',
            [ATTRIBUTES.beanGhostCandidate]: true,
          },
          value: 0,
        },
        {
          attributes: {
            [ATTRIBUTES.beanName]: 'PriceCalculator',
            [ATTRIBUTES.beanModule]: 'UsersModule',
            [ATTRIBUTES.beanGhostCandidate]: false,
          },
          value: 1,
        },
        {
          attributes: {
            [ATTRIBUTES.beanName]: 'UsersController',
            [ATTRIBUTES.beanModule]: 'UsersModule',
            [ATTRIBUTES.beanGhostCandidate]: false,
          },
          value: 0,
        },
        {
          attributes: {
            [ATTRIBUTES.beanName]: 'UsersService',
            [ATTRIBUTES.beanModule]: 'UsersModule',
            [ATTRIBUTES.beanGhostCandidate]: false,
          },
          value: 1,
        },
      ]);
    } finally {
      await h.cleanup();
    }
  });

  it('reports no bean before the start-up report names its module: a series without it would stay beside the named one', async () => {
    const h = harness();
    try {
      // tracked and touched before the analysis after ready has written the report (lazy names, an early scrape)
      const early = new UsersService(new PriceCalculator());
      h.detector.tracker!.track('UsersService', early);
      early.list();
      expect(h.detector.diagReport()).toBeUndefined();
      const before = await collect(h.reader);
      expect(before.map((m) => m.descriptor.name)).not.toContain(METRICS.beanTouched.name);
      startApp(h.detector);
      const points = metric(await collect(h.reader), METRICS.beanTouched.name).dataPoints;
      const users = points.filter((p) => p.attributes[ATTRIBUTES.beanName] === 'UsersService');
      expect(users.map((p) => [p.attributes[ATTRIBUTES.beanModule], p.value])).toEqual([['UsersModule', 1]]);
      expect(points.every((p) => p.attributes[ATTRIBUTES.beanModule] !== undefined)).toBe(true);
    } finally {
      await h.cleanup();
    }
  });

  it('reports no count before a container has started, and only the Phase 1 count with tracking off', async () => {
    const h = harness({ ghostTracking: { enabled: false } });
    try {
      expect(await collect(h.reader)).toEqual([]);
      startApp(h.detector);
      const metrics = await collect(h.reader);
      expect(metrics.map((m) => m.descriptor.name)).toEqual([METRICS.ghostCandidates.name]);
      expect(value(metrics, METRICS.ghostCandidates.name)).toBe(1);
    } finally {
      await h.cleanup();
    }
  });

  it('moves to a new meter without leaving the old one reading the detector', async () => {
    const h = harness();
    const reader2 = new TestReader();
    const provider2 = new MeterProvider({ readers: [reader2] });
    try {
      startApp(h.detector);
      h.telemetry.updateMetricInstruments(provider2.getMeter('second'));
      expect(await collect(h.reader)).toEqual([]);
      expect(value(await collect(reader2), METRICS.ghostTracked.name)).toBe(4);
    } finally {
      await provider2.shutdown();
      await h.cleanup();
    }
  });
});

describe('sketch metrics', () => {
  const sketches = (stats: boolean, list?: () => never): SketchRegistryView => {
    const infos = [
      { id: 'LIMIT_60000', epsilon: 0.0001, deltaPercent: 1.8, memoryBytes: 1_048_576 },
      { id: 'SHIELD_1000', epsilon: 0.001, deltaPercent: 1.8, memoryBytes: 65_536 },
    ];
    const counts: Record<string, { hits: number; breaches: number }> = {
      LIMIT_60000: { hits: 120, breaches: 20 },
      SHIELD_1000: { hits: 3, breaches: 0 },
    };
    return {
      list: list ?? (() => infos),
      get: (id) => infos.find((i) => i.id === id),
      ...(stats ? { stats: (id: string) => counts[id] } : {}),
    };
  };

  it('reports memory per sketch in bytes, and hits and breaches as monotonic counters', async () => {
    const h = harness({}, sketches(true));
    try {
      const metrics = await collect(h.reader);
      const memory = metric(metrics, METRICS.sketchMemory.name);
      expect(memory.descriptor.unit).toBe('By');
      expect(memory.dataPointType).toBe(DataPointType.GAUGE);
      const byId = (name: string) =>
        Object.fromEntries(metric(metrics, name).dataPoints.map((p) => [p.attributes[ATTRIBUTES.sketchId], p.value]));
      expect(byId(METRICS.sketchMemory.name)).toEqual({ LIMIT_60000: 1_048_576, SHIELD_1000: 65_536 });
      for (const spec of [METRICS.sketchHits, METRICS.sketchBreaches]) {
        const m = metric(metrics, spec.name);
        expect(m.dataPointType).toBe(DataPointType.SUM);
        expect(m.dataPointType === DataPointType.SUM && m.isMonotonic).toBe(true);
        expect(m.descriptor.unit).toBe('{call}');
      }
      expect(byId(METRICS.sketchHits.name)).toEqual({ LIMIT_60000: 120, SHIELD_1000: 3 });
      expect(byId(METRICS.sketchBreaches.name)).toEqual({ LIMIT_60000: 20, SHIELD_1000: 0 });
    } finally {
      await h.cleanup();
    }
  });

  it('exports no counters for a registry without stats, and a throwing registry does not hide the ghost counts', async () => {
    const plain = harness({}, sketches(false));
    const broken = harness(
      {},
      sketches(true, () => {
        throw new Error('registry gone');
      }),
    );
    try {
      const names = (await collect(plain.reader)).map((m) => m.descriptor.name);
      expect(names).toContain(METRICS.sketchMemory.name);
      expect(names).not.toContain(METRICS.sketchHits.name);
      startApp(broken.detector);
      const metrics = await collect(broken.reader);
      expect(value(metrics, METRICS.ghostTracked.name)).toBe(4);
      expect(metrics.map((m) => m.descriptor.name)).not.toContain(METRICS.sketchMemory.name);
    } finally {
      await plain.cleanup();
      await broken.cleanup();
    }
  });
});

describe('fleet sketch metrics', () => {
  it('reports mode, nodes and failed syncs per fleet sketch, and each sync round in a duration histogram', async () => {
    const listeners: ((e: SyncEvent) => void)[] = [];
    const info = { id: 'LIMIT_60000', epsilon: 0.0001, deltaPercent: 1.8, memoryBytes: 1_048_576 };
    const fleet: { mode: 'fleet' | 'local-fallback'; nodes: number; lastSyncAgoMs: number; syncFailures: number } = {
      mode: 'fleet',
      nodes: 3,
      lastSyncAgoMs: 40,
      syncFailures: 0,
    };
    const view: SketchRegistryView = {
      list: () => [info, { ...info, id: 'LOCAL_1000' }],
      get: () => info,
      placement: (id) => (id === 'LIMIT_60000' ? { store: 'redis', fleet } : { store: 'native' }),
      onSync: (l) => {
        listeners.push(l);
        return () => listeners.splice(listeners.indexOf(l), 1);
      },
    };
    const h = harness({}, view);
    try {
      listeners.forEach((l) => l({ id: 'LIMIT_60000', durationMs: 4, ok: true }));
      listeners.forEach((l) => l({ id: 'LIMIT_60000', durationMs: 250, ok: false }));
      fleet.mode = 'local-fallback';
      fleet.syncFailures = 1;
      const metrics = await collect(h.reader);
      const byId = (name: string) =>
        Object.fromEntries(metric(metrics, name).dataPoints.map((p) => [p.attributes[ATTRIBUTES.sketchId], p.value]));
      expect(byId(METRICS.sketchFleetMode.name)).toEqual({ LIMIT_60000: 0 });
      expect(byId(METRICS.sketchFleetNodes.name)).toEqual({ LIMIT_60000: 3 });
      expect(byId(METRICS.sketchSyncFailures.name)).toEqual({ LIMIT_60000: 1 });
      const durations = metric(metrics, METRICS.sketchSyncDuration.name);
      expect(durations.dataPointType).toBe(DataPointType.HISTOGRAM);
      expect(durations.descriptor.unit).toBe('s');
      const points = durations.dataPoints.map((p) => ({
        outcome: p.attributes[ATTRIBUTES.sketchSyncOutcome],
        value: p.value as { count: number; sum: number },
      }));
      expect(points.map((p) => [p.outcome, p.value.count, p.value.sum]).sort()).toEqual([
        ['failed', 1, 0.25],
        ['ok', 1, 0.004],
      ]);
      // A new meter replaces the listener rather than adding a second one.
      const provider2 = new MeterProvider({ readers: [new TestReader()] });
      h.telemetry.updateMetricInstruments(provider2.getMeter('second'));
      expect(listeners).toHaveLength(1);
      await provider2.shutdown();
    } finally {
      await h.cleanup();
    }
  });
});

it('names every metric under diag. with a unit', () => {
  for (const spec of Object.values(METRICS)) {
    expect(spec.name).toMatch(/^diag\.[a-z_]+(\.[a-z_]+)+$/);
    expect(spec.unit).toMatch(/^(By|1|s|\{[a-z]+\})$/);
  }
});
