import type { InstrumentationConfig } from '@opentelemetry/instrumentation';
import type { DiagOptions } from '../config/properties';

/**
 * Options of `new DiagInstrumentation(...)`: OpenTelemetry's common instrumentation options plus the diag
 * settings. Every diag setting can also come from an environment variable, which wins (see the table in
 * docs/configuration.md).
 */
export interface DiagInstrumentationConfig extends InstrumentationConfig, DiagOptions {}
