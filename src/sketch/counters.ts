import { DiagError } from '../shared/errors';
import type { NativeBindings, NativeSketchHandle } from './native/bindings';
import * as hash from './native/hash';
import { nativeLibrary, type NativeLibrary } from './native/loader';

/*
 * hot-imports: the hit path calls these as module-local constants. TypeScript's CommonJS output turns every use
 * of an imported binding (and of an `export const` in its own module) into a property read of a module object,
 * which V8 keeps as loads and checks inside the hit: ~7 % of a hit's instructions (callgrind, docs/sketches.md).
 */
const { fingerprint, fmix32, fp, utf8Length } = hash;

/** A sketch was used after close(). Thrown instead of touching freed native memory. */
export class SketchClosedError extends DiagError {
  constructor(what: string) {
    super('ERR_SKETCH_CLOSED', `${what} is closed; its native memory has been released`);
  }
}

/** Invalid sketch shape or options. */
export class SketchConfigError extends DiagError {
  constructor(message: string) {
    super('ERR_SKETCH_CONFIG', message);
  }
}

/** The native allocation of the counters failed. */
export class SketchAllocationError extends DiagError {
  constructor(bytes: number) {
    super('ERR_SKETCH_ALLOC', `could not allocate ${bytes} bytes of native memory for a sketch`);
  }
}

/** Shape of a sketch: give width/depth directly, or the error bounds they follow from. */
export interface SketchShapeOptions {
  /** Counters per row. Over-count bound epsilon = e / width. */
  readonly width?: number;
  /** Rows, each with its own hash. Failure probability delta = e^(−depth). */
  readonly depth?: number;
  /** Wanted over-count bound (fraction of the events counted); width = ceil(e / epsilon). */
  readonly epsilon?: number;
  /** Wanted failure probability in (0, 1); depth = ceil(ln(1 / delta)). */
  readonly delta?: number;
  /** Seed of the per-row hash parameters. Sketches merge only with the same seed and shape. Default 0. */
  readonly seed?: number;
  /** Library to allocate from; default the process-wide one (loaded on first use). */
  readonly library?: NativeLibrary;
}

/** Largest counter array the C library accepts (2^31 bytes). */
const MAX_COUNTER_BYTES = 2 ** 31;
const SATURATED = 0xffffffff;
export { SATURATED };
const TWO_32 = 4294967296;
/** Above any sum of up to 256 saturated slots, and an integer, so the minimum stays in integer arithmetic. */
const NO_ESTIMATE = 2 ** 52;

function sumSlots(c: Uint32Array, cell: number, slots: number): number {
  let sum = 0;
  for (let k = 0; k < slots; k++) sum += c[cell + k];
  return sum;
}

/** Resolves width/depth from the options; `defaultWidth` applies when neither width nor epsilon is given. */
export function resolveShape(
  options: SketchShapeOptions,
  defaultWidth: number,
  defaultDepth = 4,
): { width: number; depth: number } {
  if (options.width !== undefined && options.epsilon !== undefined)
    throw new SketchConfigError('give width or epsilon, not both');
  if (options.depth !== undefined && options.delta !== undefined)
    throw new SketchConfigError('give depth or delta, not both');
  let width = options.width ?? defaultWidth;
  let depth = options.depth ?? defaultDepth;
  if (options.epsilon !== undefined) {
    if (!(options.epsilon > 0 && options.epsilon < 1))
      throw new SketchConfigError(`epsilon must be in (0, 1), got ${options.epsilon}`);
    width = Math.ceil(Math.E / options.epsilon);
  }
  if (options.delta !== undefined) {
    if (!(options.delta > 0 && options.delta < 1))
      throw new SketchConfigError(`delta must be in (0, 1), got ${options.delta}`);
    depth = Math.max(1, Math.ceil(Math.log(1 / options.delta)));
  }
  if (!Number.isInteger(width) || width < 1)
    throw new SketchConfigError(`width must be a positive integer, got ${width}`);
  if (!Number.isInteger(depth) || depth < 1 || depth > 64)
    throw new SketchConfigError(`depth must be an integer in 1..64, got ${depth}`);
  return { width, depth };
}

const released = new FinalizationRegistry<{ bindings: NativeBindings; handle: NativeSketchHandle }>(
  ({ bindings, handle }) => {
    // backstop for a sketch dropped without close(): nothing else can reach its memory any more
    bindings.destroy(handle);
  },
);

const EMPTY = new Uint32Array(0);

/**
 * Native counters plus the per-row hash parameters, read once so the hot path never crosses into C.
 * Internal: the public sketches wrap it and own its lifetime.
 * @internal
 */
export class NativeCounters {
  /** Live view of the native counters; replaced by an empty array on close so no stale access can crash. */
  counters: Uint32Array;
  readonly width: number;
  readonly depth: number;
  readonly slots: number;
  readonly seed: number;
  readonly memoryBytes: number;
  /** 32 − log2(width) when the width is a power of two ≥ 2, else 0 (use multiply-shift). */
  readonly shift: number;
  readonly mul: Int32Array;
  readonly add: Int32Array;
  /** Scratch: the row cells of the key being counted. */
  readonly cells: Int32Array;
  readonly bindings: NativeBindings;
  /** The windowed sketch's default shape (4 rows, 4 slots, power-of-two width): {@link hit} runs unrolled. */
  readonly unrolled: boolean;
  private handle: NativeSketchHandle | null;

  constructor(width: number, depth: number, slots: number, seed: number, library?: NativeLibrary) {
    const bytes = width * depth * slots * 4;
    if (bytes > MAX_COUNTER_BYTES)
      throw new SketchConfigError(`width * depth * slots * 4 = ${bytes} bytes exceeds 2^31`);
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
      throw new SketchConfigError(`seed must be a 32-bit unsigned integer, got ${seed}`);
    const lib = library ?? nativeLibrary();
    const b = lib.bindings;
    const handle = b.create(width, depth, slots, seed);
    if (handle === null) throw new SketchAllocationError(bytes);
    this.bindings = b;
    this.handle = handle;
    this.width = width;
    this.depth = depth;
    this.slots = slots;
    this.seed = seed;
    this.shift = width >= 2 && (width & (width - 1)) === 0 ? 32 - Math.log2(width) : 0;
    this.memoryBytes = b.memoryBytes(handle);
    this.counters = new Uint32Array(b.view(b.counters(handle), this.memoryBytes));
    this.mul = new Int32Array(depth);
    this.add = new Int32Array(depth);
    for (let i = 0; i < depth; i++) {
      this.mul[i] = b.rowMul(handle, i);
      this.add[i] = b.rowAdd(handle, i);
    }
    this.cells = new Int32Array(depth);
    this.unrolled = depth === 4 && slots === 4 && this.shift > 0;
    released.register(this, { bindings: b, handle }, this);
  }

  get closed(): boolean {
    return this.handle === null;
  }

  /** The native handle, for the few operations done in C (batch, merge, clearing). */
  native(what: string): NativeSketchHandle {
    if (this.handle === null) throw new SketchClosedError(what);
    return this.handle;
  }

  close(): void {
    const handle = this.handle;
    if (handle === null) return;
    this.handle = null;
    this.counters = EMPTY;
    released.unregister(this);
    this.bindings.destroy(handle);
  }

  /**
   * Counts `count` events for `key` in `slot` with conservative update and returns the estimate over all
   * slots right after. Same arithmetic as add_fp in native/cms.c. `others`, per cell (counter index ÷ slots),
   * is added to each row's sum before the minimum is taken: the rest of a fleet's counts (fleet-sketch.ts).
   */
  hit(key: string, slot: number, count: number, others?: Uint32Array): number {
    if (this.unrolled) return this.hitUnrolled(key, slot, count, others);
    const min = this.locate(key, slot);
    const c = this.counters;
    const d = this.depth;
    const s = this.slots;
    const cells = this.cells;
    const target = min + count > SATURATED ? SATURATED : min + count;
    let est = NO_ESTIMATE;
    for (let i = 0; i < d; i++) {
      const cell = cells[i];
      if (c[cell + slot] < target) c[cell + slot] = target;
      let sum = s === 4 ? c[cell] + c[cell + 1] + c[cell + 2] + c[cell + 3] : sumSlots(c, cell, s);
      if (others !== undefined) sum += others[(cell / s) | 0];
      if (sum < est) est = sum;
    }
    return est > SATURATED ? SATURATED : est;
  }

  /**
   * {@link hit} for the default shape, written out row by row: the rows' cells and values stay in registers
   * instead of going through {@link cells} and two loops, ~23 % fewer instructions per hit (callgrind,
   * docs/sketches.md). Each row's cell lies in its own row, so updating all four before summing any is the
   * same as the loop's order.
   */
  private hitUnrolled(key: string, slot: number, count: number, others: Uint32Array | undefined): number {
    fingerprint(key);
    const a = fp.a;
    const b = fp.b;
    const c = this.counters;
    const w = this.width;
    const shift = this.shift;
    const mul = this.mul;
    const add = this.add;
    // each row's cell (counter index ÷ 4), then its first counter
    const r0 = fmix32((a + Math.imul(b, mul[0]) + add[0]) | 0) >>> shift;
    const r1 = w + (fmix32((a + Math.imul(b, mul[1]) + add[1]) | 0) >>> shift);
    const r2 = 2 * w + (fmix32((a + Math.imul(b, mul[2]) + add[2]) | 0) >>> shift);
    const r3 = 3 * w + (fmix32((a + Math.imul(b, mul[3]) + add[3]) | 0) >>> shift);
    const c0 = r0 << 2;
    const c1 = r1 << 2;
    const c2 = r2 << 2;
    const c3 = r3 << 2;
    const v0 = c[c0 + slot];
    const v1 = c[c1 + slot];
    const v2 = c[c2 + slot];
    const v3 = c[c3 + slot];
    let min = v0 < v1 ? v0 : v1;
    if (v2 < min) min = v2;
    if (v3 < min) min = v3;
    const target = min + count > SATURATED ? SATURATED : min + count;
    if (v0 < target) c[c0 + slot] = target;
    if (v1 < target) c[c1 + slot] = target;
    if (v2 < target) c[c2 + slot] = target;
    if (v3 < target) c[c3 + slot] = target;
    let s0 = c[c0] + c[c0 + 1] + c[c0 + 2] + c[c0 + 3];
    let s1 = c[c1] + c[c1 + 1] + c[c1 + 2] + c[c1 + 3];
    let s2 = c[c2] + c[c2 + 1] + c[c2 + 2] + c[c2 + 3];
    let s3 = c[c3] + c[c3 + 1] + c[c3 + 2] + c[c3 + 3];
    if (others !== undefined) {
      s0 += others[r0];
      s1 += others[r1];
      s2 += others[r2];
      s3 += others[r3];
    }
    let est = s0 < s1 ? s0 : s1;
    if (s2 < est) est = s2;
    if (s3 < est) est = s3;
    return est > SATURATED ? SATURATED : est;
  }

  /**
   * Hashes `key` into {@link cells} (the first counter of each row's cell; a cell's slots follow it) and
   * returns the smallest of those cells' values in `slot`: where a conservative update starts.
   */
  locate(key: string, slot: number): number {
    fingerprint(key);
    const a = fp.a;
    const b = fp.b;
    const c = this.counters;
    const w = this.width;
    const d = this.depth;
    const s = this.slots;
    const shift = this.shift;
    const mul = this.mul;
    const add = this.add;
    const cells = this.cells;
    let min = SATURATED;
    for (let i = 0; i < d; i++) {
      const h = fmix32((a + Math.imul(b, mul[i]) + add[i]) | 0);
      // multiply-shift range reduction, as in C; a plain shift when the width is a power of two
      const col = shift > 0 ? h >>> shift : Math.floor(((h >>> 0) * w) / TWO_32);
      const cell = (i * w + col) * s;
      cells[i] = cell;
      const v = c[cell + slot];
      if (v < min) min = v;
    }
    return min;
  }

  estimate(key: string): number {
    fingerprint(key);
    const a = fp.a;
    const b = fp.b;
    const c = this.counters;
    const w = this.width;
    const s = this.slots;
    const shift = this.shift;
    let est = NO_ESTIMATE;
    for (let i = 0; i < this.depth; i++) {
      const h = fmix32((a + Math.imul(b, this.mul[i]) + this.add[i]) | 0);
      const col = shift > 0 ? h >>> shift : Math.floor(((h >>> 0) * w) / TWO_32);
      const sum = sumSlots(c, (i * w + col) * s, s);
      if (sum < est) est = sum;
    }
    return est > SATURATED ? SATURATED : est;
  }

  /** One native call for many keys: packs them as UTF-8 with cumulative end offsets. */
  hitMany(keys: readonly string[], slot: number, out: Uint32Array | undefined, what: string): Uint32Array {
    const handle = this.native(what);
    const n = keys.length;
    const result = out ?? new Uint32Array(n);
    if (result.length < n) throw new SketchConfigError(`out has ${result.length} slots for ${n} keys`);
    if (n === 0) return result;
    const ends = new Uint32Array(n);
    let end = 0;
    for (let i = 0; i < n; i++) {
      end += utf8Length(keys[i]);
      ends[i] = end;
    }
    let packed = Buffer.from(keys.join(''), 'utf8');
    // a lone high surrogate ending one key pairs with a low one starting the next once joined: encode apart
    if (packed.length !== end) {
      packed = Buffer.allocUnsafe(end);
      let offset = 0;
      for (let i = 0; i < n; i++) offset += packed.write(keys[i], offset, 'utf8');
    }
    this.bindings.addBatch(handle, slot, packed, ends, n, result);
    return result;
  }
}

/** Validates an event count: a 32-bit unsigned integer. */
export function checkCount(count: number): void {
  if (count >>> 0 !== count) throw new SketchConfigError(`count must be an integer in 0..2^32-1, got ${count}`);
}

/** The key must be a string; anything else would hash as its coercion and collide silently. */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string') throw new SketchConfigError(`sketch keys are strings, got ${typeof key}`);
}

/**
 * What every sketch shape reports about itself, read from its native counters: the fields the actuator's
 * detail endpoint and the telemetry serve.
 */
export abstract class SketchShape {
  /** @internal */
  abstract readonly core: NativeCounters;

  get width(): number {
    return this.core.width;
  }
  get depth(): number {
    return this.core.depth;
  }
  /** Over-count bound as a fraction of the events held: e / width. */
  get epsilon(): number {
    return Math.E / this.core.width;
  }
  /** Chance, in percent, that an estimate exceeds the bound: 100 · e^(−depth). */
  get deltaPercent(): number {
    return 100 * Math.exp(-this.core.depth);
  }
  /** Native bytes held by the counters, every window slot included. */
  get memoryBytes(): number {
    return this.core.memoryBytes;
  }
  get closed(): boolean {
    return this.core.closed;
  }
}
