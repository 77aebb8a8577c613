import {
  checkCount,
  checkKey,
  NativeCounters,
  resolveShape,
  SketchConfigError,
  SketchShape,
  type SketchShapeOptions,
} from './counters';

/** Options of a plain (windowless) sketch. Default shape: 65,536 × 4 — exactly 1 MiB of counters. */
export type CountMinSketchOptions = SketchShapeOptions;

/** 65,536 counters × 4 rows × 4 bytes = 1,048,576 bytes. */
export const DEFAULT_WIDTH = 65536;
export const DEFAULT_DEPTH = 4;

/**
 * Count-min sketch with conservative update and 32-bit saturating counters held in native memory.
 * Estimates never under-count; with probability at least 1 − delta a key's over-count is at most
 * epsilon × (total events counted).
 *
 * Call {@link close} when done; a sketch dropped without it is freed by a FinalizationRegistry backstop.
 * Any use after close throws {@link SketchClosedError}.
 */
export class CountMinSketch extends SketchShape {
  /** @internal */
  override readonly core: NativeCounters;

  constructor(options: CountMinSketchOptions = {}) {
    super();
    const { width, depth } = resolveShape(options, DEFAULT_WIDTH, DEFAULT_DEPTH);
    this.core = new NativeCounters(width, depth, 1, options.seed ?? 0, options.library);
  }

  /** Counts `count` (default 1) events for `key`; returns the key's estimate including them (add + check in one). */
  add(key: string, count = 1): number {
    if (this.core.closed) this.core.native('CountMinSketch');
    checkKey(key);
    if (count !== 1) checkCount(count);
    return this.core.hit(key, 0, count);
  }

  /** Estimated count of `key`: never below the true count. */
  estimate(key: string): number {
    if (this.core.closed) this.core.native('CountMinSketch');
    checkKey(key);
    return this.core.estimate(key);
  }

  /**
   * Counts one event for each key in a single native call; `out[i]` receives the estimate right after key i.
   * Same result as calling {@link add} in order.
   */
  addMany(keys: readonly string[], out?: Uint32Array): Uint32Array {
    for (const k of keys) checkKey(k);
    return this.core.hitMany(keys, 0, out, 'CountMinSketch');
  }

  /** Adds `other`'s counts into this sketch. Both must have the same width, depth and seed. */
  merge(other: CountMinSketch): void {
    const dst = this.core.native('CountMinSketch');
    const src = other.core.native('CountMinSketch');
    if (this.core.bindings.merge(dst, src) !== 0) {
      throw new SketchConfigError(
        `cannot merge a ${other.width}x${other.depth} sketch (seed ${other.core.seed}) into a ${this.width}x${this.depth} one (seed ${this.core.seed})`,
      );
    }
  }

  /** Resets every counter to zero. */
  clear(): void {
    this.core.bindings.clear(this.core.native('CountMinSketch'));
  }

  /** Releases the native memory now. Idempotent. */
  close(): void {
    this.core.close();
  }
}
