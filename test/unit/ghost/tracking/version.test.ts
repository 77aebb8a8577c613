import { GhostTracker } from '../../../../src/ghost/tracking/tracker';

describe('GhostTracker.version', () => {
  it('grows when the snapshot can change and stays put on later calls', () => {
    const t = new GhostTracker();
    const bean = {
      go(): number {
        return 1;
      },
    };
    const v0 = t.version;
    t.track('Bean', bean);
    const v1 = t.version;
    expect(v1).toBeGreaterThan(v0);
    bean.go();
    const v2 = t.version;
    expect(v2).toBeGreaterThan(v1);
    bean.go();
    expect(t.version).toBe(v2);
  });
});
