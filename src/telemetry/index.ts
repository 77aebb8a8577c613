import type { Meter, Tracer } from '@opentelemetry/api';
import type { DiagRuntime } from '../runtime';
import type { BeanObserver } from '../adapters/nestjs/container-observer';
import type { SketchRegistryView } from '../sketch/types';

/**
 * OpenTelemetry output of the ghost detector and the sketches. PLACEHOLDER: the telemetry issue replaces the
 * body; the instrumentation already calls these methods at the right moments.
 */
export class DiagTelemetry {
  constructor(
    private readonly runtime: DiagRuntime,
    private readonly tracer: () => Tracer,
    private readonly sketches: () => SketchRegistryView | undefined,
  ) {}

  /** Called from InstrumentationBase._updateMetricInstruments: (re)creates every instrument on `meter`. */
  updateMetricInstruments(meter: Meter): void {
    void meter;
  }

  /** Span hooks for container start-up, handed to the NestJS adapter. */
  beanObserver(): BeanObserver {
    return {};
  }
}
