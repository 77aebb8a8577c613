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
/** Above any sum of up to 256 saturated slots, and an integer, so the minimum stays in integer arithmetic. */
const NO_ESTIMATE = 2 ** 52;
/**
 * Extra admissions the increments a process holds back may cause, as a fraction of the smallest threshold:
 * each of N processes keeps at most threshold ÷ (HOLD_BACK_SHARE · N) increments of a cell unpushed.
 */
const HOLD_BACK_SHARE = 10;

/**
 * A windowed sketch that counts locally and judges by the fleet. Every hit is counted here first, on the
 * native counters, with no network: this process's own conservative-update counts ("own"), exactly as a
 * local sketch. Beside the counters the sync loop keeps, per counter:
 * - `pushed`: how much of the own count Redis has (or is being sent);
 * - `others`: the rest of the fleet's count in that cell, as last read (fleet total less `pushed`);
 * and per cell `othersTotal`, the sum of `others` over the live sub-windows. A hit's estimate is min over rows
 * of (Σ own over the slots + othersTotal): the fleet's count as of the last sync plus everything this process
 * counted since. The hit path does a local hit plus one read per row; it keeps no bookkeeping for the sync
 * loop, which finds the changed cells itself by comparing the counters with `pushed` (only after hits).
 * Sub-windows are aligned on the wall clock so every process cuts the same ones, and the row hashes follow a
 * seed derived from the sketch id, so cells line up.
 *
 * Cold cells wait: in the current sub-window a cell is pushed once it holds more than `holdBack` unpushed
 * increments, the rest when its sub-window closes. On distinct keys most cells are hit a few times per
 * sub-window, so a push then carries several hits instead of one operation per hit and row.
 *
 * Summing each process's own conservative-update sketch never under-counts a key (each is an upper bound of
 * its own stream), which is why pushes are taken from own counts and never from the mixed view.
 */
export class FleetSketch extends WindowedCountMinSketch {
  private readonly pushed: Uint32Array;
  private readonly others: Uint32Array;
  /** Per cell (counter index ÷ slots): Σ others over the slots, saturated. */
  private readonly othersTotal: Uint32Array;
  /** 1 when `others` holds the final count of a closed sub-window's cell: it is not read again. */
  private readonly settled: Uint8Array;
  /** Per slot: 1 once its closed sub-window was read whole. */
  private readonly loaded: Uint8Array;
  /** Per slot: 1 while it may hold increments not pushed yet. */
  private readonly unpushed: Uint8Array;
  /** `calls` when the sync loop last looked for changed cells. */
  private scannedCalls = 0;
  /** A failed round gave increments back: the current sub-window is looked at again without new hits. */
  private rescan = false;
  /** The smallest threshold estimates are judged against; Infinity while nobody said (nothing waits). */
  private minThreshold = Infinity;

  constructor(
    options: WindowedSketchOptions,
    private readonly view: FleetView,
  ) {
    super({ ...options, alignSubWindows: true });
    const n = this.core.counters.length;
    this.pushed = new Uint32Array(n);
    this.others = new Uint32Array(n);
    this.othersTotal = new Uint32Array(n / this.core.slots);
    this.settled = new Uint8Array(n);
    this.loaded = new Uint8Array(this.core.slots);
    this.unpushed = new Uint8Array(this.core.slots);
  }

  override noteThreshold(threshold: number): void {
    if (Number.isFinite(threshold) && threshold >= 1 && threshold < this.minThreshold)
      this.minThreshold = Math.floor(threshold);
  }

  /**
   * Increments of one cell a process may keep unpushed in the current sub-window: with N processes each
   * holding at most this many, the fleet's view of a key lags by at most a tenth of the smallest threshold.
   * 0 (push every change) while no threshold is known.
   */
  holdBack(): number {
    if (this.minThreshold === Infinity) return 0;
    return Math.floor(this.minThreshold / (HOLD_BACK_SHARE * Math.max(1, this.view.nodes)));
  }

  override hit(key: string, count = 1): number {
    if (this.core.closed) this.core.native('FleetSketch');
    checkKey(key);
    if (count !== 1) checkCount(count);
    if ((++this.calls & CHECK_EVERY_MASK) === 0) this.maybeRotate();
    const view = this.view;
    if (view.mode === 'fleet') return this.core.hit(key, this.current, count, this.othersTotal);
    const own = this.core.hit(key, this.current, count);
    if (view.rejectAll) return SATURATED;
    // Alone, this process admits its share: own count × nodes ≤ threshold ⇔ own ≤ threshold ÷ nodes.
    const scaled = own * view.nodes;
    return scaled > SATURATED ? SATURATED : scaled;
  }

  override estimate(key: string): number {
    if (this.core.closed) this.core.native('FleetSketch');
    checkKey(key);
    const core = this.core;
    core.locate(key, this.current);
    const c = core.counters;
    const s = core.slots;
    const fleet = this.view.mode === 'fleet';
    let est = NO_ESTIMATE;
    for (let i = 0; i < core.depth; i++) {
      const cell = core.cells[i];
      let sum = fleet ? this.othersTotal[(cell / s) | 0] : 0;
      for (let k = 0; k < s; k++) sum += c[cell + k];
      if (sum < est) est = sum;
    }
    if (!fleet && this.view.rejectAll) return SATURATED;
    const scaled = fleet ? est : est * this.view.nodes;
    return scaled > SATURATED ? SATURATED : scaled;
  }

  override maybeRotate(now?: number): boolean {
    const closing = this.current;
    const rotated = super.maybeRotate(now);
    // Hits since the sync loop last looked may sit in the sub-window that just closed: it is pushed whole.
    if (rotated && this.calls !== this.scannedCalls) this.unpushed[closing] = 1;
    return rotated;
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
   * Takes everything a sync round must send: the increments of the current sub-window's cells that hold more
   * than {@link holdBack} unpushed, and all that closed sub-windows still hold; reads of the pushed cells in
   * closed sub-windows that may still change (for 2·S + timeout after their end, `settleAfterMs`); and whole
   * reads of closed sub-windows that no longer can, once each — one GET where per-cell reads would cost an
   * operation per new key. What it takes counts as pushed; give it back with {@link restore} if the round
   * fails. Empty when nothing changed: an idle sketch sends nothing. `everything`: nothing waits (the last
   * round before the process stops).
   */
  collect(now: number, settleAfterMs: number, everything = false): SyncPlan {
    this.maybeRotate(now);
    const s = this.core.slots;
    const current = this.current;
    const fresh = this.calls !== this.scannedCalls || this.rescan;
    this.scannedCalls = this.calls;
    this.rescan = false;
    if (fresh) this.unpushed[current] = 1;
    // What the current sub-window held back last time cannot have grown without new hits: not looked at again.
    const scanCurrent = this.unpushed[current] === 1 && (fresh || everything);
    let work = scanCurrent;
    for (let k = 0; k < s; k++) if (k !== current && this.unpushed[k] === 1 && this.inUse[k] === 1) work = true;
    if (!work) return { batches: [], loads: [] };

    const batches: SubWindowBatch[] = [];
    const loads: SubWindowLoad[] = [];
    const reads: SubWindowBatch[] = [];
    let head: SubWindowBatch | undefined;
    for (let k = 0; k < s; k++) {
      const epoch = this.epochOf(k);
      if (epoch === undefined) continue;
      const batch: SubWindowBatch = {
        slot: k,
        epoch,
        expiresAt: (epoch + 1) * this.subWindowMs + this.windowMs + this.subWindowMs,
        indices: [],
        deltas: [],
      };
      batches.push(batch);
      if (k === current) {
        head = batch;
        if (scanCurrent) this.unpushed[k] = this.take(batch, everything ? 0 : this.holdBack()) ? 1 : 0;
      } else if (this.unpushed[k] === 1) {
        // A closed sub-window gets no more hits: everything it holds goes now, its cells are read next round.
        this.take(batch, 0);
        this.unpushed[k] = 0;
      } else if (this.loaded[k] === 0) {
        if (now >= (epoch + 1) * this.subWindowMs + settleAfterMs) loads.push({ slot: k, epoch });
        else reads.push(batch);
      }
    }
    // The cells pushed now, in closed sub-windows still open to late pushes: what the rest of the fleet
    // counted there. Rare: only in the first 2·S + timeout after a sub-window closes.
    if (head !== undefined) {
      for (const index of head.indices) {
        const base = index - head.slot;
        for (const read of reads) {
          if (this.settled[base + read.slot] === 1) continue;
          read.indices.push(base + read.slot);
          read.deltas.push(0);
        }
      }
    }
    return { batches: batches.filter((b) => b.indices.length > 0), loads };
  }

  /**
   * Takes every counter of `batch`'s slot holding more than `holdBack` unpushed increments into the batch, as
   * pushed. Returns whether increments were left behind.
   */
  private take(batch: SubWindowBatch, holdBack: number): boolean {
    const c = this.core.counters;
    const pushed = this.pushed;
    const n = c.length;
    let left = false;
    for (let index = batch.slot; index < n; index += this.core.slots) {
      const delta = c[index] - pushed[index];
      if (delta === 0) continue;
      if (delta <= holdBack) {
        left = true;
        continue;
      }
      pushed[index] = c[index];
      batch.indices.push(index);
      batch.deltas.push(delta);
    }
    return left;
  }

  /**
   * Takes a closed sub-window read whole (`GET` of its key: big-endian u32 counters, shorter when its tail
   * was never written, null when nobody wrote it): every cell's fleet count is final from now on.
   */
  load(load: SubWindowLoad, bytes: Uint8Array | null): void {
    if (this.epochOf(load.slot) !== load.epoch) return;
    const s = this.core.slots;
    const cells = this.core.counters.length / s;
    const view = bytes === null ? undefined : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const available = view === undefined ? 0 : Math.min(cells, Math.floor(view.byteLength / 4));
    for (let cell = 0; cell < cells; cell++) {
      const index = cell * s + load.slot;
      this.setOthers(index, cell < available ? view!.getUint32(cell * 4) : 0);
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

  /** Gives a failed round's increments back, to be pushed again by the next round. */
  restore(batch: SubWindowBatch): void {
    if (this.epochOf(batch.slot) !== batch.epoch) return;
    let back = false;
    for (let i = 0; i < batch.indices.length; i++) {
      const delta = batch.deltas[i]!;
      if (delta === 0) continue;
      const index = batch.indices[i]!;
      this.pushed[index] = this.pushed[index] > delta ? this.pushed[index] - delta : 0;
      back = true;
    }
    if (back) {
      this.unpushed[batch.slot] = 1;
      this.rescan = true;
    }
  }

  protected override slotCleared(k: number): void {
    this.loaded[k] = 0;
    this.unpushed[k] = 0;
    const s = this.core.slots;
    const n = this.core.counters.length;
    for (let index = k; index < n; index += s) {
      this.pushed[index] = 0;
      this.settled[index] = 0;
      if (this.others[index] !== 0) this.setOthersRaw(index, 0);
    }
  }

  /** `others` from the fleet's total of a cell: the total less what this process has pushed of it so far. */
  private setOthers(index: number, total: number): void {
    const others = total - this.pushed[index];
    this.setOthersRaw(index, others > 0 ? (others > SATURATED ? SATURATED : others) : 0);
  }

  private setOthersRaw(index: number, value: number): void {
    if (this.others[index] === value) return;
    this.others[index] = value;
    const s = this.core.slots;
    const base = index - (index % s);
    let sum = 0;
    for (let k = 0; k < s; k++) sum += this.others[base + k];
    this.othersTotal[base / s] = sum > SATURATED ? SATURATED : sum;
  }
}
