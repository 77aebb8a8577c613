/**
 * diag-instrumentation: an OpenTelemetry instrumentation that finds ghost beans in NestJS applications (and
 * dead bindings of tsyringe's container), and
 * count-min sketches in native memory (see `diag-instrumentation/sketch`).
 */
export { DiagInstrumentation, PACKAGE_NAME } from './instrumentation';
export { diagReady } from './ready';
export type { DiagInstrumentationConfig } from './types';
export { resolveConfig, envVarName, PROPERTIES } from './config/properties';
export type { DiagConfig, DiagOptions } from './config/properties';
export { setLogger, ConsoleLogger } from './logger';
export type { DiagLogger, LogLevel } from './logger';
export { DiagError } from './errors';
export type { DiagReport, ReportNode } from './ghost/reports';
export type { GhostCandidates } from './ghost/candidates';
export type {
  GhostReport,
  GhostTrackingDisabled,
  UntrackableReason,
  BeanScope,
  TrackOptions,
  TrackOutcome,
} from './ghost/types';
export { GhostTracker, mergeGhostReports, GHOST_DISCLAIMER, DEFAULT_LIFECYCLE_HOOKS } from './ghost/tracker';
export type { GhostTrackerOptions, FirstTouchListener } from './ghost/tracker';
export type { GhostReportFile } from './ghost/ghost-report-file';
export type { ActuatorHandle } from './actuator';
