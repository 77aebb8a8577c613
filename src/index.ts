/**
 * diag-instrumentation: an OpenTelemetry instrumentation that finds ghost beans in NestJS applications (and
 * dead bindings of tsyringe's container), and
 * count-min sketches in native memory (see `diag-instrumentation/sketch`).
 */
export { DiagInstrumentation, PACKAGE_NAME } from './instrumentation/instrumentation';
export { diagReady } from './adapters/lazy/ready';
export type { DiagInstrumentationConfig } from './instrumentation/types';
export { resolveConfig, envVarName, PROPERTIES } from './config/properties';
export type { DiagConfig, DiagOptions } from './config/properties';
export { setLogger, ConsoleLogger } from './shared/logger';
export type { DiagLogger, LogLevel } from './shared/logger';
export { DiagError } from './shared/errors';
export type { DiagReport, ReportNode } from './ghost/reports/diag-report';
export type { GhostCandidates } from './ghost/analysis/candidates';
export type {
  GhostReport,
  GhostTrackingDisabled,
  UntrackableReason,
  BeanScope,
  TrackOptions,
  TrackOutcome,
} from './ghost/tracking/types';
export { GhostTracker, mergeGhostReports, GHOST_DISCLAIMER, DEFAULT_LIFECYCLE_HOOKS } from './ghost/tracking/tracker';
export type { GhostTrackerOptions, FirstTouchListener } from './ghost/tracking/tracker';
export type { GhostReportFile } from './ghost/reports/ghost-report-file';
export type { ActuatorHandle } from './actuator';
