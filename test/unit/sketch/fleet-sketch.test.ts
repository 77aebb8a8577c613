import { FleetSketch, type FleetView, type SubWindowBatch } from '../../../src/sketch/stores/redis/fleet-sketch';
import { fleetSeed } from '../../../src/sketch/stores/redis/store';
import { SATURATED } from '../../../src/sketch/counters';

/**
 * The fleet sketch's bookkeeping without Redis: what a sync round takes, how a reply is folded in, what a
 * failed round gives back, and how the estimate reads in each mode. The real Redis is in test/e2e/fleet.
 */
const WINDOW = 60_000;
const SUB = 20_000;

function sketch(view: Partial<FleetView> = {}) {
  let now = 10 * SUB + 5; // wall clock, just past a sub-window boundary
  const v: FleetView = { mode: 'fleet', nodes: 1, rejectAll: false, ...view };
  const s = new FleetSketch({ windowMs: WINDOW, subWindows: 3, width: 1024, depth: 4, clock: () => now, autoRotate: false, seed: fleetSeed('LIMIT_60000') }, v);
  return { s, v, advance: (ms: number) => (now += ms), now: () => now };
}

/** What Redis would answer to a batch: the fleet's total per op (here: `others` + this process's increments). */
function totalsFor(batch: SubWindowBatch, fleetElsewhere: number): number[] {
  return batch.ops.map((op) => fleetElsewhere + op.delta);
}

describe('FleetSketch', () => {
  it('takes only the cells a hit changed, once, and sends nothing for an idle sketch', () => {
    const { s, now } = sketch();
    s.hit('alice');
    s.hit('alice');
    const [batch, ...rest] = s.collect(now());
    expect(rest).toEqual([]);
    expect(batch!.epoch).toBe(10);
    expect(batch!.expiresAt).toBe(11 * SUB + WINDOW + SUB);
    // depth 4: four cells, each raised twice, pushed as one increment of 2
    expect(batch!.ops).toHaveLength(4);
    expect(batch!.ops.every((op) => op.delta === 2)).toBe(true);
    expect(s.collect(now())).toEqual([]);
    s.close();
  });

  it('judges by the fleet: own counts plus what the rest of the fleet had counted at the last sync', () => {
    const { s, now } = sketch();
    s.hit('alice');
    const [batch] = s.collect(now());
    s.apply(batch!, totalsFor(batch!, 40), now(), 1000); // 40 more elsewhere
    expect(s.estimate('alice')).toBe(41);
    expect(s.hit('alice')).toBe(42);
    expect(s.estimate('bob')).toBe(0);
    s.close();
  });

  it('gives a failed round back, so the next round pushes the same counts', () => {
    const { s, now } = sketch();
    for (let i = 0; i < 3; i++) s.hit('carol');
    const [lost] = s.collect(now());
    s.restore(lost!);
    s.hit('carol');
    const [again] = s.collect(now());
    expect(again!.ops.map((op) => op.delta)).toEqual([4, 4, 4, 4]);
    s.close();
  });

  it('reads the same cells in the other live sub-windows, and not again once a closed one is settled', () => {
    const { s, advance, now } = sketch();
    s.hit('dave');
    s.collect(now());
    advance(SUB); // a new sub-window: slot 1 holds epoch 11, slot 0 (epoch 10) is closed
    s.maybeRotate();
    s.hit('dave');
    const batches = s.collect(now());
    const byEpoch = Object.fromEntries(batches.map((b) => [b.epoch, b.ops.map((op) => op.delta)]));
    expect(byEpoch).toEqual({ 10: [0, 0, 0, 0], 11: [1, 1, 1, 1] });
    // Answered 2 s past epoch 10's end: its counts are final, and it is never read again.
    advance(2000);
    for (const b of batches) s.apply(b, totalsFor(b, 7), now(), 1000);
    s.hit('dave');
    const next = s.collect(now());
    expect(next.map((b) => b.epoch)).toEqual([11]);
    // Epoch 10: Redis holds 7, this process's pushed hit among them (6 elsewhere); epoch 11: 7 elsewhere
    // + 1 pushed. Own: 1 + 2.
    expect(s.estimate('dave')).toBe(1 + 6 + 2 + 7);
    s.close();
  });

  it('forgets a sub-window once the window has passed it, its fleet counts included', () => {
    const { s, advance, now } = sketch();
    s.hit('erin');
    const [batch] = s.collect(now());
    s.apply(batch!, totalsFor(batch!, 100), now(), 1000);
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

  it('derives the same row hashes in every process from the sketch id', () => {
    expect(fleetSeed('LIMIT_60000')).toBe(fleetSeed('LIMIT_60000'));
    expect(fleetSeed('LIMIT_60000')).not.toBe(fleetSeed('LIMIT_1000'));
    const a = sketch().s;
    const b = sketch().s;
    a.hit('same-key');
    b.hit('same-key');
    const cells = (x: FleetSketch) => x.collect(10 * SUB + 5)[0]!.ops.map((op) => op.index);
    expect(cells(a)).toEqual(cells(b));
    a.close();
    b.close();
  });
});
