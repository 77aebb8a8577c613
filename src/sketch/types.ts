import type { FleetStatus, SketchStoreKind, SyncEvent } from './stores/types';

/** What the actuator and telemetry read about one live sketch. */
export interface SketchInfo {
  /** `<TYPE>_<windowMs>`, e.g. `LIMIT_60000`. */
  readonly id: string;
  /** Over-count error bound: e / width. */
  readonly epsilon: number;
  /** 100 · e^(−depth): the chance, in percent, that an estimate exceeds the bound. */
  readonly deltaPercent: number;
  /** Native memory the sketch really holds, windows included. */
  readonly memoryBytes: number;
}

/** Where a sketch's counts live, and for a fleet sketch how it syncs. */
export interface SketchPlacement {
  readonly store: SketchStoreKind;
  readonly fleet?: FleetStatus;
}

/** Read-only view of the sketch registry: what the actuator and telemetry depend on. */
export interface SketchRegistryView {
  /** Every active sketch, in id order. */
  list(): SketchInfo[];
  /** One sketch, or undefined for an unknown id. */
  get(id: string): SketchInfo | undefined;
  /**
   * Running totals of one sketch since it was created, for the `diag.sketch.hits` / `diag.sketch.breaches`
   * counters; undefined for an unknown id. Optional: a registry without it simply exports no such counters.
   */
  stats?(id: string): SketchStats | undefined;
  /** Which store holds the sketch, with its fleet state; optional, as `stats`. */
  placement?(id: string): SketchPlacement | undefined;
  /** Calls `listener` after every fleet sync round; returns the unsubscribe. Optional. */
  onSync?(listener: (event: SyncEvent) => void): () => void;
}

/** Cumulative counts of one sketch; both only ever grow while the sketch lives. */
export interface SketchStats {
  /** Calls counted by the sketch. */
  readonly hits: number;
  /** Calls rejected because their key's estimate exceeded the threshold. */
  readonly breaches: number;
}
