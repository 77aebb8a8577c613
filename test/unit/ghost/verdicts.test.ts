import {
  hoursText,
  verdictOf,
  verdicts,
  type BeanEvidence,
  type EvidenceThresholds,
} from '../../../src/ghost/verdicts';

/** diag.ghost-tracking.ledger.min-days and min-process-hours by default. */
const DEFAULT_THRESHOLDS: EvidenceThresholds = { minDays: 14, minProcessHours: 168 };

const NOW = Date.parse('2026-11-25T12:00:00Z');
const DAY = 86_400_000;
const bean = (over: Partial<BeanEvidence>): BeanEvidence => ({
  name: 'Svc',
  ghostCandidate: false,
  tracked: true,
  firstSeen: NOW - 30 * DAY,
  processHours: 1_000,
  live: true,
  ...over,
});

describe('one verdict per bean', () => {
  it('in-use once a tracked method was called, whatever else holds', () => {
    const v = verdictOf(
      bean({ lastTouched: NOW - DAY, ghostCandidate: true, processHours: 0 }),
      DEFAULT_THRESHOLDS,
      NOW,
    );
    expect(v).toMatchObject({
      verdict: 'in-use',
      ghostCandidate: true,
      lastTouched: new Date(NOW - DAY).toISOString(),
    });
  });

  it("says a use in the current last-use period is that period's first, not its latest", () => {
    // The wrappers go back once a period: a bean called every second still shows its first call of the period.
    const recent = verdictOf(bean({ lastTouched: NOW - 52_000 }), DEFAULT_THRESHOLDS, NOW);
    expect(recent.why).toBe(
      `used 52 seconds ago (${new Date(NOW - 52_000).toISOString()}), the first use of its 1 day last-use period: later calls within it are not seen`,
    );
    // An older use is the last one seen, to the period.
    expect(verdictOf(bean({ lastTouched: NOW - 2 * DAY }), DEFAULT_THRESHOLDS, NOW).why).toMatch(
      /^last used 2 days ago/,
    );
  });

  it('never-touched only past both thresholds, and says when nothing injects it either', () => {
    expect(verdictOf(bean({}), DEFAULT_THRESHOLDS, NOW)).toMatchObject({ verdict: 'never-touched' });
    const strongest = verdictOf(bean({ ghostCandidate: true }), DEFAULT_THRESHOLDS, NOW);
    expect(strongest.why).toMatch(/; nothing injects it either \(strongest signal\)$/);
    expect(strongest.needs).toBeUndefined();
    // a candidate injected only by other candidates is not "injected by nothing": it goes with them
    const held = verdictOf(bean({ ghostCandidate: true, neededOnlyBy: ['A', 'B'] }), DEFAULT_THRESHOLDS, NOW);
    expect(held.why).toMatch(/; only the ghost candidates A, B inject it: remove it together with those candidates$/);
    expect(held.why).not.toMatch(/nothing injects/);
  });

  it('insufficient-evidence below either threshold, with what is still missing', () => {
    const young = verdictOf(bean({ firstSeen: NOW - 4 * DAY }), DEFAULT_THRESHOLDS, NOW);
    expect(young).toMatchObject({ verdict: 'insufficient-evidence', needs: { days: 10, processHours: 0 } });
    const quiet = verdictOf(bean({ processHours: 100 }), DEFAULT_THRESHOLDS, NOW);
    expect(quiet).toMatchObject({ verdict: 'insufficient-evidence', needs: { days: 0, processHours: 68 } });
    // thresholds are settable, in fractions, so that a test (or a team) can judge in seconds
    expect(
      verdictOf(
        bean({ firstSeen: NOW - 2_000, processHours: 0.001 }),
        { minDays: 1 / 86_400, minProcessHours: 0.0005 },
        NOW,
      ).verdict,
    ).toBe('never-touched');
  });

  it('untrackable with its reason, never a verdict either way; retired once no live process has it', () => {
    expect(
      verdictOf(bean({ tracked: false, untrackableReason: 'already-proxied' }), DEFAULT_THRESHOLDS, NOW),
    ).toMatchObject({
      verdict: 'untrackable',
      why: 'Phase 2 cannot tell: already-proxied',
    });
    // its processes ran Phase 2, but not on it: the evidence does not say "all tracked" (an outside trial read it so)
    const untracked = verdictOf(
      bean({ tracked: false, untrackableReason: 'non-singleton', processes: { total: 1, tracked: 1 } }),
      DEFAULT_THRESHOLDS,
      NOW,
    );
    expect(untracked.evidence).toContain(', 1 process;');
    expect(untracked.evidence).not.toContain('all tracked');
    expect(verdictOf(bean({ processes: { total: 2, tracked: 2 } }), DEFAULT_THRESHOLDS, NOW).evidence).toContain(
      '2 processes (all tracked)',
    );
    expect(verdictOf(bean({ live: false, lastTouched: NOW }), DEFAULT_THRESHOLDS, NOW).verdict).toBe('retired');
  });

  it('lists the most likely dead first: by verdict, a Phase 1 candidate first within one, then by name', () => {
    const list = verdicts(
      [
        bean({ name: 'Used', lastTouched: NOW }),
        bean({ name: 'Young', firstSeen: NOW }),
        bean({ name: 'DeadB' }),
        bean({ name: 'DeadA' }),
        bean({ name: 'DeadCandidate', ghostCandidate: true }),
        bean({ name: 'Proxy', tracked: false, untrackableReason: 'already-proxied' }),
        bean({ name: 'Gone', live: false }),
      ],
      DEFAULT_THRESHOLDS,
      NOW,
    );
    expect(list.map((v) => `${v.verdict}:${v.name}`)).toEqual([
      'never-touched:DeadCandidate',
      'never-touched:DeadA',
      'never-touched:DeadB',
      'insufficient-evidence:Young',
      'untrackable:Proxy',
      'in-use:Used',
      'retired:Gone',
    ]);
  });
});

describe('a service partly tracked (issue #45)', () => {
  const half = { total: 2, tracked: 1 };

  it('is never never-touched while the tracked share of its processes is below the minimum (default: all)', () => {
    const v = verdictOf(bean({ processes: half, untrackedProcessHours: 500 }), DEFAULT_THRESHOLDS, NOW);
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.why).toContain('never called on the 1 of 2 processes that tracked it (50%)');
    expect(v.why).toContain('calls on the 1 untracked process are not seen');
    expect(v.why).not.toContain('any instance');
    expect(v.needs).toEqual({ days: 0, processHours: 0, trackedShare: 0.5 });
    expect(v.evidence).toContain('1 of 2 processes tracked (50%)');
    expect(v.evidence).toContain('(and 500 process-hours untracked)');
  });

  it('may be never-touched at a share the team settles for (a canary), saying what it did not see', () => {
    const v = verdictOf(
      bean({ processes: { total: 10, tracked: 1 } }),
      { ...DEFAULT_THRESHOLDS, minTrackedShare: 0.1 },
      NOW,
    );
    expect(v.verdict).toBe('never-touched');
    expect(v.why).toMatch(/^never called on the 1 of 10 processes that tracked it \(10%\); calls on the 9 untracked/);
  });

  it('says "any of the processes" only when every one tracked', () => {
    const v = verdictOf(bean({ processes: { total: 3, tracked: 3 } }), DEFAULT_THRESHOLDS, NOW);
    expect(v).toMatchObject({ verdict: 'never-touched', why: 'never called on any of the 3 processes that had it' });
  });

  it('says "that served it" when only the processes serving its endpoints count (others could not call it)', () => {
    const v = verdictOf(bean({ processes: { total: 1, tracked: 1 }, countedWhere: 'served' }), DEFAULT_THRESHOLDS, NOW);
    expect(v.why).toBe('never called on the one process that served it');
  });
});

describe('last use (issue #45)', () => {
  const thresholds = { ...DEFAULT_THRESHOLDS, lastUseResolutionMs: DAY };

  it('a bean used before but not within the window (widened by one resolution period) is dormant, with when and where', () => {
    const v = verdictOf(bean({ lastTouched: NOW - 16 * DAY, lastTouchedVersion: '1.0.0' }), thresholds, NOW);
    expect(v.verdict).toBe('dormant');
    expect(v.why).toBe(
      `used before, not within the last 14 days: last used 16 days ago (${new Date(NOW - 16 * DAY).toISOString()}) in version 1.0.0`,
    );
    // within the window plus one period: a use in the last period may not have been seen yet
    expect(verdictOf(bean({ lastTouched: NOW - 14.5 * DAY }), thresholds, NOW).verdict).toBe('in-use');
  });

  it('a window shorter than the resolution never gives dormant', () => {
    const coarse = { minDays: 0.5, minProcessHours: 0, lastUseResolutionMs: DAY };
    expect(verdictOf(bean({ lastTouched: NOW - 300 * DAY }), coarse, NOW).verdict).toBe('in-use');
    // seconds, as the tests run: a 5 s window at 1 s resolution
    const fine = { minDays: 5 / 86_400, minProcessHours: 0, lastUseResolutionMs: 1_000 };
    expect(verdictOf(bean({ lastTouched: NOW - 7_000 }), fine, NOW).verdict).toBe('dormant');
    expect(verdictOf(bean({ lastTouched: NOW - 5_500 }), fine, NOW).verdict).toBe('in-use');
  });

  it('a partly tracked service does not make a bean dormant (its use may be on the untracked processes)', () => {
    const v = verdictOf(bean({ lastTouched: NOW - 20 * DAY, processes: { total: 2, tracked: 1 } }), thresholds, NOW);
    expect(v.verdict).toBe('in-use');
    expect(v.why).toContain('not seen');
  });
});

describe('process time in words', () => {
  it('says minutes or seconds of process time below a tenth of an hour, never 0.000004 process-hours', () => {
    expect(hoursText(500)).toBe('500 process-hours');
    expect(hoursText(0.5)).toBe('0.5 process-hours');
    expect(hoursText(0.05)).toBe('3 process-minutes');
    expect(hoursText(0.000004)).toBe('1 process-second');
    expect(hoursText(10 / 3600)).toBe('10 process-seconds');
    expect(hoursText(0)).toBe('0 process-hours');
  });
});
