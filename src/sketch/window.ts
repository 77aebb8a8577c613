import { performance } from 'node:perf_hooks';

import {
  checkCount,
  checkKey,
  NativeCounters,
  resolveShape,
  SketchConfigError,
  SketchShape,
  type SketchShapeOptions,
} from './counters';

/** Default total counter memory of a windowed sketch, all sub-windows included: 1 MiB. */
export const DEFAULT_MEMORY_BYTES = 1048576;
export const DEFAULT_SUB_WINDOWS = 3;

/** Options of a {@link WindowedCountMinSketch}. */
export interface WindowedSketchOptions extends SketchShapeOptions {
  /** Length of the rate window in milliseconds (a positive integer). */
  readonly windowMs: number;
  /**
   * The window is cut into this many sub-windows of windowMs / subWindows; the sketch keeps one more slot
   * than that. More sub-windows forget old events sooner (lookback ≤ windowMs · (1 + 1/subWindows)) but
   * leave fewer counters per slot. Default 3 (4 slots).
   */
  readonly subWindows?: number;
  /** Milliseconds from a monotonic clock. Default `performance.now()`. Inject a fake one in tests. */
  readonly clock?: () => number;
  /** Rotate sub-windows from an unref'd timer too (default true); otherwise only on calls and maybeRotate(). */
  readonly autoRotate?: boolean;
  /**
   * Start every sub-window at a multiple of subWindowMs on the clock instead of subWindowMs after the last
   * one, so that processes reading synchronised wall clocks (`clock: Date.now`) cut the same sub-windows: what
   * the Redis fleet store needs to add their counts up. Default false.
   */
  readonly alignSubWindows?: boolean;
}

const CHECK_EVERY_MASK = 63;

/**
 * Count-min sketch over a sliding time window, for rate limiting.
 *
 * Slots (one per sub-window plus the current one) are interleaved in each counter cell. An event counts
 * in the current slot; an estimate sums a key's cells over all slots, taking the minimum over rows. A slot
 * is only cleared once every event in it is at least `windowMs` old. Hence the guarantee (docs/sketches.md):
 * if a caller admits a call only when {@link hit} returns at most N, no key is ever admitted more than N
 * times within any interval of length windowMs — whatever the hash collisions and whenever the rotations
 * run. The price is caution: an estimate may still include events up to windowMs + windowMs/subWindows
 * (plus any rotation delay) old, plus the sketch's over-count.
 */
export class WindowedCountMinSketch extends SketchShape {
  /** @internal */
  override readonly core: NativeCounters;
  readonly windowMs: number;
  readonly subWindows: number;
  /** Length of one sub-window: windowMs / subWindows. */
  readonly subWindowMs: number;
  protected readonly clock: () => number;
  /** Clock time each slot's sub-window started at. */
  protected readonly starts: Float64Array;
  private readonly ends: Float64Array;
  /** 1 while a slot holds events that may still count. */
  protected readonly inUse: Uint8Array;
  /** The slot events are counted in now. */
  protected current = 0;
  /** Hits since the last rotation check. */
  protected calls = 0;
  private readonly aligned: boolean;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: WindowedSketchOptions) {
    super();
    const windowMs = options.windowMs;
    if (!Number.isSafeInteger(windowMs) || windowMs < 1)
      throw new SketchConfigError(`windowMs must be a positive integer, got ${windowMs}`);
    const subWindows = options.subWindows ?? DEFAULT_SUB_WINDOWS;
    if (!Number.isInteger(subWindows) || subWindows < 1 || subWindows > 255)
      throw new SketchConfigError(`subWindows must be an integer in 1..255, got ${subWindows}`);
    const slots = subWindows + 1;
    // depth first: the default width spends what is left of the 1 MiB budget
    const { depth } = resolveShape({ depth: options.depth, delta: options.delta }, 1);
    const { width } = resolveShape(
      { width: options.width, epsilon: options.epsilon, depth },
      Math.floor(DEFAULT_MEMORY_BYTES / (4 * depth * slots)),
    );
    this.core = new NativeCounters(width, depth, slots, options.seed ?? 0, options.library);
    this.windowMs = windowMs;
    this.subWindows = subWindows;
    this.subWindowMs = windowMs / subWindows;
    this.clock = options.clock ?? (() => performance.now());
    this.aligned = options.alignSubWindows === true;
    this.starts = new Float64Array(slots);
    this.ends = new Float64Array(slots).fill(-Infinity);
    this.inUse = new Uint8Array(slots);
    const now = this.clock();
    if (this.aligned) {
      // Aligned sub-windows are shared with other processes, whose counts in the window before this sketch
      // existed still count: the past sub-windows start out live (empty here), the newest slot current.
      const epoch = Math.floor(now / this.subWindowMs);
      for (let k = 0; k < slots; k++) {
        const e = epoch - (slots - 1 - k);
        this.starts[k] = e * this.subWindowMs;
        this.ends[k] = k === slots - 1 ? -Infinity : (e + 1) * this.subWindowMs;
        this.inUse[k] = 1;
      }
      this.current = slots - 1;
    } else {
      this.starts[0] = now;
      this.inUse[0] = 1;
    }
    if (options.autoRotate !== false) {
      const self = new WeakRef(this);
      const period = Math.min(2 ** 31 - 1, Math.max(1, Math.floor(this.subWindowMs / 4)));
      // the timer holds only a weak reference, so an unclosed sketch can still be collected
      const timer: NodeJS.Timeout = setInterval(() => {
        const sketch = self.deref();
        if (sketch === undefined) clearInterval(timer);
        else sketch.maybeRotate();
      }, period);
      timer.unref();
      this.timer = timer;
    }
  }

  /**
   * Counts `count` (default 1) events for `key` now and returns the key's estimate in the window, these
   * events included: the add + check of a rate limiter. Admit the call when the result is ≤ the limit.
   */
  hit(key: string, count = 1): number {
    if (this.core.closed) this.core.native('WindowedCountMinSketch');
    checkKey(key);
    if (count !== 1) checkCount(count);
    // reading the clock on every call would cost more than the hit; any rotation time is sound
    if ((++this.calls & CHECK_EVERY_MASK) === 0) this.maybeRotate();
    return this.core.hit(key, this.current, count);
  }

  /** The key's estimated count in the window, without counting. */
  estimate(key: string): number {
    if (this.core.closed) this.core.native('WindowedCountMinSketch');
    checkKey(key);
    return this.core.estimate(key);
  }

  /** {@link hit} for many keys in one native call; `out[i]` receives the estimate right after key i. */
  hitMany(keys: readonly string[], out?: Uint32Array): Uint32Array {
    for (const k of keys) checkKey(k);
    this.maybeRotate();
    return this.core.hitMany(keys, this.current, out, 'WindowedCountMinSketch');
  }

  /**
   * Clears every slot whose events are all at least windowMs old, and starts a new sub-window if the
   * current one has lasted subWindowMs. Never clears anything younger, whatever `now` says, so calling it early,
   * late or not at all only makes the sketch stricter. Returns whether a new sub-window started.
   */
  maybeRotate(now: number = this.clock()): boolean {
    if (this.core.closed) return false;
    const cur = this.current;
    const horizon = now - this.windowMs;
    const slots = this.core.slots;
    // expired slots go at every check, not only at rotations, so late rotations do not stretch the lookback
    for (let k = 0; k < slots; k++) {
      if (k !== cur && this.inUse[k] === 1 && this.ends[k] <= horizon) {
        this.core.bindings.clearSlot(this.core.native('WindowedCountMinSketch'), k);
        this.inUse[k] = 0;
        this.ends[k] = -Infinity;
        this.slotCleared(k);
      }
    }
    if (!(now - this.starts[cur] >= this.subWindowMs)) return false;
    const next = (cur + 1) % slots;
    if (next === cur || this.inUse[next] === 1) return false;
    this.ends[cur] = now;
    this.starts[next] = this.subWindowStart(now);
    this.inUse[next] = 1;
    this.current = next;
    return true;
  }

  /**
   * Tells the sketch a threshold its estimates are compared against (each sketch decorator calls it once for
   * its own). A local sketch has no use for it; a fleet sketch lets a cell's increments wait for a later sync
   * only while the smallest threshold it was told of keeps the extra admissions under a tenth of it.
   */
  noteThreshold(threshold: number): void {
    void threshold;
  }

  /** Called after slot `k` was cleared, for subclasses that keep state per slot. */
  protected slotCleared(_k: number): void {}

  private subWindowStart(now: number): number {
    // Aligned: the sub-window the clock is in, even when a rotation comes late.
    return this.aligned ? Math.floor(now / this.subWindowMs) * this.subWindowMs : now;
  }

  /**
   * Clock time of the oldest event the sketch may still count. Every event after `now − windowMs` is
   * counted; none before `coveredSince()`.
   */
  coveredSince(): number {
    let oldest = Infinity;
    for (let k = 0; k < this.core.slots; k++)
      if (this.inUse[k] === 1 && this.starts[k] < oldest) oldest = this.starts[k];
    return oldest;
  }

  /** Releases the native memory and stops the rotation timer. Idempotent. */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.core.close();
  }
}
