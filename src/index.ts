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
import type { GhostReport } from './ghost/tracking/types';
import type * as GhostReportModule from './ghost/tracking/ghost-report';
import type * as KeptModule from './ghost/kept';
import type * as ReadyModule from './adapters/lazy/ready';
/* eslint-disable @typescript-eslint/no-require-imports -- the functions below load their modules when first called */
timeModuleLoads();
// A process that imports the package without building an instrumentation on the same turn (a script reading
// reports, a test) gets `Module.prototype.load` back and records nothing.
setImmediate(() => {
  if (Number.isNaN(BOOT_MARKS.diagEnableStart)) stopTimingModuleLoads();
}).unref();
export { DiagInstrumentation } from './instrumentation/instrumentation';
export type { DiagInstrumentationConfig } from './instrumentation/types';
export type { DiagOptions } from './config/properties';
/**
 * Tells the lazy-container adapters that the application is ready: its bindings never resolved so far become
 * the Phase 1 ghost candidates, written to `diag-report.json`. For processes that serve no HTTP (workers,
 * consumers), call it once the application has started; in a web application the first HTTP server's
 * `listening` does it. Later calls do nothing. (Its module loads at the first call or with a lazy container.)
 */
export function diagReady(): void {
  (require('./adapters/lazy/ready') as typeof ReadyModule).diagReady();
}
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
// Several processes' ghost reports combined (docs/tracking.md, "State across processes"), and the mark of a
// method kept on purpose: each a function here that loads its module at its first call, so that a start that
// uses neither does not load them (docs/benchmarks.md, "Modules after ready").
/**
 * Combines the reports of several processes running the same application (cluster workers, replicas) into
 * one: a bean touched in any process is touched; a bean untrackable in any process is untrackable (first
 * reason in input order wins); `frameworkSkipped` is the largest count, since every process skips the same
 * framework beans; a binding resolved in any process is resolved (`neverResolved` keeps those no process
 * resolved). Pure: the inputs are not modified.
 */
export function mergeGhostReports(reports: Iterable<GhostReport>): GhostReport {
  return (require('./ghost/tracking/ghost-report') as typeof GhostReportModule).mergeGhostReports(reports);
}
/**
 * Marks a method (or every method of a class) as called rarely on purpose, with the reason a reader will see:
 * `@Kept('partner quarterly reconciliation, called by Acme each quarter')`. The method stays exactly what it
 * was (no wrapper, nothing at start-up); the ghost report, the ledger and the page show it with its reason and
 * never as a finding. For TypeScript's `experimentalDecorators` (what NestJS uses).
 */
export function Kept(reason?: string): ClassDecorator & MethodDecorator {
  return (require('./ghost/kept') as typeof KeptModule).Kept(reason);
}
/* eslint-enable @typescript-eslint/no-require-imports */
export type { EndpointVerdict, MemberSource, MethodVerdict } from './ghost/member-verdicts';
export type { EndpointRecord } from './ghost/analysis/bean-graph';
export type { ActuatorHandle } from './actuator';

// The package's own load ends here: a step of its own on the start-up timeline.
BOOT_MARKS.diagLoadEnd = performance.now();
