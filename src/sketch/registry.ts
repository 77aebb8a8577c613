import type { NativeLibrary } from './native/loader';
import { SketchConfigError, type SketchShapeOptions } from './counters';
import type { SketchInfo, SketchPlacement, SketchRegistryView, SketchStats } from './types';
import type { WindowedCountMinSketch, WindowedSketchOptions } from './window';
import { nativeSketchStore } from './stores/native';
import type { SketchStore, SyncEvent } from './stores/types';
import { storeFromSettings } from './stores/from-settings';
import { resolveSketchRedisConfig } from './settings';
import { instrumentationSketchSettings, registryCreated } from './registry-settings';

export { configureSketchRegistry } from './registry-settings';

/** Per-sketch options a caller of {@link SketchRegistry.getOrCreate} may give (the window comes from the id). */
export type RegistrySketchOptions = Omit<WindowedSketchOptions, 'windowMs' | 'clock' | 'library'>;

/** Options of a {@link SketchRegistry}. */
export interface SketchRegistryOptions {
  /** Clock every sketch of this registry uses (ms, monotonic). Default `performance.now()`. */
  readonly clock?: () => number;
  /** Passed to every sketch; false in tests that drive rotation themselves. Default true. */
  readonly autoRotate?: boolean;
  /** Library to allocate from; default the process-wide one. */
  readonly library?: NativeLibrary | (() => NativeLibrary);
  /** Shape applied when getOrCreate gives none (default: 1 MiB, depth 4, 3 sub-windows). */
  readonly defaults?: RegistrySketchOptions;
  /**
   * Where the sketches' counts live: this process's native memory (default), or a fleet through Redis
   * (`new RedisSketchStore({ client })`), so that every replica holds one limit.
   */
  readonly store?: SketchStore;
}

/**
 * Running totals of one sketch, kept beside it by the registry. The decorators hold this record and bump its
 * plain number fields on every call, so counting costs no allocation and no lookup per call.
 */
export interface SketchCounters {
  /** Calls counted by the sketch. */
  hits: number;
  /** Calls whose key's estimate exceeded their decorator's threshold (rejected, or only reported in observe mode). */
  breaches: number;
  /** Calls whose key function threw or returned no usable key; they are not counted in the sketch. */
  keyErrors: number;
}

/** What {@link SketchRegistry.stats} reports: the telemetry's hits and breaches, plus the key errors. */
export interface SketchRegistryStats extends SketchStats {
  readonly keyErrors: number;
}

interface Entry {
  readonly sketch: WindowedCountMinSketch;
  readonly store: SketchStore;
  readonly shape: string;
  readonly counters: SketchCounters;
}

const TYPE_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * The live sketches of a process, one per `<TYPE>_<windowMs>` id (SPEC 5): every decorated method with the
 * same type and window shares one sketch. The actuator and telemetry read it through
 * {@link SketchRegistryView}; the decorators create sketches through {@link getOrCreate}.
 */
export class SketchRegistry implements SketchRegistryView {
  private readonly sketches = new Map<string, Entry>();
  private storeInUse: SketchStore = nativeSketchStore;
  private readonly syncListeners = new Set<(event: SyncEvent) => void>();
  private readonly watchedStores = new Set<SketchStore>();

  constructor(private readonly options: SketchRegistryOptions = {}) {
    this.useStore(options.store ?? nativeSketchStore);
  }

  /** The store new sketches are created in. */
  get store(): SketchStore {
    return this.storeInUse;
  }

  /**
   * Creates sketches in `store` from now on; sketches that already exist stay where they are. For the
   * process-wide registry, when the instrumentation's settings arrive after a sketch was first used.
   */
  useStore(store: SketchStore): void {
    this.storeInUse = store;
    if (this.watchedStores.has(store)) return;
    this.watchedStores.add(store);
    store.onSync?.((event) => {
      for (const listener of this.syncListeners) listener(event);
    });
  }

  /** The id of a sketch: `<type>_<windowMs>`, e.g. `LIMIT_60000`. */
  static idOf(type: string, windowMs: number): string {
    if (typeof type !== 'string' || !TYPE_PATTERN.test(type)) {
      throw new SketchConfigError(`sketch type must match ${TYPE_PATTERN}, got ${JSON.stringify(type)}`);
    }
    if (!Number.isSafeInteger(windowMs) || windowMs < 1)
      throw new SketchConfigError(`windowMs must be a positive integer, got ${windowMs}`);
    return `${type}_${windowMs}`;
  }

  /**
   * The sketch for (type, windowMs), created on first request. A later request with a different explicit
   * shape is a configuration error rather than a silently shared sketch of another precision.
   *
   * @throws SketchConfigError for a bad type, window or conflicting shape.
   * @throws UnsatisfiedLinkError when the native library cannot be loaded.
   */
  getOrCreate(type: string, windowMs: number, options?: RegistrySketchOptions): WindowedCountMinSketch {
    const id = SketchRegistry.idOf(type, windowMs);
    const merged: RegistrySketchOptions = { ...this.options.defaults, ...options };
    const existing = this.live(id);
    if (existing !== undefined) {
      if (options !== undefined && hasShape(options)) {
        const wanted = shapeKey(merged);
        if (wanted !== existing.shape) {
          throw new SketchConfigError(`sketch ${id} already exists with shape ${existing.shape}; requested ${wanted}`);
        }
      }
      return existing.sketch;
    }
    const lib = typeof this.options.library === 'function' ? this.options.library() : this.options.library;
    const store = this.storeInUse;
    const sketch = store.create(id, {
      autoRotate: this.options.autoRotate,
      ...merged,
      windowMs,
      ...(this.options.clock !== undefined ? { clock: this.options.clock } : {}),
      library: lib,
    });
    this.sketches.set(id, { sketch, store, shape: shapeKey(merged), counters: { hits: 0, breaches: 0, keyErrors: 0 } });
    return sketch;
  }

  /**
   * The live, mutable totals of a sketch, or undefined for an unknown (or closed) id. For code that counts on
   * the sketch's behalf (the decorators); a sketch created anew under the same id starts a new record.
   */
  counters(id: string): SketchCounters | undefined {
    return this.live(id)?.counters;
  }

  /** A snapshot of one sketch's totals since it was created; undefined for an unknown (or closed) id. */
  stats(id: string): SketchRegistryStats | undefined {
    const c = this.live(id)?.counters;
    return c === undefined ? undefined : { hits: c.hits, breaches: c.breaches, keyErrors: c.keyErrors };
  }

  /** The live sketch with this id, or undefined. */
  find(id: string): WindowedCountMinSketch | undefined {
    return this.live(id)?.sketch;
  }

  /** Every live sketch's info, in id order. */
  list(): SketchInfo[] {
    const ids = [...this.sketches.keys()].sort();
    const out: SketchInfo[] = [];
    for (const id of ids) {
      const info = this.get(id);
      if (info !== undefined) out.push(info);
    }
    return out;
  }

  /** One sketch's info, or undefined for an unknown (or closed) id. */
  get(id: string): SketchInfo | undefined {
    const entry = this.live(id);
    if (entry === undefined) return undefined;
    const s = entry.sketch;
    return { id, epsilon: s.epsilon, deltaPercent: s.deltaPercent, memoryBytes: s.memoryBytes };
  }

  /** Which store holds a sketch, and for a fleet sketch its mode, nodes and last sync; undefined for an unknown id. */
  placement(id: string): SketchPlacement | undefined {
    const entry = this.live(id);
    if (entry === undefined) return undefined;
    const fleet = entry.store.fleet?.(id);
    return fleet === undefined ? { store: entry.store.kind } : { store: entry.store.kind, fleet };
  }

  /** Calls `listener` after each sync round of a fleet store this registry uses (telemetry). */
  onSync(listener: (event: SyncEvent) => void): () => void {
    this.syncListeners.add(listener);
    return () => this.syncListeners.delete(listener);
  }

  get size(): number {
    return this.list().length;
  }

  /** Closes and forgets one sketch. Returns whether it existed. */
  delete(id: string): boolean {
    const entry = this.sketches.get(id);
    if (entry === undefined) return false;
    this.sketches.delete(id);
    entry.sketch.close();
    entry.store.release?.(id);
    return true;
  }

  /** Closes every sketch (application shutdown). */
  closeAll(): void {
    for (const id of [...this.sketches.keys()]) this.delete(id);
  }

  /**
   * Pushes what fleet sketches counted since their last sync (bounded by the store's timeout), closes every
   * sketch and the connection a store opened itself. The registry stays usable: a sketch created afterwards
   * counts in this process only.
   */
  async shutdown(): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/await-thenable -- a store without close() gives undefined
    await Promise.all([...this.watchedStores].map((store) => store.close?.()));
    this.closeAll();
    this.storeInUse = nativeSketchStore;
  }

  // A sketch closed directly by its user drops out of the registry.
  private live(id: string): Entry | undefined {
    const entry = this.sketches.get(id);
    if (entry !== undefined && entry.sketch.closed) {
      this.sketches.delete(id);
      entry.store.release?.(id);
      return undefined;
    }
    return entry;
  }
}

function hasShape(o: RegistrySketchOptions): boolean {
  return (
    o.width !== undefined ||
    o.depth !== undefined ||
    o.epsilon !== undefined ||
    o.delta !== undefined ||
    o.subWindows !== undefined ||
    o.seed !== undefined
  );
}

function shapeKey(o: RegistrySketchOptions & SketchShapeOptions): string {
  return JSON.stringify([o.width, o.depth, o.epsilon, o.delta, o.subWindows ?? 3, o.seed ?? 0]);
}

let defaultRegistry: SketchRegistry | undefined;

/**
 * The process-wide registry the decorators, the actuator and telemetry share. Its store follows the
 * `diag.sketch.redis.*` settings (`DIAG_SKETCH_REDIS_URL`…): fleet-wide through Redis when a URL is set,
 * this process's native memory otherwise.
 */
export function sketchRegistry(): SketchRegistry {
  if (defaultRegistry !== undefined) return defaultRegistry;
  const registry = new SketchRegistry({
    store: storeFromSettings(instrumentationSketchSettings() ?? resolveSketchRedisConfig()),
  });
  defaultRegistry = registry;
  registryCreated({
    view: registry,
    settingsChanged: (settings) => {
      if (settings.url !== undefined && registry.store.kind === 'native')
        registry.useStore(storeFromSettings(settings));
    },
  });
  return registry;
}
