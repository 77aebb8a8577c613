import { WindowedCountMinSketch } from '../../../src/sketch/window';
import { SketchClosedError, SketchConfigError } from '../../../src/sketch/counters';
import { rng, testLibrary, zipf } from './helpers';

const library = testLibrary();

/** Largest number of timestamps (sorted) inside any half-open interval [a, a + windowMs). */
function maxInAnyWindow(times: number[], windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while (times[hi] - times[lo] >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

interface Scenario {
  width: number;
  subWindows: number;
  windowMs: number;
  limit: number;
  keys: number;
  events: number;
  /** chance per call that the (late, irregular) rotation runs before it */
  rotateChance: number;
  seed: number;
}

/** Drives a limiter "admit iff hit(key) ≤ limit" with a fake clock and irregular rotations. */
function run(sc: Scenario): { admitted: Map<string, number[]>; sketch: WindowedCountMinSketch; rejected: number } {
  const random = rng(sc.seed);
  const nextKey = zipf(sc.keys, 1.2, random);
  let now = 1_000;
  const sketch = new WindowedCountMinSketch({
    windowMs: sc.windowMs,
    subWindows: sc.subWindows,
    width: sc.width,
    depth: 3,
    clock: () => now,
    autoRotate: false,
    library,
  });
  const admitted = new Map<string, number[]>();
  let rejected = 0;
  for (let i = 0; i < sc.events; i++) {
    // bursts and lulls: mostly tiny steps, sometimes a long pause
    now += random() < 0.01 ? random() * sc.windowMs * 2 : random() * (sc.windowMs / 200);
    if (random() < sc.rotateChance) sketch.maybeRotate();
    const key = `k${nextKey()}`;
    if (sketch.hit(key) <= sc.limit) {
      let list = admitted.get(key);
      if (list === undefined) admitted.set(key, (list = []));
      list.push(now);
    } else rejected++;
  }
  return { admitted, sketch, rejected };
}

describe('WindowedCountMinSketch: the rate-limit guarantee against an exact reference', () => {
  const scenarios: Scenario[] = [
    // tiny sketch: heavy collisions must only make it stricter
    { width: 64, subWindows: 3, windowMs: 1000, limit: 20, keys: 500, events: 60_000, rotateChance: 0.05, seed: 1 },
    { width: 4096, subWindows: 3, windowMs: 1000, limit: 10, keys: 300, events: 60_000, rotateChance: 1, seed: 2 },
    { width: 4096, subWindows: 1, windowMs: 250, limit: 5, keys: 100, events: 40_000, rotateChance: 0.01, seed: 3 },
    { width: 1024, subWindows: 7, windowMs: 60_000, limit: 50, keys: 1000, events: 60_000, rotateChance: 0.2, seed: 4 },
  ];
  for (const sc of scenarios) {
    it(`never admits more than N calls of a key in any interval of windowMs (w=${sc.width}, sub=${sc.subWindows}, N=${sc.limit}, rotate p=${sc.rotateChance})`, () => {
      const { admitted, sketch, rejected } = run(sc);
      let worst = 0;
      for (const [key, times] of admitted) {
        const m = maxInAnyWindow(times, sc.windowMs);
        if (m > sc.limit) throw new Error(`${key}: ${m} admitted calls within ${sc.windowMs} ms, limit ${sc.limit}`);
        worst = Math.max(worst, m);
      }
      // not vacuous: the limit was reached and calls were rejected
      expect(worst).toBe(sc.limit);
      expect(rejected).toBeGreaterThan(0);
      sketch.close();
    });
  }

  it('without collisions, the estimate is exactly the count since coveredSince(), which lies in [now − windowMs − subWindowMs − 2·maxCheckGap, now − windowMs]', () => {
    const random = rng(99);
    let now = 0;
    const windowMs = 900;
    const sketch = new WindowedCountMinSketch({
      windowMs,
      subWindows: 3,
      width: 1 << 20,
      depth: 4,
      clock: () => now,
      autoRotate: false,
      library,
    });
    const events = new Map<string, number[]>();
    let lastCheck = 0;
    let maxGap = 0;
    for (let i = 0; i < 20_000; i++) {
      now += random() < 0.002 ? random() * 2000 : random() * 5;
      maxGap = Math.max(maxGap, now - lastCheck);
      if (random() < 0.3) {
        sketch.maybeRotate();
        lastCheck = now;
      }
      const key = `k${Math.floor(random() * 20)}`;
      let times = events.get(key);
      if (times === undefined) events.set(key, (times = []));
      times.push(now);
      const est = sketch.hit(key);
      const since = sketch.coveredSince();
      // every event younger than windowMs is still counted…
      expect(since).toBeLessThanOrEqual(Math.max(now - windowMs, 0));
      // …and nothing older than one sub-window plus twice the longest gap between rotation checks beyond that
      expect(since).toBeGreaterThanOrEqual(now - windowMs - sketch.subWindowMs - 2 * maxGap - 1e-9);
      let exact = 0;
      for (let j = times.length - 1; j >= 0 && times[j] >= since; j--) exact++;
      if (est !== exact) throw new Error(`estimate ${est} != exact ${exact} at t=${now}`);
    }
    sketch.close();
  });

  it('rotates from calls even when no timer runs (every 64 hits reads the clock)', () => {
    let now = 0;
    const sketch = new WindowedCountMinSketch({ windowMs: 100, clock: () => now, autoRotate: false, library });
    for (let i = 0; i < 64; i++) sketch.hit('a');
    now = 1000;
    for (let i = 0; i < 64; i++) sketch.hit('b');
    // rotated at 1000, but 'a' may have been counted as late as 1000: it stays until 1000 + windowMs
    expect(sketch.estimate('a')).toBe(64);
    now = 1100;
    for (let i = 0; i < 64; i++) sketch.hit('b');
    expect(sketch.estimate('a')).toBe(0);
    sketch.close();
  });

  it("rotates from its own unref'd timer on the real clock", async () => {
    const sketch = new WindowedCountMinSketch({ windowMs: 40, subWindows: 2, width: 1024, library });
    sketch.hit('x');
    await new Promise((r) => setTimeout(r, 200));
    expect(sketch.estimate('x')).toBe(0);
    sketch.close();
  });

  it('defaults to 1 MiB of counters, windows included (16,384 × 4 rows × 4 slots)', () => {
    const s = new WindowedCountMinSketch({ windowMs: 60000, library, autoRotate: false });
    expect(s.memoryBytes).toBe(1048576);
    expect(s.width).toBe(16384);
    expect(s.depth).toBe(4);
    expect(s.subWindows).toBe(3);
    expect(s.epsilon).toBeCloseTo(Math.E / 16384, 12);
    expect(s.deltaPercent).toBeCloseTo(100 * Math.exp(-4), 9);
    s.close();
  });

  it('validates its options and fails closed after close()', () => {
    expect(() => new WindowedCountMinSketch({ windowMs: 0, library })).toThrow(SketchConfigError);
    expect(() => new WindowedCountMinSketch({ windowMs: 10, subWindows: 0, library })).toThrow(SketchConfigError);
    const s = new WindowedCountMinSketch({ windowMs: 1000, library });
    s.close();
    expect(() => s.hit('a')).toThrow(SketchClosedError);
    expect(() => s.estimate('a')).toThrow(SketchClosedError);
    expect(() => s.hitMany(['a'])).toThrow(SketchClosedError);
    expect(s.maybeRotate(1e12)).toBe(false);
  });

  it('hitMany (one native call) counts like hit in the current sub-window', () => {
    let now = 0;
    const a = new WindowedCountMinSketch({ windowMs: 100, width: 2048, clock: () => now, autoRotate: false, library });
    const b = new WindowedCountMinSketch({ windowMs: 100, width: 2048, clock: () => now, autoRotate: false, library });
    const keys = Array.from({ length: 3000 }, (_, i) => `u${i % 700}`);
    now = 50;
    a.maybeRotate();
    b.maybeRotate();
    const one = keys.map((k) => a.hit(k));
    const many = Array.from(b.hitMany(keys));
    expect(many).toEqual(one);
    a.close();
    b.close();
  });

  describe.each([
    {
      shape: 'default: 4 rows, 4 slots, power-of-two width (unrolled)',
      width: 2048,
      depth: 4,
      subWindows: 3,
      unrolled: true,
    },
    { shape: 'width not a power of two', width: 2000, depth: 4, subWindows: 3, unrolled: false },
    { shape: 'three rows', width: 2048, depth: 3, subWindows: 3, unrolled: false },
    { shape: 'six slots', width: 2048, depth: 4, subWindows: 5, unrolled: false },
  ])('hit in JS counts exactly as the C library: $shape', ({ width, depth, subWindows, unrolled }) => {
    const make = (clock: () => number) =>
      new WindowedCountMinSketch({ windowMs: 90, subWindows, width, depth, clock, autoRotate: false, library });

    it('same estimates as the native batch, across rotations, slot by slot', () => {
      let now = 0;
      const js = make(() => now);
      const c = make(() => now);
      expect(js.core.unrolled).toBe(unrolled);
      const random = rng(7);
      for (let step = 0; step < 12; step++) {
        now += 20; // every sub-window gets events; the oldest are cleared as the window moves on
        const keys = Array.from({ length: 600 }, () => `k${Math.floor(random() * 900)}`);
        js.maybeRotate();
        c.maybeRotate();
        expect(keys.map((k) => js.hit(k))).toEqual(Array.from(c.hitMany(keys)));
      }
      js.close();
      c.close();
    });

    it('saturates at 2^32 − 1, within a slot and summed over slots', () => {
      let now = 0;
      const s = make(() => now);
      expect(s.hit('k', 0xfffffff0)).toBe(0xfffffff0);
      expect(s.hit('k', 0x100)).toBe(0xffffffff);
      now += 90 / subWindows;
      expect(s.maybeRotate()).toBe(true);
      expect(s.hit('k', 5)).toBe(0xffffffff);
      expect(s.estimate('k')).toBe(0xffffffff);
      expect(s.hit('other')).toBeLessThan(0xffffffff);
      s.close();
    });
  });
});
