import { actuatorSources, EMPTY_SKETCH_REGISTRY, ghostTrackingDisabled } from '../../../src/actuator';
import { fakeGhostReport, FakeSketches, LIMIT } from './fakes';

describe('actuatorSources', () => {
  it('fills every gap: DISABLED snapshot, no report yet, empty sketch registry', () => {
    const s = actuatorSources({});
    expect(s.ghosts()).toEqual(ghostTrackingDisabled());
    expect(s.diagReport()).toBeUndefined();
    expect(s.sketches()).toBe(EMPTY_SKETCH_REGISTRY);
    expect(s.sketches().list()).toEqual([]);
    expect(s.ghostsVersion).toBeUndefined();
  });

  it('says how to enable tracking in the DISABLED snapshot', () => {
    expect(ghostTrackingDisabled()).toMatchObject({
      status: 'DISABLED',
      message: expect.stringMatching(/diag\.ghost-tracking\.enabled=true/),
    });
  });

  it('reads the tracker, the report and the registry lazily, at each call', () => {
    let tracker: { ghostSnapshot: () => ReturnType<typeof fakeGhostReport> } | undefined;
    let registry: FakeSketches | undefined;
    const s = actuatorSources({
      ghosts: () => tracker,
      diagReport: () => ({ orphans: [] }),
      sketches: () => registry,
      ghostsVersion: () => 7,
    });
    expect(s.ghosts()).toMatchObject({ status: 'DISABLED' });
    expect(s.ghostsVersion?.()).toBe(-1);
    tracker = { ghostSnapshot: () => fakeGhostReport(2) };
    registry = new FakeSketches([LIMIT]);
    expect(s.ghosts()).toEqual(fakeGhostReport(2));
    expect(s.ghostsVersion?.()).toBe(7);
    expect(s.sketches().get('LIMIT_60000')).toEqual(LIMIT);
    expect(s.diagReport()).toEqual({ orphans: [] });
  });

  it('accepts a tracker object directly', () => {
    const s = actuatorSources({ ghosts: { ghostSnapshot: () => fakeGhostReport(1) } });
    expect(s.ghosts()).toEqual(fakeGhostReport(1));
  });
});
