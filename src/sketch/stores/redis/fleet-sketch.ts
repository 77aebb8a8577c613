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

/** A closed sub-window whose counts can no longer change: read whole, once, instead of cell by cell. */
export interface SubWindowLoad {
  readonly slot: number;
  readonly epoch: number;
}

/**
 * The BITFIELD operations one sketch sends for one live sub-window in a sync round, in reply order:
 * `indices[i]` is a counter index of this process's sketch (cell base + slot), `deltas[i]` the increment
 * pushed, 0 for a plain read.
 */
export interface SubWindowBatch {
  readonly slot: number;
  /** Wall-clock sub-window number: start / subWindowMs. */
  readonly epoch: number;
  /** Wall-clock time after which nobody counts this sub-window any more. */
  readonly expiresAt: number;
  readonly indices: number[];
  readonly deltas: number[];
}

/** What one sync round of one sketch sends. */
export interface SyncPlan {
  readonly batches: SubWindowBatch[];
  readonly loads: SubWindowLoad[];
}

const CHECK_EVERY_MASK = 63;
/** Fields of `side`, two per counter. */
const OTHERS = 0;
const PENDING = 1;
/** Above any sum of up to 256 saturated slots, and an integer, so the minimum stays in integer arithmetic. */
const NO_ESTIMATE = 2 ** 52;

/**
 * A windowed sketch that counts locally and judges by the fleet. Every hit is counted here first, on the
 * native counters, with no network: this process's own conservative-update counts ("own"), exactly as a
 * local sketch. Beside each counter the sync loop keeps two numbers:
 * - PENDING: own increments not yet pushed to Redis (a counter with some is in the `dirty` list, once);
 * - OTHERS: the rest of the fleet's count in that cell, as last read (fleet total less what this process had
 *   pushed).
 * A hit's estimate is min over rows of Σ over live sub-windows of (own + others): the fleet's count as of the
 * last sync plus everything this process counted since. Sub-windows are aligned on the wall clock so every
 * process cuts the same ones, and the row hashes follow a seed derived from the sketch id, so cells line up.
 *
 * Summing each process's own conservative-update sketch never under-counts a key (each is an upper bound of
 * its own stream), which is why deltas are taken from own counts and never from the mixed view.
 */
export class FleetSketch extends WindowedCountMinSketch {
  /**
   * [OTHERS, PENDING] per counter, side by side: a cell's slots span 32 bytes, so a hit reads one more cache
   * line per row than a local sketch, not one per field.
   */
  private readonly side: Uint32Array;
  /** 1 when OTHERS holds the final count of a closed sub-window's cell: it is not read again. */
  private readonly settled: Uint8Array;
  /** Per slot: 1 once its closed sub-window was read whole. */
  private readonly loaded: Uint8Array;
  /** Counter indices with PENDING > 0, each once. */
  private dirty: Uint32Array;
  private dirtyCount = 0;

  constructor(
    options: WindowedSketchOptions,
    private readonly view: FleetView,
  ) {
    super({ ...options, alignSubWindows: true });
    const n = this.core.counters.length;
    this.side = new Uint32Array(2 * n);
    this.settled = new Uint8Array(n);
    this.loaded = new Uint8Array(this.core.slots);
    this.dirty = new Uint32Array(Math.min(n, 4096));
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
    const side = this.side;
    const target = min + count > SATURATED ? SATURATED : min + count;
    for (let i = 0; i < d; i++) {
      const index = cells[i] + slot;
      const old = c[index];
      if (old < target) {
        c[index] = target;
        const at = (index << 1) + PENDING;
        const pending = side[at];
        if (pending === 0) this.markDirty(index);
        const p = pending + (target - old);
        side[at] = p > SATURATED ? SATURATED : p;
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
    let est = NO_ESTIMATE;
    for (let i = 0; i < d; i++) {
      const cell = cells[i];
      let sum = 0;
      for (let k = 0; k < s; k++) sum += c[cell + k] + side[((cell + k) << 1) + OTHERS];
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
    const fleet = this.view.mode === 'fleet';
    let est = NO_ESTIMATE;
    for (let i = 0; i < core.depth; i++) {
      const cell = core.cells[i];
      let sum = 0;
      for (let k = 0; k < core.slots; k++) sum += c[cell + k] + (fleet ? this.side[((cell + k) << 1) + OTHERS] : 0);
      if (sum < est) est = sum;
    }
    if (!fleet && this.view.rejectAll) return SATURATED;
    const scaled = fleet ? est : est * this.view.nodes;
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
   * changed since the last round; reads of those same cells in closed sub-windows that may still change (for
   * 2·S + timeout after their end, `settleAfterMs`); and whole reads of closed sub-windows that no longer can,
   * once each — one GET where per-cell reads would cost an operation per new key. The increments leave
   * PENDING; give them back with {@link restore} if the round fails. Empty when nothing changed: an idle
   * sketch sends nothing.
   */
  collect(now: number, settleAfterMs: number): SyncPlan {
    this.maybeRotate(now);
    const count = this.dirtyCount;
    if (count === 0) return { batches: [], loads: [] };
    this.dirtyCount = 0;
    const s = this.core.slots;
    const batches: (SubWindowBatch | undefined)[] = new Array(s);
    const loads: SubWindowLoad[] = [];
    const readSlots: number[] = [];
    for (let k = 0; k < s; k++) {
      const epoch = this.epochOf(k);
      if (epoch === undefined) continue;
      const expiresAt = (epoch + 1) * this.subWindowMs + this.windowMs + this.subWindowMs;
      batches[k] = { slot: k, epoch, expiresAt, indices: [], deltas: [] };
      if (k === this.current || this.loaded[k] === 1) continue;
      if (now >= (epoch + 1) * this.subWindowMs + settleAfterMs) loads.push({ slot: k, epoch });
      else readSlots.push(k);
    }
    const side = this.side;
    const dirty = this.dirty;
    for (let j = 0; j < count; j++) {
      const index = dirty[j];
      const at = (index << 1) + PENDING;
      const delta = side[at];
      side[at] = 0;
      const batch = batches[index % s];
      if (batch !== undefined && delta > 0) {
        batch.indices.push(index);
        batch.deltas.push(delta);
      }
    }
    // The same cells in closed sub-windows still open to late pushes: what the rest of the fleet counted there.
    // Rare: only in the first 2·S + timeout after a sub-window closes.
    if (readSlots.length > 0) {
      const bases = new Set<number>();
      for (let j = 0; j < count; j++) bases.add(dirty[j] - (dirty[j] % s));
      for (const base of bases) {
        for (const k of readSlots) {
          const batch = batches[k]!;
          const index = base + k;
          if (this.settled[index] === 1 || batch.indices.includes(index)) continue;
          batch.indices.push(index);
          batch.deltas.push(0);
        }
      }
    }
    return { batches: batches.filter((b): b is SubWindowBatch => b !== undefined && b.indices.length > 0), loads };
  }

  /**
   * Takes a closed sub-window read whole (`GET` of its key: big-endian u32 counters, shorter when its tail
   * was never written, null when nobody wrote it): every cell's fleet count is final from now on.
   */
  load(load: SubWindowLoad, bytes: Uint8Array | null): void {
    if (this.epochOf(load.slot) !== load.epoch) return;
    const c = this.core.counters;
    const s = this.core.slots;
    const cells = c.length / s;
    const view = bytes === null ? undefined : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const available = view === undefined ? 0 : Math.min(cells, Math.floor(view.byteLength / 4));
    for (let cell = 0; cell < cells; cell++) {
      const index = cell * s + load.slot;
      const total = cell < available ? view!.getUint32(cell * 4) : 0;
      this.setOthers(index, total);
      this.settled[index] = 1;
    }
    this.loaded[load.slot] = 1;
  }

  /**
   * Applies a round's reply: `totals[i]` is the fleet's total for `batch.indices[i]` after the round. A
   * sub-window that rotated out meanwhile is skipped. A closed sub-window read once `settleAfterMs` past its
   * end will not change any more and is not read again.
   */
  apply(batch: SubWindowBatch, totals: readonly number[], now: number, settleAfterMs: number): void {
    if (this.epochOf(batch.slot) !== batch.epoch) return;
    const settledSubWindow = now >= (batch.epoch + 1) * this.subWindowMs + settleAfterMs;
    for (let i = 0; i < batch.indices.length; i++) {
      const total = totals[i];
      if (typeof total !== 'number' || !Number.isFinite(total)) continue;
      const index = batch.indices[i]!;
      this.setOthers(index, total);
      if (settledSubWindow) this.settled[index] = 1;
    }
  }

  /** Gives a failed round's increments back to PENDING, to be pushed again by the next round. */
  restore(batch: SubWindowBatch): void {
    if (this.epochOf(batch.slot) !== batch.epoch) return;
    for (let i = 0; i < batch.indices.length; i++) {
      const delta = batch.deltas[i]!;
      if (delta === 0) continue;
      const index = batch.indices[i]!;
      const at = (index << 1) + PENDING;
      if (this.side[at] === 0) this.markDirty(index);
      const p = this.side[at] + delta;
      this.side[at] = p > SATURATED ? SATURATED : p;
    }
  }

  protected override slotCleared(k: number): void {
    this.loaded[k] = 0;
    const n = this.core.counters.length;
    for (let index = k; index < n; index += this.core.slots) {
      this.side[(index << 1) + OTHERS] = 0;
      this.side[(index << 1) + PENDING] = 0;
      this.settled[index] = 0;
    }
  }

  /** OTHERS from the fleet's total of a cell: the total less what this process has pushed of it so far. */
  private setOthers(index: number, total: number): void {
    const pushed = this.core.counters[index] - this.side[(index << 1) + PENDING];
    const others = total - pushed;
    this.side[(index << 1) + OTHERS] = others > 0 ? (others > SATURATED ? SATURATED : others) : 0;
  }

  private markDirty(index: number): void {
    if (this.dirtyCount === this.dirty.length) {
      // Past the cell count only by the rare duplicate a cleared slot leaves behind.
      const grown = new Uint32Array(this.dirty.length * 2);
      grown.set(this.dirty);
      this.dirty = grown;
    }
    this.dirty[this.dirtyCount++] = index;
  }
}
