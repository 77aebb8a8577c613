import {
  LOADING_CASES,
  actuatorPort,
  getJson,
  startApp,
  type LoadingCase,
  type RunningApp,
} from '../support/app-process';

/**
 * The sketch decorators in real NestJS HTTP apps (test/fixtures/apps/sketch-app), one process per loading
 * case: 429 with JSON and Retry-After for the N+1th call of a key, other keys untouched, `@Get()` above or
 * below the decorator, one sketch per type and window shared across routes, observe mode, and the actuator's
 * sketch endpoints reading the live registry.
 */

async function call(
  app: RunningApp,
  path: string,
  key?: string,
): Promise<{ status: number; body: any; retryAfter: string | null; type: string | null }> {
  const res = await fetch(`http://127.0.0.1:${app.port}${path}`, {
    headers: key === undefined ? {} : { 'x-key': key },
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return {
    status: res.status,
    body,
    retryAfter: res.headers.get('retry-after'),
    type: res.headers.get('content-type'),
  };
}

async function statuses(app: RunningApp, path: string, key: string | undefined, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(app, path, key)).status);
  return out;
}

/**
 * Every loading case on Express, and Nest 11 on Fastify too (`@nestjs/platform-fastify` is the root's own; the
 * matrix cells install Express only).
 */
const PLATFORMS: Array<[LoadingCase, 'express' | 'fastify']> = [
  ...LOADING_CASES.map((loading): [LoadingCase, 'express'] => [loading, 'express']),
  ...(LOADING_CASES.includes('nest11-cjs') && process.env.DIAG_MATRIX_DIR === undefined
    ? [['nest11-cjs', 'fastify'] as [LoadingCase, 'fastify']]
    : []),
];

describe.each(PLATFORMS)('sketch decorators in a Nest app (%s, %s)', (loading, platform) => {
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp(loading, {
      app: platform === 'express' ? 'sketch-app' : 'sketch-fastify-app',
      env: { MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'sketches', MANAGEMENT_SERVER_PORT: '0' },
    });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  async function fields(
    path: string,
    key: string,
  ): Promise<{
    status: number;
    policy: string | null;
    limit: string | null;
    retryAfter: string | null;
    legacy: (string | null)[];
  }> {
    const res = await fetch(`http://127.0.0.1:${app.port}${path}`, { headers: { 'x-key': key } });
    await res.text();
    const h = (name: string) => res.headers.get(name);
    return {
      status: res.status,
      policy: h('ratelimit-policy'),
      limit: h('ratelimit'),
      retryAfter: h('retry-after'),
      legacy: [h('x-ratelimit-limit'), h('x-ratelimit-remaining'), h('x-ratelimit-reset')],
    };
  }

  it('puts the IETF RateLimit-Policy and RateLimit fields on admitted and rejected answers', async () => {
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await fields('/limited', 'fields-key'));
    expect(seen.map((f) => f.status)).toEqual([200, 200, 200, 429]);
    expect(new Set(seen.map((f) => f.policy))).toEqual(new Set(['"LIMIT_60000";q=3;w=60']));
    // remaining from the estimate, never negative; t: when the key is certainly back to its full quota
    expect(seen.map((f) => f.limit)).toEqual([
      '"LIMIT_60000";r=2;t=80',
      '"LIMIT_60000";r=1;t=80',
      '"LIMIT_60000";r=0;t=80',
      '"LIMIT_60000";r=0;t=80',
    ]);
    expect(seen[3]!.retryAfter).toBe('80');
    expect(seen.every((f) => f.legacy.every((v) => v === null))).toBe(true);
  });

  it('lists every limit a route has, and rejects when any of them is over', async () => {
    const first = await fields('/fields/two-limits', 'two');
    // the outer decorator counts first
    expect(first.policy).toBe('"LIMIT_1000";q=5;w=1, "LIMIT_3600000";q=2;w=3600');
    expect(first.limit).toMatch(/^"LIMIT_1000";r=4;t=2, "LIMIT_3600000";r=1;t=\d+$/);
    expect((await fields('/fields/two-limits', 'two')).status).toBe(200);
    const third = await fields('/fields/two-limits', 'two');
    expect(third.status).toBe(429); // the hourly limit of 2, though the per-second one of 5 has room
    expect(third.limit).toMatch(/^"LIMIT_1000";r=\d;t=2, "LIMIT_3600000";r=0;t=\d+$/);
  });

  it('hands the answer to the decorators through a parameter the method itself never receives', async () => {
    const res = await fetch(`http://127.0.0.1:${app.port}/fields/arguments`, { headers: { 'x-key': 'arguments' } });
    expect(await res.json()).toEqual({ received: 1 });
    // the outer limit writes its fields; the inner one, with headers: 'none', writes none
    expect(res.headers.get('ratelimit-policy')).toBe('"LIMIT_1000";q=50;w=1');
  });

  it('keys on the client address as the platform resolves it behind a trusted proxy, an API key, or the user', async () => {
    const get = async (path: string, headers: Record<string, string>) =>
      (await fetch(`http://127.0.0.1:${app.port}${path}`, { headers })).status;
    // the app trusts its loopback proxy: X-Forwarded-For is the client, each with a budget of 2
    const ip = [];
    for (const client of ['203.0.113.7', '203.0.113.7', '203.0.113.7', '198.51.100.2'])
      ip.push(await get('/keys/ip', { 'x-forwarded-for': client }));
    expect(ip).toEqual([200, 200, 429, 200]);
    const api = [];
    for (const key of ['k-1', 'k-1', 'k-1', 'k-2']) api.push(await get('/keys/api-key', { 'x-api-key': key }));
    expect(api).toEqual([200, 200, 429, 200]);
    const user = [];
    for (const id of ['ann', 'ann', 'ann', 'ben']) user.push(await get('/keys/user', { 'x-user': id }));
    expect(user).toEqual([200, 200, 429, 200]);
  });

  it('on a controller class limits every route together, except the one marked @SkipSketch()', async () => {
    const seen = [];
    for (const path of ['/whole/a', '/whole/b', '/whole/a', '/whole/health', '/whole/health', '/whole/health'])
      seen.push(await fields(path, 'whole'));
    expect(seen.map((f) => f.status)).toEqual([200, 200, 429, 200, 200, 200]);
    expect(seen[0]!.policy).toBe('"LIMIT_120000";q=2;w=120');
    expect(seen[3]!.policy).toBeNull();
  });

  it('adds the legacy X-RateLimit trio on request, and no field at all with headers: none', async () => {
    const legacy = await fields('/fields/legacy', 'legacy');
    expect(legacy.legacy).toEqual(['2', '1', '80']);
    expect(legacy.policy).toBe('"SHIELD_60000";q=2;w=60');
    const none = await fields('/fields/none', 'none');
    expect(none.status).toBe(200);
    expect([none.policy, none.limit, ...none.legacy]).toEqual([null, null, null, null, null]);
  });

  it('answers the N+1th call of a key with 429, a JSON body and Retry-After; other keys are unaffected', async () => {
    expect(await statuses(app, '/limited', 'above', 3)).toEqual([200, 200, 200]);
    const rejected = await call(app, '/limited', 'above');
    expect(rejected.status).toBe(429);
    expect(rejected.type).toMatch(/^application\/json/);
    expect(rejected.retryAfter).toBe('80'); // 60 s window + one 20 s sub-window
    expect(rejected.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: 'Rate limit exceeded (sketch LIMIT_60000); retry after 80 s',
      code: 'ERR_SKETCH_THRESHOLD',
      sketchId: 'LIMIT_60000',
      retryAfterSeconds: 80,
    });
    expect(JSON.stringify(rejected.body)).not.toContain('above');
    expect(await call(app, '/limited', 'someone-else')).toMatchObject({ status: 200, body: { route: 'limited' } });
  });

  it('works with @Get() below the decorator too (an async handler)', async () => {
    expect(await statuses(app, '/limited-below', 'below', 4)).toEqual([200, 200, 200, 429]);
    const rejected = await call(app, '/limited-below', 'below');
    expect(rejected).toMatchObject({ status: 429, retryAfter: '80', body: { sketchId: 'LIMIT_60000' } });
  });

  it('shares LIMIT_60000 between the two routes: a key counts across both', async () => {
    expect(await statuses(app, '/limited', 'shared', 2)).toEqual([200, 200]);
    expect(await statuses(app, '/limited-below', 'shared', 2)).toEqual([200, 429]);
    expect((await call(app, '/limited', 'shared')).status).toBe(429);
  });

  it('without a key limits the method as a whole (custom type BURST)', async () => {
    expect(await statuses(app, '/burst', undefined, 2)).toEqual([200, 200]);
    expect(await call(app, '/burst', 'anyone')).toMatchObject({
      status: 429,
      body: { sketchId: 'BURST_1000' },
      retryAfter: '2',
    });
  });

  it('in observe mode serves every call and reports the breaches in the log', async () => {
    expect(await statuses(app, '/observed', 'watched', 5)).toEqual([200, 200, 200, 200, 200]);
    const deadline = Date.now() + 5000;
    while (!/sketch SHIELD_60000 \(observe mode\)/.test(app.stderr()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const lines = app
      .stderr()
      .split('\n')
      .filter((l) => l.includes('SHIELD_60000'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^\[diag\] WARN sketch SHIELD_60000 \(observe mode\): LimitedController\.observed key [0-9a-f]{16} at 3 > threshold 2; the call ran$/,
      ),
    ]);
    expect(app.stderr()).not.toContain('watched');
  });

  it("a decorated service method's rejection is a 429 too: in full under SketchThresholdFilter, as Nest's http error otherwise", async () => {
    expect((await call(app, '/filtered/quota', 'q1')).status).toBe(200);
    expect(await call(app, '/filtered/quota', 'q1')).toMatchObject({
      status: 429,
      retryAfter: '40',
      body: { statusCode: 429, code: 'ERR_SKETCH_THRESHOLD', sketchId: 'LIMIT_30000', retryAfterSeconds: 40 },
    });
    expect((await call(app, '/quota', 'q2')).status).toBe(200);
    expect(await call(app, '/quota', 'q2')).toMatchObject({
      status: 429,
      body: { statusCode: 429, message: 'Rate limit exceeded (sketch LIMIT_30000); retry after 40 s' },
    });
  });

  it('serves /actuator/sketches and /actuator/sketches/LIMIT_60000 from the live registry', async () => {
    const port = actuatorPort(app);
    const list = await getJson(port, '/actuator/sketches');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      BURST_1000: 'Active (1 MB)',
      BYAPIKEY_60000: 'Active (1 MB)',
      BYIP_60000: 'Active (1 MB)',
      BYUSER_60000: 'Active (1 MB)',
      LIMIT_1000: 'Active (1 MB)',
      LIMIT_120000: 'Active (1 MB)',
      LIMIT_3600000: 'Active (1 MB)',
      LIMIT_30000: 'Active (1 MB)',
      LIMIT_60000: 'Active (1 MB)',
      SHIELD_60000: 'Active (1 MB)',
    });
    const detail = await getJson(port, '/actuator/sketches/LIMIT_60000');
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({
      epsilon: Math.E / 16384,
      memory_bytes: 1048576,
      delta_percent: 100 * Math.exp(-4),
      store: 'native',
    });
    expect((await getJson(port, '/actuator/sketches/LIMIT_1')).status).toBe(404);
  });
});
