import { LOADING_CASES, actuatorPort, getJson, startApp, type RunningApp } from '../support/app-process';

/**
 * The sketch decorators in real NestJS HTTP apps (test/fixtures/apps/sketch-app), one process per loading
 * case: 429 with JSON and Retry-After for the N+1th call of a key, other keys untouched, `@Get()` above or
 * below the decorator, one sketch per type and window shared across routes, observe mode, and the actuator's
 * sketch endpoints reading the live registry.
 */

async function call(app: RunningApp, path: string, key?: string): Promise<{ status: number; body: any; retryAfter: string | null; type: string | null }> {
  const res = await fetch(`http://127.0.0.1:${app.port}${path}`, { headers: key === undefined ? {} : { 'x-key': key } });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, retryAfter: res.headers.get('retry-after'), type: res.headers.get('content-type') };
}

async function statuses(app: RunningApp, path: string, key: string | undefined, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(app, path, key)).status);
  return out;
}

describe.each(LOADING_CASES)('sketch decorators in a Nest app (%s)', (loading) => {
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp(loading, {
      app: 'sketch-app',
      env: { MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'sketches', MANAGEMENT_SERVER_PORT: '0' },
    });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
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
    expect(await call(app, '/burst', 'anyone')).toMatchObject({ status: 429, body: { sketchId: 'BURST_1000' }, retryAfter: '2' });
  });

  it('in observe mode serves every call and reports the breaches in the log', async () => {
    expect(await statuses(app, '/observed', 'watched', 5)).toEqual([200, 200, 200, 200, 200]);
    const deadline = Date.now() + 5000;
    while (!/sketch SHIELD_60000 \(observe mode\)/.test(app.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const lines = app.stderr().split('\n').filter((l) => l.includes('SHIELD_60000'));
    expect(lines).toEqual([expect.stringMatching(/^\[diag\] WARN sketch SHIELD_60000 \(observe mode\): LimitedController\.observed key [0-9a-f]{16} at 3 > threshold 2; the call ran$/)]);
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
      LIMIT_30000: 'Active (1 MB)',
      LIMIT_60000: 'Active (1 MB)',
      SHIELD_60000: 'Active (1 MB)',
    });
    const detail = await getJson(port, '/actuator/sketches/LIMIT_60000');
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({ epsilon: Math.E / 16384, memory_bytes: 1048576, delta_percent: 100 * Math.exp(-4), store: 'native' });
    expect((await getJson(port, '/actuator/sketches/LIMIT_1')).status).toBe(404);
  });
});
