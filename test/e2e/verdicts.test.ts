/**
 * One verdict per bean in a single run (issue #36): the ghost report and the live snapshot carry `verdicts`,
 * built from both phases and the run's evidence, most likely dead first. The thresholds are settings, in
 * fractions, so that a run of seconds can reach them.
 */
import { actuatorPort, getJson, LOADING_CASES, startApp } from './support/app-process';

interface Verdict {
  name: string;
  verdict: string;
  ghostCandidate: boolean;
  module?: string;
  why: string;
  needs?: { days: number; processHours: number };
}

async function verdictsOf(env: NodeJS.ProcessEnv): Promise<{ live: Verdict[]; written: Verdict[] }> {
  const app = await startApp(LOADING_CASES[0]!, {
    app: 'standalone-app',
    env: {
      DIAG_GHOST_TRACKING_ENABLED: 'true',
      MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'diag',
      MANAGEMENT_SERVER_PORT: '0',
      ...env,
    },
  });
  let live: Verdict[];
  try {
    await new Promise((r) => setTimeout(r, 300)); // past the tiny thresholds below
    live = (await getJson(actuatorPort(app), '/actuator/diag/ghosts')).body.verdicts;
  } finally {
    await app.stop('SIGTERM');
  }
  return { live, written: app.readReport('diag-ghost-report.json').verdicts };
}

describe('one verdict per bean, in a single run', () => {
  it('with the default thresholds: in-use for what was called, insufficient-evidence with what is missing', async () => {
    const { live, written } = await verdictsOf({});
    for (const verdicts of [live, written]) {
      const byName = new Map(verdicts.map((v) => [v.name, v]));
      expect(byName.get('AppService')).toMatchObject({ verdict: 'in-use', ghostCandidate: false });
      const unused = byName.get('UnusedService')!;
      expect(unused).toMatchObject({
        verdict: 'insufficient-evidence',
        ghostCandidate: true,
        module: 'StandaloneAppModule',
      });
      expect(unused.needs!.days).toBeGreaterThan(13.9);
      expect(unused.needs!.processHours).toBeGreaterThan(167.9);
      expect(byName.get('GREETING')).toMatchObject({ verdict: 'untrackable', why: 'Phase 2 cannot tell: no-methods' });
      // most likely dead first; no module class among the beans
      expect(verdicts[0]!.name).toBe('UnusedService');
      expect(verdicts.some((v) => /Module$/.test(v.name))).toBe(false);
    }
  });

  it('past the thresholds (set in fractions): never-touched, the Phase 1 candidate marked the strongest signal', async () => {
    const { written } = await verdictsOf({
      DIAG_GHOST_TRACKING_LEDGER_MIN_DAYS: '0.000001',
      DIAG_GHOST_TRACKING_LEDGER_MIN_PROCESS_HOURS: '0.00001',
    });
    expect(written[0]).toMatchObject({ name: 'UnusedService', verdict: 'never-touched', ghostCandidate: true });
    expect(written[0]!.why).toMatch(/strongest signal/);
    expect(written.find((v) => v.name === 'FORMATTER')).toMatchObject({ verdict: 'in-use' });
  });
});
