/**
 * diag-instrumentation: an OpenTelemetry instrumentation that finds ghost beans in NestJS applications (and
 * dead bindings of InversifyJS, tsyringe and awilix containers), and count-min sketches in native memory (see
 * `diag-instrumentation/sketch`).
 *
 * What a user calls, and nothing else: test/unit/exports.test.ts lists the runtime names, so a new one is a
 * decision. Internals (the tracker, the settings table, the report writers) are reached by their dist/ path
 * in this repository's own benchmarks and tests, never through this entry point.
 */
// First, so that its evaluation marks the start of the package's own load on the start-up timeline; and from
// there every module load is timed (docs/startup.md: require this package before the OpenTelemetry SDK).
import { BOOT_MARKS } from './shared/boot-clock';
import { stopTimingModuleLoads, timeModuleLoads } from './patching/module-hooks';
timeModuleLoads();
// A process that imports the package without building an instrumentation on the same turn (a script reading
// reports, a test) gets `Module.prototype.load` back and records nothing.
setImmediate(() => {
  if (Number.isNaN(BOOT_MARKS.diagEnableStart)) stopTimingModuleLoads();
}).unref();
export { DiagInstrumentation } from './instrumentation/instrumentation';
export type { DiagInstrumentationConfig } from './instrumentation/types';
export type { DiagOptions } from './config/properties';
export { diagReady } from './adapters/lazy/ready';
export { setLogger } from './shared/logger';
export type { DiagLogger, LogLevel } from './shared/logger';
export { DiagError } from './shared/errors';
export type { ErrorCode } from './shared/error-codes';
// The two report files, as a reader of them (a dashboard, a CI step) types them.
export type { DiagReport, ReportNode } from './ghost/reports/diag-report';
export type { GhostCandidates } from './ghost/analysis/candidates';
export type { GhostReport, GhostTrackingDisabled, UntrackableReason } from './ghost/tracking/types';
export type { GhostReportFile } from './ghost/reports/ghost-report-file';
// One verdict per bean (the ghost report's `verdicts`), and the ledger's answer as `diag-instrumentation ledger
// --format json` and `{base}/diag/ledger` give it (docs/ledger.md): types only, for the scripts that read them.
export type { BeanVerdict, Verdict } from './ghost/verdicts';
export type { LedgerAnswer, LedgerBean, LedgerProvenance, LedgerVersion } from './ghost/ledger/answer';
// Several processes' ghost reports combined (docs/tracking.md, "State across processes").
export { mergeGhostReports } from './ghost/tracking/ghost-report';
export { Kept } from './ghost/kept';
export type { EndpointVerdict, MemberSource, MethodVerdict } from './ghost/member-verdicts';
export type { EndpointRecord } from './ghost/analysis/bean-graph';
export type { ActuatorHandle } from './actuator';

// The package's own load ends here: a step of its own on the start-up timeline.
BOOT_MARKS.diagLoadEnd = performance.now();
