import { SketchRegistry } from '../../../src/sketch/registry';
import { SketchConfigError } from '../../../src/sketch/counters';
import { RedisSketchStore } from '../../../src/sketch/stores/redis/store';
import { captureLogs } from '../../support/logs';
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

  it('after shutdown() closes its sketches and its store, still creates sketches, in this process only', async () => {
    // A client whose every round fails: the store under test never reaches a network (test/e2e/fleet does).
    const client = { pipeline: () => ({ exec: () => Promise.reject(new Error('no server in a unit test')) }) };
    const store = new RedisSketchStore({ client, address: 'redis://nowhere:6379' });
    const reg = new SketchRegistry({ library, autoRotate: false, store });
    const fleet = reg.getOrCreate('LIMIT', 10);
    expect(reg.placement('LIMIT_10')).toMatchObject({ store: 'redis', fleet: { mode: 'local-fallback' } });
    fleet.hit('k');
    const logs = captureLogs();
    try {
      await reg.shutdown(); // its last push fails: one WARN naming the server
    } finally {
      logs.restore();
    }
    expect(logs.warnings).toEqual([
      expect.stringMatching(
        /^sketch store: Redis at redis:\/\/nowhere:6379 is not reachable \(no server in a unit test\)/,
      ),
    ]);
    expect(fleet.closed).toBe(true);
    expect(() => store.create('LIMIT_10', { windowMs: 10 })).toThrow(SketchConfigError);
    const local = reg.getOrCreate('LIMIT', 10);
    expect(reg.placement('LIMIT_10')).toEqual({ store: 'native' });
    local.close();
  });
});
