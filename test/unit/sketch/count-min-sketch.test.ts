import { CountMinSketch } from '../../../src/sketch/count-min-sketch';
import { SketchClosedError, SketchConfigError } from '../../../src/sketch/counters';
import { rng, testLibrary, zipf } from './helpers';

const library = testLibrary();

describe('CountMinSketch', () => {
  it('defaults to exactly 1 MiB of counters and reports epsilon = e/width, delta_percent = 100·e^-depth', () => {
    const s = new CountMinSketch({ library });
    expect(s.width).toBe(65536);
    expect(s.depth).toBe(4);
    expect(s.memoryBytes).toBe(1048576);
    expect(s.epsilon).toBeCloseTo(Math.E / 65536, 12);
    expect(s.epsilon).toBeCloseTo(4.1479e-5, 8);
    expect(s.deltaPercent).toBeCloseTo(1.8316, 3);
    s.close();
  });

  it('derives width and depth from (epsilon, delta)', () => {
    const s = new CountMinSketch({ epsilon: 0.001, delta: 0.01, library });
    expect(s.width).toBe(Math.ceil(Math.E / 0.001));
    expect(s.depth).toBe(5);
    expect(s.epsilon).toBeLessThanOrEqual(0.001);
    expect(s.deltaPercent / 100).toBeLessThanOrEqual(0.01);
    expect(s.memoryBytes).toBe(s.width * 5 * 4);
    s.close();
  });

  it('rejects contradictory or invalid shapes with a typed error', () => {
    expect(() => new CountMinSketch({ width: 10, epsilon: 0.1, library })).toThrow(SketchConfigError);
    expect(() => new CountMinSketch({ depth: 0, library })).toThrow(SketchConfigError);
    expect(() => new CountMinSketch({ width: 1.5, library })).toThrow(SketchConfigError);
    expect(() => new CountMinSketch({ delta: 1, library })).toThrow(SketchConfigError);
    expect(() => new CountMinSketch({ width: 2 ** 28, depth: 4, library })).toThrow(/exceeds 2\^31/);
  });

  it('add returns the estimate including the event; estimate reads without counting', () => {
    const s = new CountMinSketch({ width: 1024, depth: 4, library });
    expect(s.estimate('a')).toBe(0);
    expect(s.add('a')).toBe(1);
    expect(s.add('a', 5)).toBe(6);
    expect(s.estimate('a')).toBe(6);
    expect(s.add('b', 0)).toBe(0);
    expect(() => s.add('a', -1)).toThrow(SketchConfigError);
    expect(() => s.add(42 as unknown as string)).toThrow(SketchConfigError);
    s.clear();
    expect(s.estimate('a')).toBe(0);
    s.close();
  });

  it('saturates at 2^32 − 1 instead of wrapping', () => {
    const s = new CountMinSketch({ width: 64, depth: 2, library });
    expect(s.add('k', 0xffffffff)).toBe(0xffffffff);
    expect(s.add('k', 0xffffffff)).toBe(0xffffffff);
    expect(s.add('k')).toBe(0xffffffff);
    const t = new CountMinSketch({ width: 64, depth: 2, library });
    t.add('k', 0xfffffff0);
    s.merge(t);
    expect(s.estimate('k')).toBe(0xffffffff);
    s.close();
    t.close();
  });

  it('merges two sketches of the same shape (estimates add up) and refuses other shapes', () => {
    const a = new CountMinSketch({ width: 4096, depth: 4, library });
    const b = new CountMinSketch({ width: 4096, depth: 4, library });
    a.add('x', 3);
    b.add('x', 4);
    b.add('y', 2);
    a.merge(b);
    expect(a.estimate('x')).toBeGreaterThanOrEqual(7);
    expect(a.estimate('y')).toBeGreaterThanOrEqual(2);
    const other = new CountMinSketch({ width: 4096, depth: 4, seed: 9, library });
    expect(() => a.merge(other)).toThrow(SketchConfigError);
    const narrow = new CountMinSketch({ width: 2048, depth: 4, library });
    expect(() => a.merge(narrow)).toThrow(SketchConfigError);
    for (const s of [a, b, other, narrow]) s.close();
  });

  it('throws SketchClosedError after close, never touching freed memory; close is idempotent', () => {
    const s = new CountMinSketch({ library });
    s.add('k');
    s.close();
    s.close();
    expect(s.closed).toBe(true);
    expect(() => s.add('k')).toThrow(SketchClosedError);
    expect(() => s.estimate('k')).toThrow(SketchClosedError);
    expect(() => s.addMany(['k'])).toThrow(SketchClosedError);
    expect(() => s.clear()).toThrow(SketchClosedError);
    const live = new CountMinSketch({ library });
    expect(() => live.merge(s)).toThrow(SketchClosedError);
    expect(() => s.merge(live)).toThrow(SketchClosedError);
    try {
      s.add('k');
    } catch (err) {
      expect((err as SketchClosedError).code).toBe('ERR_SKETCH_CLOSED');
    }
    live.close();
  });
});

describe('accuracy on Zipf-distributed keys', () => {
  // width 2000 keeps epsilon·N meaningful at this N; the default width would make every error zero
  const cases = [
    { width: 2000, depth: 4, s: 1.1, events: 200_000, keys: 50_000 },
    { width: 500, depth: 3, s: 0.8, events: 100_000, keys: 20_000 },
  ];
  for (const c of cases) {
    it(`never under-counts and stays within epsilon·N for ≥ 1 − delta of keys (w=${c.width}, d=${c.depth}, s=${c.s})`, () => {
      const random = rng(c.width * 31 + c.depth);
      const next = zipf(c.keys, c.s, random);
      const sketch = new CountMinSketch({ width: c.width, depth: c.depth, library });
      const truth = new Map<string, number>();
      for (let i = 0; i < c.events; i++) {
        const key = `key-${next()}`;
        truth.set(key, (truth.get(key) ?? 0) + 1);
        const est = sketch.add(key);
        if (est < truth.get(key)!) throw new Error(`under-count for ${key}: ${est} < ${truth.get(key)}`);
      }
      const bound = sketch.epsilon * c.events;
      let over = 0;
      let worst = 0;
      for (const [key, count] of truth) {
        const err = sketch.estimate(key) - count;
        expect(err).toBeGreaterThanOrEqual(0);
        if (err > bound) over++;
        worst = Math.max(worst, err);
      }
      const delta = sketch.deltaPercent / 100;
      expect(over / truth.size).toBeLessThanOrEqual(delta);
      // sanity: the test is not vacuous, collisions did happen
      expect(worst).toBeGreaterThan(0);
      sketch.close();
    });
  }
});
