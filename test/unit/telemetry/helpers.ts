import * as fs from 'node:fs';
import type { Tracer } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resolveConfig, type DiagOptions } from '../../../src/config/properties';
import { BeanGraph, type BeanInput } from '../../../src/ghost/analysis/bean-graph';
import { GhostDetector } from '../../../src/ghost/detector';
import { DiagTelemetry } from '../../../src/telemetry';
import type { SketchRegistryView } from '../../../src/sketch/types';
import { captureLogs } from '../../support/logs';
import { tempDir } from '../../support/temp';

/** A pull reader: the test decides when the SDK collects, as a Prometheus scrape would. */
export class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

export async function collect(reader: MetricReader): Promise<MetricData[]> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
}

export function metric(metrics: MetricData[], name: string): MetricData {
  const found = metrics.find((m) => m.descriptor.name === name);
  if (!found) throw new Error(`no metric ${name}; have ${metrics.map((m) => m.descriptor.name).join(', ')}`);
  return found;
}

/** The single value of an attribute-less metric. */
export function value(metrics: MetricData[], name: string): number {
  const points = metric(metrics, name).dataPoints;
  expect(points).toHaveLength(1);
  return points[0]!.value as number;
}

// The application the graph describes: real classes, so the tracker wraps real methods.
export class PriceCalculator {
  total(cents: number[]): number {
    return cents.reduce((a, b) => a + b, 0);
  }
}
export class UsersService {
  constructor(private readonly prices: PriceCalculator) {}
  list(): number {
    return this.prices.total([1, 2]);
  }
}
export class LegacyReportService {
  render(): string {
    return 'legacy';
  }
}
export class UsersController {
  constructor(private readonly users: UsersService) {}
  get(): number {
    return this.users.list();
  }
}
export class FrozenThing {
  run(): void {}
}

export interface App {
  prices: PriceCalculator;
  users: UsersService;
  legacy: LegacyReportService;
  controller: UsersController;
}

const bean = (input: Partial<BeanInput> & { token: string }): BeanInput => ({
  kind: 'class',
  scope: 'singleton',
  role: 'provider',
  framework: false,
  eager: true,
  ...input,
});

/**
 * A real ghost detector (Phase 2 on unless told otherwise) with telemetry attached, fed as the NestJS adapter would:
 * each instance tracked as it is created, then the finished graph handed to containerReady.
 */
export function harness(options: DiagOptions = {}, sketches?: SketchRegistryView) {
  const dir = tempDir('telemetry');
  const config = resolveConfig({
    ghostTracking: { enabled: true },
    ...options,
    report: { dir, flushIntervalMs: 0, ...options.report },
  });
  const detector = new GhostDetector(config);
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let tracer: Tracer = tracerProvider.getTracer('diag-test');
  const telemetry = new DiagTelemetry(
    detector,
    () => tracer,
    () => sketches,
  );
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  telemetry.updateMetricInstruments(meterProvider.getMeter('diag-test'));
  return {
    dir,
    detector,
    telemetry,
    exporter,
    reader,
    meterProvider,
    tracerProvider,
    setTracer: (t: Tracer) => (tracer = t),
    cleanup: async () => {
      // The report page is written on the turn after containerReady: let it land before the directory goes.
      await new Promise((resolve) => setImmediate(resolve));
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates the app's instances, tracks them and reports the container ready, as the adapter does. */
export function startApp(detector: GhostDetector): App {
  const graph = new BeanGraph();
  const ids = {
    prices: graph.addBean(bean({ token: 'PriceCalculator', module: 'UsersModule' })),
    users: graph.addBean(bean({ token: 'UsersService', module: 'UsersModule' })),
    legacy: graph.addBean(bean({ token: 'LegacyReportService', module: 'AppModule' })),
    controller: graph.addBean(bean({ token: 'UsersController', module: 'UsersModule', role: 'controller' })),
    frozen: graph.addBean(bean({ token: 'FrozenThing', module: 'AppModule' })),
    frameworkRef: graph.addBean(bean({ token: 'ModuleRef', module: 'InternalCoreModule', framework: true })),
  };
  graph.addEdge(ids.users, ids.prices, 'constructor');
  graph.addEdge(ids.controller, ids.users, 'constructor');
  graph.addEdge(ids.controller, ids.frozen, 'constructor');

  const prices = new PriceCalculator();
  const users = new UsersService(prices);
  const legacy = new LegacyReportService();
  const controller = new UsersController(users);
  const tracker = detector.tracker;
  if (tracker) {
    tracker.track('PriceCalculator', prices);
    tracker.track('UsersService', users);
    tracker.track('LegacyReportService', legacy);
    tracker.track('UsersController', controller);
    tracker.track('FrozenThing', Object.freeze(new FrozenThing()));
    tracker.track('ModuleRef', {}, { framework: true });
  }
  detector.containerReady({
    graph,
    classify: (b) => (b.role === 'controller' ? ['controller'] : []),
    framework: 'nestjs',
    container: { name: '@nestjs/core', version: '11.0.0' },
  });
  return { prices, users, legacy, controller };
}

/** Silences the package's log lines for one test file, keeping warnings for assertions. */
export function quietLogs(): { warnings: string[]; restore: () => void } {
  return captureLogs();
}
