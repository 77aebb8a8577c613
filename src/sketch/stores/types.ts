import type { WindowedCountMinSketch, WindowedSketchOptions } from '../window';

/** Where a sketch's counts live: this process only, or this process and a fleet through Redis. */
export type SketchStoreKind = 'native' | 'redis';

/** `fleet`: estimates are the fleet's; `local-fallback`: Redis is out of reach and each process admits its share. */
export type FleetMode = 'fleet' | 'local-fallback';

/** What `GET /actuator/sketches/{id}` and the telemetry report about a fleet sketch. */
export interface FleetStatus {
  readonly mode: FleetMode;
  /** Processes syncing this sketch, as last seen (at least 1). */
  readonly nodes: number;
  /** Milliseconds since the last successful sync, or null before the first. */
  readonly lastSyncAgoMs: number | null;
  /** Sync rounds that failed (error, timeout, refused) since the sketch was created. */
  readonly syncFailures: number;
}

/** One finished sync round of one sketch. */
export interface SyncEvent {
  readonly id: string;
  readonly durationMs: number;
  readonly ok: boolean;
}

/**
 * Creates the sketches of a {@link SketchRegistry}. Stores are plug-ins beside each other: the native store
 * (this process's memory only) and the Redis fleet store (`stores/redis`).
 */
export interface SketchStore {
  readonly kind: SketchStoreKind;
  /** A new sketch for `id` (`<TYPE>_<windowMs>`). */
  create(id: string, options: WindowedSketchOptions): WindowedCountMinSketch;
  /** Fleet state of a sketch this store created; undefined for a local store. */
  fleet?(id: string): FleetStatus | undefined;
  /** Calls `listener` after every sync round; returns the unsubscribe. */
  onSync?(listener: (event: SyncEvent) => void): () => void;
  /** Forgets a sketch that was closed. */
  release?(id: string): void;
  /** Stops background work and, for a client it created, closes the connection. */
  close?(): Promise<void>;
}
