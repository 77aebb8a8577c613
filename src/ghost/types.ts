/**
 * Shapes of the ghost detector's outputs. Field names are the contract's (SPEC 3); readers outside the core
 * (actuator, telemetry) depend on these types only.
 */

/** Why a bean is not tracked in Phase 2. Strings are the report's own. */
export type UntrackableReason =
  | 'already-proxied'
  | 'factory-bean'
  | 'final-class'
  | 'non-singleton'
  | 'excluded'
  | 'no-methods'
  | `proxy-failed: ${string}`;

/** `diag-ghost-report.json` and the live snapshot (Phase 2 on). */
export interface GhostReport {
  readonly disclaimer: string;
  readonly trackedCount: number;
  readonly touchedCount: number;
  readonly untouchedCount: number;
  readonly untouched: string[];
  readonly touched: string[];
  readonly untrackableCount: number;
  readonly untrackable: Record<string, string>;
  readonly frameworkSkipped: number;
}

/** What the live snapshot answers with Phase 2 off. */
export interface GhostTrackingDisabled {
  readonly status: 'DISABLED';
  readonly message: string;
}

/** Anything that can produce the live ghost snapshot (the tracker, or a fake in tests). */
export interface GhostSnapshotSource {
  ghostSnapshot(): GhostReport | GhostTrackingDisabled;
}
