import type { GhostTrackingDisabled } from './types';

/** The live snapshot while Phase 2 is off (actuator `{base}/diag/ghosts`, `ghostSnapshot()`): says how to turn it on. */
export function ghostTrackingDisabled(): GhostTrackingDisabled {
  return {
    status: 'DISABLED',
    message:
      'Ghost tracking (Phase 2, first-touch tracking) is off. Enable it with the property ' +
      'diag.ghost-tracking.enabled=true: set the environment variable DIAG_GHOST_TRACKING_ENABLED=true, or pass ' +
      '{ ghostTracking: { enabled: true } } to new DiagInstrumentation(), then restart the application.',
  };
}
