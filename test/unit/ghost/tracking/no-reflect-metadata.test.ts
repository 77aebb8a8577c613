import { GhostTracker } from '../../../../src/ghost/tracking/tracker';

// reflect-metadata is optional for the tracker: this file never loads it (each jest file has its own globals).

describe('without reflect-metadata', () => {
  it('tracks and restores, copying name and length only', () => {
    expect((Reflect as unknown as { getMetadata?: unknown }).getMetadata).toBeUndefined();
    class S {
      work(a: number): number {
        return a + 1;
      }
    }
    const tracker = new GhostTracker();
    const s = new S();
    expect(tracker.track('s', s)).toMatchObject({ status: 'tracked' });
    const w = s.work;
    expect(w.name).toBe('work');
    expect(w.length).toBe(1);
    expect(w.call(s, 1)).toBe(2);
    expect(tracker.isTouched('s')).toBe(true);
    expect(s.work).toBe(S.prototype.work);
  });
});
