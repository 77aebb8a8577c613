/**
 * The precision corpus (test/fixtures/apps/precision-app): the provider patterns that make static tools wrong,
 * in one real application whose truly dead beans are stated in truth.ts. Phase 1 (start-up) and Phase 2
 * (first touches after a run that exercises every live path) are scored against that truth, and bean names must
 * be the same in every run (mixin-made guards and interceptors included).
 */
import { DRIVE, TRULY_DEAD } from '../fixtures/apps/precision-app/truth';
import { LOADING_CASES, startApp, type RunningApp } from './support/app-process';

interface Score {
  readonly precision: number;
  readonly recall: number;
  readonly falsePositives: string[];
  readonly missed: string[];
}

function score(found: readonly string[], dead: readonly string[]): Score {
  const hits = found.filter((n) => dead.includes(n));
  return {
    precision: found.length === 0 ? 1 : hits.length / found.length,
    recall: hits.length / dead.length,
    falsePositives: found.filter((n) => !dead.includes(n)).sort(),
    missed: dead.filter((n) => !found.includes(n)).sort(),
  };
}

async function drive(port: number): Promise<number[]> {
  const statuses: number[] = [];
  for (const step of DRIVE) {
    const res = await fetch(`http://127.0.0.1:${port}${step.path}`, {
      method: step.method,
      ...(step.body !== undefined ? { body: JSON.stringify(step.body), headers: { 'content-type': 'application/json' } } : {}),
    });
    await res.text();
    statuses.push(res.status);
  }
  return statuses;
}

/** Nest's mixin() names a class with a fresh random id per process. */
const RANDOM_NAME = /(^|\/)([0-9a-f]{21}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(#\d+)?$/;

describe.each(LOADING_CASES)('precision corpus (%s)', (loading) => {
  let first: RunningApp | undefined;
  let second: RunningApp | undefined;
  let statuses: number[];
  let phase1: any;
  let ghosts: any;
  let namesAgain: string[];

  beforeAll(async () => {
    try {
      first = await startApp(loading, { app: 'precision-app', env: { DIAG_GHOST_TRACKING_ENABLED: 'true' } });
      phase1 = first.readReport();
      statuses = await drive(first.port);
      await first.stop('SIGTERM');
      ghosts = first.readReport('diag-ghost-report.json');
      // A second process of the same application: every name must come back the same.
      second = await startApp(loading, { app: 'precision-app', env: { DIAG_GHOST_TRACKING_ENABLED: 'true' } });
      namesAgain = second.readReport().graph.nodes.map((n: { name: string }) => n.name);
    } finally {
      await first?.stop('SIGKILL');
      await second?.stop('SIGTERM');
    }
  });

  it('serves every live path of the driven run', () => {
    expect(statuses).toEqual(DRIVE.map(() => expect.any(Number)));
    expect(statuses.every((s) => s >= 200 && s < 300)).toBe(true);
  });

  it('names every bean the same way in every run, and never by a random mixin id', () => {
    const names: string[] = phase1.graph.nodes.map((n: { name: string }) => n.name);
    expect(names.filter((n) => RANDOM_NAME.test(n))).toEqual([]);
    expect([...namesAgain].sort()).toEqual([...names].sort());
    // Two FileInterceptor(...) classes: the name their source declares; the module and #2 tell them apart.
    expect(names.filter((n) => /MixinInterceptor/.test(n)).sort()).toEqual(['PrecisionModule/MixinInterceptor', 'PrecisionModule/MixinInterceptor#2']);
    expect(names).toContain('MixinAuthGuard');
  });

  it('counts a library class the application registers as the application\'s bean', () => {
    const node = phase1.graph.nodes.find((n: { name: string }) => n.name === 'ConsoleLogger');
    expect(node).toMatchObject({ framework: false });
    expect(phase1.ghostCandidates.beans).toContain('ConsoleLogger');
  });

  it('Phase 1: no false positive beyond lookups by token, which it cannot see', () => {
    const s = score(phase1.ghostCandidates.beans, TRULY_DEAD);
    // moduleRef.get(LazyReportService) is invisible to a start-up analysis, as its disclaimer says.
    expect(s.falsePositives).toEqual(['LazyReportService']);
    // A bean injected but never called has a dependent: only Phase 2 sees it.
    expect(s.missed).toEqual(['LegacyNotifier']);
  });

  it('a passport strategy is a candidate exactly when no guard authenticates with its name', () => {
    const node = (name: string) => phase1.graph.nodes.find((n: { name: string }) => n.name === name);
    expect(node('AnonymousStrategy')).toMatchObject({ verdict: 'candidate', candidateReason: 'unused-passport-strategy' });
    expect(node('TokenStrategy')).toMatchObject({ verdict: 'entry-point' });
  });

  it('Phase 2 after the driven run: precision and recall 100%', () => {
    const s = score(ghosts.untouched, TRULY_DEAD);
    expect(s).toEqual({ precision: 1, recall: 1, falsePositives: [], missed: [] });
  });

  it('Phase 1 + 2 as a team acts on them: every Phase 1 candidate Phase 2 did not see used, and every untouched bean', () => {
    const touched = new Set<string>(ghosts.touched);
    const verdict = [...new Set([...ghosts.untouched, ...phase1.ghostCandidates.beans.filter((n: string) => !touched.has(n))])];
    expect(score(verdict, TRULY_DEAD)).toEqual({ precision: 1, recall: 1, falsePositives: [], missed: [] });
  });
});
