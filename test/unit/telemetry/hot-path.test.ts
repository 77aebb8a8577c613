import { context, trace, type Meter, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { EVENTS, METRICS } from '../../../src/telemetry/names';
import { DiagTelemetry } from '../../../src/telemetry';
import { collect, harness, quietLogs, startApp, UsersController, UsersService, PriceCalculator } from './helpers';

/**
 * Phase 2 promises that a call after the first touch costs what an untracked call costs. Telemetry must not
 * break that: every metric is observable (read at collection), and the only span work is one event inside
 * the first call. These tests count every call into the OpenTelemetry API that telemetry makes, and check
 * that after the first touch the bean's methods are the class's own functions again, so there is nowhere
 * for telemetry code to run.
 */

let logs: ReturnType<typeof quietLogs>;
beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
afterAll(() => context.disable());
beforeEach(() => (logs = quietLogs()));
afterEach(() => logs.restore());

/** Wraps every function reachable from `target` (and from objects those functions return) with a counter. */
function counted<T extends object>(target: T, calls: string[], label: string): T {
  return new Proxy(target, {
    get(obj, key, receiver) {
      const v = Reflect.get(obj, key, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(`${label}.${String(key)}`);
        // Callbacks handed to the meter are counted when the SDK invokes them.
        const wrapped = args.map((a) =>
          typeof a === 'function'
            ? (...inner: unknown[]) => {
                calls.push(`${label}.${String(key)}:callback`);
                return (a as (...x: unknown[]) => unknown)(...inner);
              }
            : a,
        );
        const out = (v as (...x: unknown[]) => unknown).apply(obj, wrapped);
        return out !== null && typeof out === 'object'
          ? counted(out as object, calls, `${label}.${String(key)}()`)
          : out;
      };
    },
  });
}

it('does no metric or span work on a tracked call after the first touch', async () => {
  const h = harness();
  const calls: string[] = [];
  try {
    // A second telemetry on the same detector, whose meter and tracer count every call made on them.
    const meter = counted<Meter>(h.meterProvider.getMeter('counted'), calls, 'meter');
    const tracer = counted<Tracer>(h.tracerProvider.getTracer('counted'), calls, 'tracer');
    const telemetry = new DiagTelemetry(
      h.detector,
      () => tracer,
      () => undefined,
    );
    telemetry.updateMetricInstruments(meter);
    const observer = telemetry.beanObserver();
    const container = {};
    observer.bootstrapStarted!(container);
    const app = startApp(h.detector);
    observer.bootstrapFinished!(container);
    const touches: string[] = [];
    h.detector.addListener({ beanTouched: (name) => touches.push(name) });

    const requestSpan = h.tracerProvider.getTracer('app').startSpan('GET /users');
    const addEvent = jest.spyOn(requestSpan, 'addEvent');
    const setAttribute = jest.spyOn(requestSpan, 'setAttribute');
    const setAttributes = jest.spyOn(requestSpan, 'setAttributes');
    const inRequest = (fn: () => void) => context.with(trace.setSpan(context.active(), requestSpan), fn);

    // Instrument creation and the start-up span happened; nothing has been collected yet.
    expect(calls.filter((c) => c.endsWith(':callback'))).toEqual([]);
    const setup = calls.length;

    inRequest(() => app.controller.get()); // first touch of three beans
    expect(touches).toEqual(['UsersController', 'UsersService', 'PriceCalculator']);
    // Two telemetries listen (the harness's and the counted one): two events per bean, nothing else.
    expect(addEvent).toHaveBeenCalledTimes(6);
    expect(addEvent.mock.calls.every(([name]) => name === EVENTS.beanFirstTouch)).toBe(true);
    expect(calls.length).toBe(setup);

    // After the first touch the instances are ordinary objects again: the class's own functions are called.
    expect(Object.getPrototypeOf(app.controller)).toBe(UsersController.prototype);
    expect(app.controller.get).toBe(UsersController.prototype.get);
    expect(app.users.list).toBe(UsersService.prototype.list);
    expect(app.prices.total).toBe(PriceCalculator.prototype.total);

    addEvent.mockClear();
    let sum = 0;
    inRequest(() => {
      for (let i = 0; i < 100_000; i++) sum += app.controller.get();
    });
    expect(sum).toBe(300_000);
    expect(touches).toHaveLength(3);
    expect(addEvent).not.toHaveBeenCalled();
    expect(setAttribute).not.toHaveBeenCalled();
    expect(setAttributes).not.toHaveBeenCalled();
    expect(calls.length).toBe(setup); // not one call into the meter, its instruments or the tracer

    // The values appear when (and only when) the SDK collects.
    const metrics = await collect(h.reader);
    expect(calls.filter((c) => c.endsWith(':callback'))).toEqual(['meter.addBatchObservableCallback:callback']);
    const touched = metrics.filter((m) => m.descriptor.name === METRICS.ghostTouched.name);
    expect(touched.flatMap((m) => m.dataPoints.map((p) => p.value))).toEqual([3, 3]); // both meters, same value
    requestSpan.end();
  } finally {
    await h.cleanup();
  }
});
