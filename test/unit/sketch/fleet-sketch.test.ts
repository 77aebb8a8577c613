import { FleetSketch, type FleetView, type SubWindowBatch } from '../../../src/sketch/stores/redis/fleet-sketch';
import { fleetSeed } from '../../../src/sketch/stores/redis/store';
import { SATURATED } from '../../../src/sketch/counters';

/**
 * The fleet sketch's bookkeeping without Redis: what a sync round takes, how a reply is folded in, what a
 * failed round gives back, and how the estimate reads in each mode. The real Redis is in test/e2e/fleet.
 */
const WINDOW = 60_000;
const SUB = 20_000;

function sketch(view: Partial<FleetView> = {}, shape = { width: 1024, depth: 4 }) {
  let now = 10 * SUB + 5; // wall clock, just past a sub-window boundary
  const v: FleetView = { mode: 'fleet', nodes: 1, rejectAll: false, ...view };
  const s = new FleetSketch(
    { windowMs: WINDOW, subWindows: 3, ...shape, clock: () => now, autoRotate: false, seed: fleetSeed('LIMIT_60000') },
    v,
  );
  return { s, v, advance: (ms: number) => (now += ms), now: () => now };
}

const SETTLE = 1000;
const take = (s: FleetSketch, now: number) => s.collect(now, SETTLE).batches;

/** What Redis would answer to a batch: the fleet's total per op (here: `others` + this process's increments). */
function totalsFor(batch: SubWindowBatch, fleetElsewhere: number): number[] {
  return batch.deltas.map((delta) => fleetElsewhere + delta);
}

describe('FleetSketch', () => {
  it('takes only the cells a hit changed, once, and sends nothing for an idle sketch', () => {
    const { s, now } = sketch();
    s.hit('alice');
    s.hit('alice');
    const batches = take(s, now());
    const batch = batches.find((b) => b.epoch === 10);
    expect(batch!.expiresAt).toBe(11 * SUB + WINDOW + SUB);
    // depth 4: four cells, each raised twice, pushed as one increment of 2
    expect(batch!.indices).toHaveLength(4);
    expect(batch!.deltas).toEqual([2, 2, 2, 2]);
    // The sub-window that closed 5 ms ago may still get late pushes: the same cells are only read there.
    expect(batches.filter((b) => b !== batch).map((b) => [b.epoch, b.deltas])).toEqual([[9, [0, 0, 0, 0]]]);
    expect(s.collect(now(), SETTLE)).toEqual({ batches: [], loads: [] });
    s.close();
  });

  it.each([
    ['the default shape (its hit unrolled)', { width: 1024, depth: 4 }],
    ['a width not a power of two (the loop)', { width: 1000, depth: 4 }],
    ['three rows (the loop)', { width: 1024, depth: 3 }],
  ])(
    'judges by the fleet: own counts plus what the rest of the fleet had counted at the last sync, %s',
    (_shape, shape) => {
      const { s, now } = sketch({}, shape);
      expect(s.core.unrolled).toBe(shape.width === 1024 && shape.depth === 4);
      s.hit('alice');
      const batch = take(s, now()).find((b) => b.epoch === 10);
      s.apply(batch!, totalsFor(batch!, 40), now(), SETTLE); // 40 more elsewhere
      expect(s.estimate('alice')).toBe(41);
      expect(s.hit('alice')).toBe(42);
      expect(s.estimate('bob')).toBe(0);
      s.close();
    },
  );

  it('gives a failed round back, so the next round pushes the same counts', () => {
    const { s, now } = sketch();
    for (let i = 0; i < 3; i++) s.hit('carol');
    for (const lost of take(s, now())) s.restore(lost);
    s.hit('carol');
    const again = take(s, now()).find((b) => b.epoch === 10);
    expect(again!.deltas).toEqual([4, 4, 4, 4]);
    s.close();
  });

  it('reads the same cells in the other live sub-windows, then a settled closed one whole, once', () => {
    const { s, advance, now } = sketch();
    s.hit('dave');
    take(s, now());
    advance(SUB); // a new sub-window: epoch 11 is current, epoch 10 closed 5 ms ago
    s.maybeRotate();
    s.hit('dave');
    const plan = s.collect(now(), SETTLE);
    const byEpoch = Object.fromEntries(plan.batches.map((b) => [b.epoch, b.deltas]));
    // Epoch 10 closed 5 ms ago: late pushes may still land, so its cells are read one by one; the older
    // live ones (8, 9) are final and planned as whole reads.
    expect(byEpoch).toEqual({ 10: [0, 0, 0, 0], 11: [1, 1, 1, 1] });
    expect(plan.loads.map((l) => l.epoch).sort((a, b) => a - b)).toEqual([8, 9]);
    for (const b of plan.batches) s.apply(b, totalsFor(b, 7), now(), SETTLE);

    advance(2000); // past the settle time: epoch 10 is final and is read whole instead
    s.hit('dave');
    const later = s.collect(now(), SETTLE);
    expect(later.batches.map((b) => b.epoch)).toEqual([11]);
    const load10 = later.loads.find((l) => l.epoch === 10)!;
    expect(load10).toBeDefined();
    const whole = new Uint8Array(4 * 1024 * 4); // every cell of the sub-window: 9 in Redis, this process's 1 among them
    const view = new DataView(whole.buffer);
    for (let cell = 0; cell < 1024 * 4; cell++) view.setUint32(cell * 4, 9);
    s.load(load10, whole);
    s.hit('dave');
    expect(s.collect(now(), SETTLE).loads.map((l) => l.epoch)).not.toContain(10);
    // Epoch 10: 9 in Redis, 8 elsewhere; epoch 11: 7 elsewhere; own 1 + 3.
    expect(s.estimate('dave')).toBe(1 + 8 + 3 + 7);
    // A key never seen here still sees the fleet's final counts of the closed sub-window.
    expect(s.estimate('someone-else')).toBe(9);
    s.close();
  });

  it('counts the sub-windows of the window before it existed: a late joiner reads what the fleet counted there', () => {
    const { s, now } = sketch();
    s.hit('late');
    const plan = s.collect(now(), SETTLE);
    // Epochs 7 and 8 ended long ago (whole reads), 9 just now (cell reads), 10 current (push).
    expect(plan.loads.map((l) => l.epoch).sort((a, b) => a - b)).toEqual([7, 8]);
    expect(plan.batches.map((b) => b.epoch).sort((a, b) => a - b)).toEqual([9, 10]);
    const filled = new Uint8Array(4 * 1024 * 4);
    const view = new DataView(filled.buffer);
    for (let cell = 0; cell < 1024 * 4; cell++) view.setUint32(cell * 4, 30);
    s.load(
      plan.loads.find((l) => l.epoch === 8)!,
      filled,
    );
    s.load(
      plan.loads.find((l) => l.epoch === 7)!,
      null,
    ); // nobody wrote it
    // 30 counted by the fleet in epoch 8, before this process started, plus its own hit.
    expect(s.estimate('late')).toBe(31);
    s.close();
  });

  it('forgets a sub-window once the window has passed it, its fleet counts included', () => {
    const { s, advance, now } = sketch();
    s.hit('erin');
    const batch = take(s, now()).find((b) => b.epoch === 10);
    s.apply(batch!, totalsFor(batch!, 100), now(), SETTLE);
    expect(s.estimate('erin')).toBe(101);
    for (let i = 0; i < 4; i++) {
      advance(SUB);
      s.maybeRotate();
    }
    expect(s.estimate('erin')).toBe(0);
    s.close();
  });

  it('in local-fallback admits the process its share: own count × nodes; fail-mode closed rejects', () => {
    const { s, v } = sketch({ mode: 'local-fallback', nodes: 4 });
    expect(s.hit('frank')).toBe(4);
    expect(s.hit('frank')).toBe(8);
    v.rejectAll = true;
    expect(s.hit('frank')).toBe(SATURATED);
    s.close();
  });

  it('lets cold cells wait while a tenth of the smallest threshold covers them, and pushes them when their sub-window closes', () => {
    const { s, v, advance, now } = sketch({ nodes: 2 });
    s.noteThreshold(1000);
    s.noteThreshold(100); // the smallest counts: 100 ÷ (10 × 2 nodes) = 5 may wait per cell
    s.noteThreshold(5000);
    expect(s.holdBack()).toBe(5);
    v.nodes = 5;
    expect(s.holdBack()).toBe(2);
    v.nodes = 2;
    const own = (_x: string) => take(s, now()).find((b) => b.epoch === 10)?.deltas;

    for (let i = 0; i < 5; i++) s.hit('cold');
    expect(own('cold')).toBeUndefined(); // 5 each: they wait
    s.hit('cold');
    expect(own('cold')).toEqual([6, 6, 6, 6]); // over 5: pushed, all six
    for (let i = 0; i < 3; i++) s.hit('cold');
    expect(own('cold')).toBeUndefined();
    // Nothing new since: what waits is not looked at again, and the round has nothing to send.
    expect(s.collect(now(), SETTLE)).toEqual({ batches: [], loads: [] });

    // The sub-window closes: what waited goes in the next round, whatever its size.
    advance(SUB);
    s.maybeRotate();
    s.hit('new sub-window');
    const plan = s.collect(now(), SETTLE);
    expect(plan.batches.find((b) => b.epoch === 10)!.deltas).toEqual([3, 3, 3, 3]);
    expect(plan.batches.find((b) => b.epoch === 11)).toBeUndefined(); // one hit waits there now
    s.hit('new sub-window');
    expect(take(s, now()).find((b) => b.epoch === 10)).toBeUndefined(); // pushed once, not again
    s.close();
  });

  it('pushes every change in every round while no threshold is known', () => {
    const { s, now } = sketch({ nodes: 3 });
    expect(s.holdBack()).toBe(0);
    s.hit('x');
    expect(take(s, now()).find((b) => b.epoch === 10)!.deltas).toEqual([1, 1, 1, 1]);
    s.close();
  });

  it('derives the same row hashes in every process from the sketch id', () => {
    expect(fleetSeed('LIMIT_60000')).toBe(fleetSeed('LIMIT_60000'));
    expect(fleetSeed('LIMIT_60000')).not.toBe(fleetSeed('LIMIT_1000'));
    const a = sketch().s;
    const b = sketch().s;
    a.hit('same-key');
    b.hit('same-key');
    const cells = (x: FleetSketch) => take(x, 10 * SUB + 5)[0]!.indices;
    expect(cells(a)).toEqual(cells(b));
    a.close();
    b.close();
  });
});
