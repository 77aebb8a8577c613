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

interface Answer {
  readonly path: string;
  readonly status: number;
  readonly body: string;
}

async function drive(port: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const step of DRIVE) {
    const res = await fetch(`http://127.0.0.1:${port}${step.path}`, {
      method: step.method,
      ...(step.body !== undefined
        ? { body: JSON.stringify(step.body), headers: { 'content-type': 'application/json' } }
        : {}),
    });
    answers.push({ path: step.path, status: res.status, body: await res.text() });
  }
  return answers;
}

/** What was done to the hostile providers so far (hostile.module.ts counts it). */
async function hostileReads(port: number): Promise<Record<string, number>> {
  return (await fetch(`http://127.0.0.1:${port}/hostile/reads`)).json() as Promise<Record<string, number>>;
}

/** Nest's mixin() names a class with a fresh random id per process. */
const RANDOM_NAME = /(^|\/)([0-9a-f]{21}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(#\d+)?$/;

describe.each(LOADING_CASES)('precision corpus (%s)', (loading) => {
  let first: RunningApp | undefined;
  let second: RunningApp | undefined;
  let bare: RunningApp | undefined;
  let answers: Answer[];
  let reads: Record<string, number>;
  let bareAnswers: Answer[];
  let bareReads: Record<string, number>;
  let phase1: any;
  let phase1AfterRun: any;
  let ghosts: any;
  let namesAgain: string[];

  beforeAll(async () => {
    try {
      // The same application without the instrumentation: how it boots, answers and reads its own providers.
      bare = await startApp(loading, { app: 'precision-app', bare: true });
      bareAnswers = await drive(bare.port);
      bareReads = await hostileReads(bare.port);
      await bare.stop('SIGTERM');
      first = await startApp(loading, { app: 'precision-app', env: { DIAG_GHOST_TRACKING_ENABLED: 'true' } });
      phase1 = first.readReport();
      answers = await drive(first.port);
      reads = await hostileReads(first.port);
      await first.stop('SIGTERM');
      ghosts = first.readReport('diag-ghost-report.json');
      phase1AfterRun = first.readReport();
      // A second process of the same application: every name must come back the same.
      second = await startApp(loading, { app: 'precision-app', env: { DIAG_GHOST_TRACKING_ENABLED: 'true' } });
      namesAgain = second.readReport().graph.nodes.map((n: { name: string }) => n.name);
    } finally {
      await bare?.stop('SIGKILL');
      await first?.stop('SIGKILL');
      await second?.stop('SIGTERM');
    }
  });

  it('serves every live path of the driven run', () => {
    expect(answers.map((a) => a.status)).toEqual(DRIVE.map(() => expect.any(Number)));
    expect(answers.every((a) => a.status >= 200 && a.status < 300)).toBe(true);
  });

  it('boots and answers exactly as without the instrumentation, hostile providers included', () => {
    expect(answers).toEqual(bareAnswers);
  });

  it('reads nothing of a hostile provider that the application does not read itself', () => {
    // No getter run, no function bean's property read, no toString called, no Proxy trap beyond NestJS's own,
    // no nestjs-cls proxy asked for its request's value.
    expect(reads).toEqual(bareReads);
    expect(reads).toMatchObject({ 'getter': 0, 'to-string': 0, 'function-property': 0, 'proxy-trap-refused': 0 });
  });

  it('reports every hostile provider it cannot track with its reason, and tracks the others', () => {
    expect(ghosts.untrackable).toMatchObject({
      FrozenRates: 'frozen-prototype',
      HOSTILE_VALUE: 'already-proxied',
      HOSTILE_FACTORY: 'already-proxied',
      HOSTILE_FUNCTION: 'factory-bean', // a value that is a function, whatever it is made of
      UNUSED_PROXY: 'already-proxied',
      CURRENT_USER: 'alias', // the application's alias of a nestjs-cls proxy provider: its calls are its target's
      SLUGIFY: 'factory-bean',
      PRICE_FORMAT: 'factory-bean',
    });
    expect(ghosts.touched).toEqual(
      expect.arrayContaining(['ThrowingGetters', 'UnprintableService', 'HostileController']),
    );
    // A reason in the report, not a failure in the log.
    expect(first!.stderr()).not.toMatch(/left unwrapped/);
  });

  it('names every bean the same way in every run, and never by a random mixin id', () => {
    const names: string[] = phase1.graph.nodes.map((n: { name: string }) => n.name);
    expect(names.filter((n) => RANDOM_NAME.test(n))).toEqual([]);
    expect([...namesAgain].sort()).toEqual([...names].sort());
    // Two FileInterceptor(...) classes: the name their source declares; the module and #2 tell them apart.
    expect(names.filter((n) => /MixinInterceptor/.test(n)).sort()).toEqual([
      'PrecisionModule/MixinInterceptor',
      'PrecisionModule/MixinInterceptor#2',
    ]);
    expect(names).toContain('MixinAuthGuard');
  });

  it("lists as a bean's methods only the application's code, never a library's", () => {
    const bean = (name: string) => ghosts.verdicts.find((v: { name: string }) => v.name === name);
    const methods = (name: string): string[] => (bean(name)?.methods ?? []).map((m: { name: string }) => m.name).sort();
    // A library class the application registers is a bean of its own; none of its methods is the application's.
    expect(bean('ConsoleLogger')).toBeDefined();
    expect(methods('ConsoleLogger')).toEqual([]);
    // Classes @nestjs/passport and @nestjs/platform-express made at run time (Nest's mixin()).
    expect(bean('MixinAuthGuard')).toBeDefined();
    expect(methods('MixinAuthGuard')).toEqual([]);
    expect(methods('PrecisionModule/MixinInterceptor')).toEqual([]);
    // A strategy's own validate is the application's; what PassportStrategy(...) and passport gave it is not.
    expect(methods('TokenStrategy')).toEqual(['validate']);
  });

  it("counts a library class the application registers as the application's bean", () => {
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

  it('Phase 1 after the driven run: the lookup by token took its bean off, with how', () => {
    const s = score(phase1AfterRun.ghostCandidates.beans, TRULY_DEAD);
    expect(s).toMatchObject({ precision: 1, falsePositives: [], missed: ['LegacyNotifier'] });
    const node = phase1AfterRun.graph.nodes.find((n: { name: string }) => n.name === 'LazyReportService');
    expect(node).toMatchObject({ verdict: 'looked-up', lookedUp: { via: 'moduleRef.get' } });
  });

  it('a passport strategy is a candidate exactly when no guard authenticates with its name', () => {
    const node = (name: string) => phase1.graph.nodes.find((n: { name: string }) => n.name === name);
    expect(node('AnonymousStrategy')).toMatchObject({
      verdict: 'candidate',
      candidateReason: 'unused-passport-strategy',
    });
    expect(node('TokenStrategy')).toMatchObject({ verdict: 'entry-point' });
  });

  it('Phase 1 judges a Proxy nothing injects without looking into it', () => {
    const node = phase1.graph.nodes.find((n: { name: string }) => n.name === 'UNUSED_PROXY');
    expect(node).toMatchObject({ verdict: 'candidate', dependents: 0 });
  });

  it('Phase 2 after the driven run: no false positive; a Proxy, which it never wraps, is left to Phase 1', () => {
    const s = score(ghosts.untouched, TRULY_DEAD);
    expect(s).toMatchObject({ precision: 1, falsePositives: [], missed: ['UNUSED_PROXY'] });
  });

  it('Phase 1 + 2 as a team acts on them: every Phase 1 candidate Phase 2 did not see used, and every untouched bean', () => {
    const touched = new Set<string>(ghosts.touched);
    const verdict = [
      ...new Set([...ghosts.untouched, ...phase1.ghostCandidates.beans.filter((n: string) => !touched.has(n))]),
    ];
    expect(score(verdict, TRULY_DEAD)).toEqual({ precision: 1, recall: 1, falsePositives: [], missed: [] });
  });
});
