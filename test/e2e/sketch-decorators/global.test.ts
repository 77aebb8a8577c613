import { startApp, type RunningApp } from '../support/app-process';

/**
 * The global form, SketchModule.forRoot() (test/fixtures/apps/sketch-global-app), on a real Nest 11 app on
 * Express and on Fastify: every route limited per client address without a decorator, all limits met listed in
 * the rate-limit fields, a route's own decorator of the same sketch overriding, @SkipSketch() on a method or a
 * controller, skipIf, a custom message, and the refusal an ordinary 429 HttpException to the app's own filters.
 * Each test plays a client of its own through X-Forwarded-For (the apps trust the loopback proxy).
 */
interface Answer {
  status: number;
  body: any;
  policy: string | null;
  limit: string | null;
  retryAfter: string | null;
}

describe.each(['express', 'fastify'] as const)('SketchModule.forRoot: global limits (nest11-cjs, %s)', (platform) => {
  let app: RunningApp;

  beforeAll(async () => {
    // Nest's own logger on, so that a refusal Nest took for an unexpected error would show in the output
    app = await startApp('nest11-cjs', { app: 'sketch-global-app', env: { PLATFORM: platform, NEST_LOGS: '1' } });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  async function call(path: string, client: string, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`http://127.0.0.1:${app.port}${path}`, {
      headers: { 'x-forwarded-for': client, ...headers },
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    const h = (name: string) => res.headers.get(name);
    return {
      status: res.status,
      body,
      policy: h('ratelimit-policy'),
      limit: h('ratelimit'),
      retryAfter: h('retry-after'),
    };
  }

  async function statuses(
    path: string,
    client: string,
    n: number,
    headers?: Record<string, string>,
  ): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await call(path, client, headers)).status);
    return out;
  }

  it('limits an undecorated route per client address: 429, Retry-After, the custom message, the fields of both limits', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i++) answers.push(await call('/open', '198.51.100.1'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers[0]!.policy).toBe('"LIMIT_60000";q=3;w=60, "LIMIT_3600000";q=5;w=3600');
    expect(answers[0]!.limit).toBe('"LIMIT_60000";r=2;t=80, "LIMIT_3600000";r=4;t=4800');
    const refused = answers[3]!;
    expect(refused.retryAfter).toBe('80');
    expect(refused.limit).toBe('"LIMIT_60000";r=0;t=80');
    expect(refused.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: 'Slow down: retry in 80 s',
      code: 'ERR_SKETCH_THRESHOLD',
      sketchId: 'LIMIT_60000',
      retryAfterSeconds: 80,
    });
    // another client has its own budget
    expect((await call('/open', '198.51.100.2')).status).toBe(200);
  });

  it("lists a route's own limit of another sketch beside the global ones, in one set of fields", async () => {
    const a = await call('/open/more', '198.51.100.3');
    expect(a.status).toBe(200);
    expect(a.policy).toBe('"LIMIT_60000";q=3;w=60, "LIMIT_3600000";q=5;w=3600, "SHIELD_60000";q=10;w=60');
  });

  it("lets a route's own decorator of the same sketch override the global limit; the others still apply", async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 6; i++) answers.push(await call('/open/override', '198.51.100.4'));
    // 10 a minute instead of 3, but the hourly 5 of the global limits still refuses the 6th
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(answers[0]!.policy).toBe('"LIMIT_3600000";q=5;w=3600, "LIMIT_60000";q=10;w=60');
    expect(answers[5]!.body.sketchId).toBe('LIMIT_3600000');
  });

  it('exempts a @SkipSketch() route, a @SkipSketch() controller and requests skipIf names', async () => {
    expect(await statuses('/open/health', '198.51.100.5', 6)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await statuses('/internal/a', '198.51.100.5', 6)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await statuses('/open', '198.51.100.6', 6, { 'x-internal': 'yes' })).toEqual([200, 200, 200, 200, 200, 200]);
    const exempt = await call('/open/health', '198.51.100.5');
    expect(exempt.policy).toBeNull();
    // none of them counted: the client still has its full budget on a limited route
    expect((await call('/open', '198.51.100.5')).limit).toBe('"LIMIT_60000";r=2;t=80, "LIMIT_3600000";r=4;t=4800');
  });

  it("reaches the app's own catch-all filter as an ordinary 429 HttpException, Retry-After kept", async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i++) answers.push(await call('/filtered', '198.51.100.7'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers[3]!.body).toEqual({ caughtBy: 'CatchAllFilter', status: 429, httpException: true });
    expect(answers[3]!.retryAfter).toBe('80');
  });

  it('logs no refusal as an error, and never a client address', () => {
    const output = app.stdout() + app.stderr();
    expect(output).toContain('Mapped {/open, GET} route'); // the logger is on
    expect(output).not.toMatch(/ERROR|Exception/);
    expect(output).not.toContain('198.51.100.');
  });
});
