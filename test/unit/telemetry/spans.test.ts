import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { STARTUP_PUBLISH_DELAY_MS } from '../../../src/ghost/detector';
import { ATTRIBUTES, EVENTS, SPANS } from '../../../src/telemetry/names';
import { performanceToHrTime } from '../../../src/telemetry/spans';
import { harness, quietLogs, startApp } from './helpers';

const hrMs = (t: [number, number]): number => t[0] * 1e3 + t[1] / 1e6;

let logs: ReturnType<typeof quietLogs>;
let contextManager: AsyncLocalStorageContextManager;
beforeAll(() => {
  // trace.getActiveSpan() needs a context manager, as NodeSDK installs one.
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
});
afterAll(async () => {
  context.disable();
  // The detectors write their page on the turn after ready and publish their start-up a moment later: let them,
  // so that nothing of this file requires a module into a torn-down Jest environment.
  await new Promise((resolve) => setTimeout(resolve, STARTUP_PUBLISH_DELAY_MS + 50));
});
beforeEach(() => (logs = quietLogs()));
afterEach(() => logs.restore());

/** Drives the adapter's hooks the way NestContainerObserver does, around a real ghost detector's containerReady. */
function bootstrap(h: ReturnType<typeof harness>, opts: { fail?: Error } = {}) {
  const container = {};
  const observer = h.telemetry.beanObserver();
  const wallStart = Date.now();
  observer.bootstrapStarted!(container);
  const t0 = performance.now();
  const beans = [
    { name: 'PriceCalculator', module: 'UsersModule', scope: 'singleton', startTime: t0, endTime: t0 + 2.5 },
    { name: 'UsersService', module: 'UsersModule', scope: 'singleton', startTime: t0 + 2.5, endTime: t0 + 7.25 },
    { name: 'LegacyReportService', scope: 'singleton', startTime: t0 + 7.25, endTime: t0 + 7.5 },
  ];
  const app = opts.fail ? undefined : startApp(h.detector);
  // The fabricated creation times end at t0 + 7.5 ms: let them be in the past, as real ones are, by the end.
  while (performance.now() < t0 + 8) {
    /* spin */
  }
  observer.bootstrapFinished!(container, opts.fail, beans);
  return { app, wallStart, wallEnd: Date.now(), t0 };
}

const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);

describe('start-up spans', () => {
  it('one start-up span with the report counts, and a child per bean with its name, scope, module and duration', () => {
    const h = harness();
    try {
      const { wallStart, wallEnd } = bootstrap(h);
      const spans = h.exporter.getFinishedSpans();
      const [startup] = byName(spans, SPANS.containerStartup);
      expect(startup).toBeDefined();
      expect(startup!.status.code).toBe(SpanStatusCode.UNSET);
      expect(startup!.attributes).toEqual({
        [ATTRIBUTES.containerName]: '@nestjs/core',
        [ATTRIBUTES.containerVersion]: '11.0.0',
        [ATTRIBUTES.beanCount]: 6,
        [ATTRIBUTES.applicationBeanCount]: 5,
        [ATTRIBUTES.frameworkBeanCount]: 1,
        [ATTRIBUTES.orphanCount]: 2,
        [ATTRIBUTES.candidateCount]: 1,
        [ATTRIBUTES.trackedCount]: 4,
        [ATTRIBUTES.touchedCount]: 0,
        [ATTRIBUTES.untouchedCount]: 4,
        [ATTRIBUTES.untrackableCount]: 1,
        [ATTRIBUTES.frameworkSkippedCount]: 1,
      });
      // Absolute wall-clock times, not performance.now() readings taken as epoch milliseconds.
      expect(hrMs(startup!.startTime)).toBeGreaterThanOrEqual(wallStart - 50);
      expect(hrMs(startup!.endTime)).toBeLessThanOrEqual(wallEnd + 50);

      const beans = byName(spans, SPANS.beanInstantiation);
      expect(beans.map((s) => s.attributes)).toEqual([
        {
          [ATTRIBUTES.beanName]: 'PriceCalculator',
          [ATTRIBUTES.beanScope]: 'singleton',
          [ATTRIBUTES.beanModule]: 'UsersModule',
        },
        {
          [ATTRIBUTES.beanName]: 'UsersService',
          [ATTRIBUTES.beanScope]: 'singleton',
          [ATTRIBUTES.beanModule]: 'UsersModule',
        },
        { [ATTRIBUTES.beanName]: 'LegacyReportService', [ATTRIBUTES.beanScope]: 'singleton' },
      ]);
      expect(beans.map((s) => hrMs(s.duration))).toEqual([2.5, 4.75, 0.25].map((ms) => expect.closeTo(ms, 3)));
      for (const bean of beans) {
        expect(bean.spanContext().traceId).toBe(startup!.spanContext().traceId);
        expect(bean.parentSpanContext?.spanId).toBe(startup!.spanContext().spanId);
        expect(hrMs(bean.startTime)).toBeGreaterThanOrEqual(hrMs(startup!.startTime));
        expect(hrMs(bean.endTime)).toBeLessThanOrEqual(hrMs(startup!.endTime));
      }
      // Consecutive beans abut exactly: both ends come from the same reading.
      expect(beans[0]!.endTime).toEqual(beans[1]!.startTime);
    } finally {
      void h.cleanup();
    }
  });

  it('leaves the bean spans out when diag.telemetry.bean-spans is false', () => {
    const h = harness({ telemetry: { beanSpans: false } });
    try {
      bootstrap(h);
      expect(h.exporter.getFinishedSpans().map((s) => s.name)).toEqual([SPANS.containerStartup]);
    } finally {
      void h.cleanup();
    }
  });

  it('marks the start-up span as failed, with the exception, when bootstrap fails', () => {
    const h = harness();
    try {
      bootstrap(h, { fail: new Error('UsersService cannot be resolved') });
      const [startup] = byName(h.exporter.getFinishedSpans(), SPANS.containerStartup);
      expect(startup!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'UsersService cannot be resolved' });
      expect(startup!.events.map((e) => e.name)).toEqual(['exception']);
      expect(startup!.events[0]!.attributes?.['exception.message']).toBe('UsersService cannot be resolved');
      expect(startup!.attributes[ATTRIBUTES.candidateCount]).toBeUndefined();
    } finally {
      void h.cleanup();
    }
  });

  it('carries only the Phase 1 counts with tracking off', () => {
    const h = harness({ ghostTracking: { enabled: false } });
    try {
      bootstrap(h);
      const [startup] = byName(h.exporter.getFinishedSpans(), SPANS.containerStartup);
      expect(startup!.attributes[ATTRIBUTES.candidateCount]).toBe(1);
      expect(startup!.attributes[ATTRIBUTES.trackedCount]).toBeUndefined();
    } finally {
      void h.cleanup();
    }
  });

  it('nests under the span active when bootstrap starts', () => {
    const h = harness();
    try {
      const root = trace.wrapSpanContext({
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: 1,
      });
      context.with(trace.setSpan(context.active(), root), () => bootstrap(h));
      const [startup] = byName(h.exporter.getFinishedSpans(), SPANS.containerStartup);
      expect(startup!.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
      expect(startup!.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    } finally {
      void h.cleanup();
    }
  });
});

describe('first-touch event', () => {
  it('adds one event per bean to the span of the request that first used it, and none later', () => {
    const h = harness();
    try {
      const { app } = bootstrap(h);
      h.exporter.reset();
      const request = (name: string, fn: () => void) => {
        const span = h.tracerProvider.getTracer('app').startSpan(name);
        context.with(trace.setSpan(context.active(), span), fn);
        span.end();
      };
      request('GET /users', () => app!.controller.get());
      request('GET /users again', () => app!.controller.get());
      request('legacy', () => app!.legacy.render());
      const spans = h.exporter.getFinishedSpans();
      const events = (name: string) => spans.find((s) => s.name === name)!.events;
      expect(events('GET /users').map((e) => [e.name, e.attributes])).toEqual([
        [
          EVENTS.beanFirstTouch,
          {
            [ATTRIBUTES.beanName]: 'UsersController',
            [ATTRIBUTES.beanModule]: 'UsersModule',
            [ATTRIBUTES.beanGhostCandidate]: false,
          },
        ],
        [
          EVENTS.beanFirstTouch,
          {
            [ATTRIBUTES.beanName]: 'UsersService',
            [ATTRIBUTES.beanModule]: 'UsersModule',
            [ATTRIBUTES.beanGhostCandidate]: false,
          },
        ],
        [
          EVENTS.beanFirstTouch,
          {
            [ATTRIBUTES.beanName]: 'PriceCalculator',
            [ATTRIBUTES.beanModule]: 'UsersModule',
            [ATTRIBUTES.beanGhostCandidate]: false,
          },
        ],
      ]);
      expect(events('GET /users again')).toEqual([]);
      expect(events('legacy').map((e) => e.attributes)).toEqual([
        {
          [ATTRIBUTES.beanName]: 'LegacyReportService',
          [ATTRIBUTES.beanModule]: 'AppModule',
          [ATTRIBUTES.beanGhostCandidate]: true,
        },
      ]);
    } finally {
      void h.cleanup();
    }
  });

  it('is silent without an active span, and the touch is still counted', () => {
    const h = harness();
    try {
      const { app } = bootstrap(h);
      h.exporter.reset();
      expect(trace.getActiveSpan()).toBeUndefined();
      app!.users.list();
      expect(h.exporter.getFinishedSpans()).toEqual([]);
      expect(h.detector.tracker!.isTouched('UsersService')).toBe(true);
    } finally {
      void h.cleanup();
    }
  });
});

describe('performanceToHrTime', () => {
  it('adds the time origin without losing sub-microsecond precision', () => {
    expect(performanceToHrTime(0.0005, 1_700_000_000_123.25)).toEqual([1_700_000_000, 123_250_500]);
    expect(performanceToHrTime(999.5, 1_700_000_000_500)).toEqual([1_700_000_001, 499_500_000]);
    expect(performanceToHrTime(1500.000001, 1_700_000_000_000)).toEqual([1_700_000_001, 500_000_001]);
  });
});
