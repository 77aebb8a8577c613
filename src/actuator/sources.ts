import { ghostTrackingDisabled } from '../ghost/tracking/tracking-disabled';
import type { GhostReport, GhostSnapshotSource, GhostTrackingDisabled } from '../ghost/tracking/types';
import type { SketchRegistryView } from '../sketch/types';
import { toSpringStartup, type StartupTimeline } from '../ghost/reports/startup-timeline';
import { pageAssets, reportPageHtml, type PageData } from '../ghost/page';
import type { ActuatorSources } from './types';

export { ghostTrackingDisabled };

/** A registry with no sketches: what `{base}/sketches` lists before any sketch exists. */
export const EMPTY_SKETCH_REGISTRY: SketchRegistryView = Object.freeze({
  list: () => [],
  get: () => undefined,
});

/** The parts the instrumentation has at hand; any may be missing (not yet created, or turned off). */
export interface ActuatorSourceParts {
  /** The Phase 2 tracker; undefined when tracking is off. */
  readonly ghosts?: GhostSnapshotSource | (() => GhostSnapshotSource | undefined);
  /** Optional change counter for the ghost snapshot (see {@link ActuatorSources.ghostsVersion}). */
  readonly ghostsVersion?: () => number;
  /** The start-up report once written. */
  readonly diagReport?: () => object | undefined;
  /** The start-up timeline once the container has started. */
  readonly startup?: () => StartupTimeline | undefined;
  /** The service's verdicts (ledger or this run). */
  readonly ledger?: () => Promise<object | undefined>;
  /** What the report page shows, live. */
  readonly page?: () => PageData | undefined;
  /** The sketch registry, looked up per request so it can be created lazily. */
  readonly sketches?: () => SketchRegistryView | undefined;
}

/**
 * Builds {@link ActuatorSources} from whatever exists, filling gaps with the DISABLED snapshot, "no report
 * yet" and an empty sketch registry.
 */
export function actuatorSources(parts: ActuatorSourceParts): ActuatorSources {
  const ghostSource = (): GhostSnapshotSource | undefined =>
    typeof parts.ghosts === 'function' ? parts.ghosts() : parts.ghosts;
  return {
    ghosts(): GhostReport | GhostTrackingDisabled {
      const source = ghostSource();
      return source ? source.ghostSnapshot() : ghostTrackingDisabled();
    },
    ...(parts.ghostsVersion !== undefined
      ? {
          // While tracking is off the DISABLED object never changes: any constant will do.
          ghostsVersion: () => (ghostSource() ? parts.ghostsVersion!() : -1),
        }
      : {}),
    diagReport: () => (parts.diagReport ? parts.diagReport() : undefined),
    startup: () => {
      const timeline = parts.startup?.();
      return timeline ? toSpringStartup(timeline) : undefined;
    },
    ...(parts.ledger !== undefined ? { ledger: parts.ledger } : {}),
    diagView: () => {
      const data = parts.page?.();
      return data ? { html: reportPageHtml(data), csp: pageAssets().csp } : undefined;
    },
    sketches: () => (parts.sketches ? parts.sketches() : undefined) ?? EMPTY_SKETCH_REGISTRY,
  };
}
