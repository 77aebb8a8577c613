import { verdictOf, verdicts, type BeanEvidence, type EvidenceThresholds } from '../../../src/ghost/verdicts';

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

  it('never-touched only past both thresholds, and says when nothing injects it either', () => {
    expect(verdictOf(bean({}), DEFAULT_THRESHOLDS, NOW)).toMatchObject({ verdict: 'never-touched' });
    const strongest = verdictOf(bean({ ghostCandidate: true }), DEFAULT_THRESHOLDS, NOW);
    expect(strongest.why).toMatch(/strongest signal/);
    expect(strongest.needs).toBeUndefined();
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
