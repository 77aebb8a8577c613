import { checkCount, checkKey, SATURATED } from '../../counters';
import { WindowedCountMinSketch, type WindowedSketchOptions } from '../../window';
import type { FleetMode } from '../types';

/** What the store tells every fleet sketch about the fleet; read on each hit, written by the sync loop. */
export interface FleetView {
  /** `fleet`: estimates add the fleet's counts; `local-fallback`: this process admits its share alone. */
  mode: FleetMode;
  /** Processes that sync this sketch, as last seen (at least 1). */
  nodes: number;
  /** Fail-mode closed after a failed sync: every hit is over the limit until Redis answers again. */
  rejectAll: boolean;
}

/** One BITFIELD read or increment of a sync round, in the order the reply lists them. */
export interface CellOp {
  /** Counter index in this process's sketch: cell base + slot. */
  readonly index: number;
  /** Increment pushed (0 for a plain read). */
  readonly delta: number;
}

/** The commands one sketch sends for one live sub-window in a sync round. */
export interface SubWindowBatch {
  readonly slot: number;
  /** Wall-clock sub-window number: start / subWindowMs. */
  readonly epoch: number;
  /** Wall-clock time after which nobody counts this sub-window any more. */
  readonly expiresAt: number;
  readonly ops: CellOp[];
}

const CHECK_EVERY_MASK = 63;
/** Above any sum of up to 256 saturated slots, and an integer, so the minimum stays in integer arithmetic. */
const NO_ESTIMATE = 2 ** 52;

/**
 * A windowed sketch that counts locally and judges by the fleet. Every hit is counted here first, on the
 * native counters, with no network: this process's own conservative-update counts ("own"), exactly as a
 * local sketch. Beside them, per counter, two arrays the sync loop keeps:
 * - `pending`: own increments not yet pushed to Redis;
 * - `others`: the rest of the fleet's count in that cell, as last read (fleet total minus what this process
 *   had pushed).
 * A hit's estimate is min over rows of Σ over live sub-windows of (own + others): the fleet's count as of the
 * last sync plus everything this process counted since. Sub-windows are aligned on the wall clock so every
 * process cuts the same ones, and the row hashes follow a seed derived from the sketch id, so cells line up.
 *
 * Summing each process's own conservative-update sketch never under-counts a key (each is an upper bound of
 * its own stream), which is why deltas are taken from own counts and never from the mixed view.
 */
export class FleetSketch extends WindowedCountMinSketch {
  private readonly others: Uint32Array;
  private readonly pending: Uint32Array;
  /** 1 when `others` holds the final count of a closed sub-window's cell: it is not read again. */
  private readonly settled: Uint8Array;
  /** Counter indices changed since the last collect(), each once (deduplicated by `marks`). */
  private dirty: Uint32Array;
  private dirtyCount = 0;
  private readonly marks: Uint32Array;
  private generation = 1;

  constructor(
    options: WindowedSketchOptions,
    private readonly view: FleetView,
  ) {
    super({ ...options, alignSubWindows: true });
    const n = this.core.counters.length;
    this.others = new Uint32Array(n);
    this.pending = new Uint32Array(n);
    this.settled = new Uint8Array(n);
    this.marks = new Uint32Array(n);
    this.dirty = new Uint32Array(Math.min(n, 4096));
  }

  /** Bytes this process holds for the sketch: the native counters plus the fleet bookkeeping beside them. */
  get localBytes(): number {
    return this.memoryBytes + this.others.byteLength + this.pending.byteLength + this.settled.byteLength + this.marks.byteLength;
  }

  override hit(key: string, count = 1): number {
    if (this.core.closed) this.core.native('FleetSketch');
    checkKey(key);
    if (count !== 1) checkCount(count);
    if ((++this.calls & CHECK_EVERY_MASK) === 0) this.maybeRotate();
    const core = this.core;
    const slot = this.current;
    const min = core.locate(key, slot);
    const c = core.counters;
    const d = core.depth;
    const s = core.slots;
    const cells = core.cells;
    const pending = this.pending;
    const target = min + count > SATURATED ? SATURATED : min + count;
    for (let i = 0; i < d; i++) {
      const index = cells[i] + slot;
      const old = c[index];
      if (old < target) {
        c[index] = target;
        const p = pending[index] + (target - old);
        pending[index] = p > SATURATED ? SATURATED : p;
        if (this.marks[index] !== this.generation) this.markDirty(index);
      }
    }
    const view = this.view;
    if (view.mode !== 'fleet') {
      if (view.rejectAll) return SATURATED;
      // Alone, this process admits its share: own count × nodes ≤ threshold ⇔ own ≤ threshold ÷ nodes.
      let own = NO_ESTIMATE;
      for (let i = 0; i < d; i++) {
        let sum = 0;
        for (let k = 0; k < s; k++) sum += c[cells[i] + k];
        if (sum < own) own = sum;
      }
      const scaled = own * view.nodes;
      return scaled > SATURATED ? SATURATED : scaled;
    }
    const others = this.others;
    let est = NO_ESTIMATE;
    for (let i = 0; i < d; i++) {
      const cell = cells[i];
      let sum = 0;
      for (let k = 0; k < s; k++) sum += c[cell + k] + others[cell + k];
      if (sum < est) est = sum;
    }
    return est > SATURATED ? SATURATED : est;
  }

  override estimate(key: string): number {
    if (this.core.closed) this.core.native('FleetSketch');
    checkKey(key);
    const core = this.core;
    core.locate(key, this.current);
    const c = core.counters;
    const others = this.view.mode === 'fleet' ? this.others : undefined;
    let est = NO_ESTIMATE;
    for (let i = 0; i < core.depth; i++) {
      const cell = core.cells[i];
      let sum = 0;
      for (let k = 0; k < core.slots; k++) sum += c[cell + k] + (others ? others[cell + k] : 0);
      if (sum < est) est = sum;
    }
    if (others === undefined && this.view.rejectAll) return SATURATED;
    const scaled = others === undefined ? est * this.view.nodes : est;
    return scaled > SATURATED ? SATURATED : scaled;
  }

  /** Batches are not supported on the fleet path: each key goes through {@link hit}. */
  override hitMany(keys: readonly string[], out?: Uint32Array): Uint32Array {
    const result = out ?? new Uint32Array(keys.length);
    for (let i = 0; i < keys.length; i++) result[i] = this.hit(keys[i]);
    return result;
  }

  /** Wall-clock sub-window number of a live slot, or undefined for a free one. */
  epochOf(slot: number): number | undefined {
    return this.inUse[slot] === 1 ? Math.round(this.starts[slot] / this.subWindowMs) : undefined;
  }

  /**
   * Takes everything a sync round must send: per live sub-window, the increments of the cells this process
   * changed since the last round, and reads of those same cells in the other live sub-windows (skipping
   * closed ones already read in full). The increments leave `pending`; give them back with
   * {@link restore} if the round fails. Empty when nothing changed: an idle sketch sends nothing.
   */
  collect(now: number): SubWindowBatch[] {
    this.maybeRotate(now);
    const count = this.dirtyCount;
    if (count === 0) return [];
    const dirty = this.dirty;
    const round = this.generation;
    this.dirtyCount = 0;
    this.generation = round === 0xffffffff ? 1 : round + 1;
    const s = this.core.slots;
    const batches: (SubWindowBatch | undefined)[] = new Array(s);
    for (let k = 0; k < s; k++) {
      const epoch = this.epochOf(k);
      if (epoch === undefined) continue;
      batches[k] = { slot: k, epoch, expiresAt: (epoch + 1) * this.subWindowMs + this.windowMs + this.subWindowMs, ops: [] };
    }
    const bases = new Set<number>();
    for (let j = 0; j < count; j++) {
      const index = dirty[j];
      const slot = index % s;
      const delta = this.pending[index];
      this.pending[index] = 0;
      bases.add(index - slot);
      if (delta > 0) batches[slot]?.ops.push({ index, delta });
    }
    // The same cells in the other live sub-windows: what the rest of the fleet counted there.
    for (const base of bases) {
      for (let k = 0; k < s; k++) {
        const index = base + k;
        if (this.marks[index] === round || this.settled[index] === 1) continue;
        batches[k]?.ops.push({ index, delta: 0 });
      }
    }
    return batches.filter((b): b is SubWindowBatch => b !== undefined && b.ops.length > 0);
  }

  /**
   * Applies a round's reply: `totals[i]` is the fleet's total for `batch.ops[i]` after the round. A
   * sub-window that rotated out meanwhile is skipped. A closed sub-window read once `settleAfterMs` past its
   * end will not change any more and is not read again.
   */
  apply(batch: SubWindowBatch, totals: readonly number[], now: number, settleAfterMs: number): void {
    if (this.epochOf(batch.slot) !== batch.epoch) return;
    const c = this.core.counters;
    const settledSubWindow = now >= (batch.epoch + 1) * this.subWindowMs + settleAfterMs;
    for (let i = 0; i < batch.ops.length; i++) {
      const index = batch.ops[i]!.index;
      const total = totals[i];
      if (typeof total !== 'number' || !Number.isFinite(total)) continue;
      // What this process has pushed of the cell so far: its own count less what is still pending.
      const pushed = c[index] - this.pending[index];
      const others = total - pushed;
      this.others[index] = others > 0 ? (others > SATURATED ? SATURATED : others) : 0;
      if (settledSubWindow) this.settled[index] = 1;
    }
  }

  /** Gives a failed round's increments back to `pending`, to be pushed again by the next round. */
  restore(batch: SubWindowBatch): void {
    if (this.epochOf(batch.slot) !== batch.epoch) return;
    for (const op of batch.ops) {
      if (op.delta === 0) continue;
      const p = this.pending[op.index] + op.delta;
      this.pending[op.index] = p > SATURATED ? SATURATED : p;
      if (this.marks[op.index] !== this.generation) this.markDirty(op.index);
    }
  }

  protected override slotCleared(k: number): void {
    const s = this.core.slots;
    for (let index = k; index < this.others.length; index += s) {
      this.others[index] = 0;
      this.pending[index] = 0;
      this.settled[index] = 0;
    }
  }

  private markDirty(index: number): void {
    this.marks[index] = this.generation;
    if (this.dirtyCount === this.dirty.length) {
      const grown = new Uint32Array(Math.min(this.marks.length, this.dirty.length * 2));
      grown.set(this.dirty);
      this.dirty = grown;
    }
    this.dirty[this.dirtyCount++] = index;
  }
}
