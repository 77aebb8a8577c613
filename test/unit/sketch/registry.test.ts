import { SketchRegistry } from '../../../src/sketch/registry';
import { SketchConfigError } from '../../../src/sketch/counters';
import type { SketchRegistryView } from '../../../src/sketch/types';
import { testLibrary } from './helpers';

const library = testLibrary();

describe('SketchRegistry', () => {
  it('shares one sketch per <TYPE>_<windowMs> and lists them in id order with their detail', () => {
    const reg = new SketchRegistry({ library, autoRotate: false });
    const a = reg.getOrCreate('LIMIT', 60000);
    expect(reg.getOrCreate('LIMIT', 60000)).toBe(a);
    reg.getOrCreate('FRAUD', 1000);
    reg.getOrCreate('SHIELD', 60000);
    const view: SketchRegistryView = reg;
    expect(view.list().map((i) => i.id)).toEqual(['FRAUD_1000', 'LIMIT_60000', 'SHIELD_60000']);
    expect(view.get('LIMIT_60000')).toEqual({
      id: 'LIMIT_60000',
      epsilon: Math.E / 16384,
      deltaPercent: 100 * Math.exp(-4),
      memoryBytes: 1048576,
    });
    expect(view.get('LIMIT_1')).toBeUndefined();
    reg.closeAll();
    expect(view.list()).toEqual([]);
  });

  it('uses the injected clock for every sketch', () => {
    let now = 0;
    const reg = new SketchRegistry({ library, clock: () => now, autoRotate: false });
    const s = reg.getOrCreate('LIMIT', 100);
    s.hit('k');
    now = 1000;
    s.maybeRotate();
    expect(s.estimate('k')).toBe(1);
    now = 1100;
    s.maybeRotate();
    expect(s.estimate('k')).toBe(0);
    reg.closeAll();
  });

  it('accepts user-defined types, rejects malformed ids and conflicting shapes', () => {
    const reg = new SketchRegistry({ library, autoRotate: false });
    expect(SketchRegistry.idOf('MY_TYPE', 5)).toBe('MY_TYPE_5');
    expect(() => reg.getOrCreate('', 10)).toThrow(SketchConfigError);
    expect(() => reg.getOrCreate('LIMIT', 0)).toThrow(SketchConfigError);
    expect(() => reg.getOrCreate('LIMIT', 1.5)).toThrow(SketchConfigError);
    expect(() => reg.getOrCreate('a b', 10)).toThrow(SketchConfigError);
    reg.getOrCreate('CUSTOM', 10, { width: 1024 });
    expect(reg.getOrCreate('CUSTOM', 10, { width: 1024 }).width).toBe(1024);
    expect(reg.getOrCreate('CUSTOM', 10).width).toBe(1024);
    expect(() => reg.getOrCreate('CUSTOM', 10, { width: 2048 })).toThrow(SketchConfigError);
    reg.closeAll();
  });

  it('forgets a sketch its user closed, and delete() closes', () => {
    const reg = new SketchRegistry({ library, autoRotate: false });
    const s = reg.getOrCreate('LIMIT', 10);
    s.close();
    expect(reg.get('LIMIT_10')).toBeUndefined();
    const t = reg.getOrCreate('LIMIT', 10);
    expect(t).not.toBe(s);
    expect(reg.delete('LIMIT_10')).toBe(true);
    expect(t.closed).toBe(true);
    expect(reg.delete('LIMIT_10')).toBe(false);
  });
});
