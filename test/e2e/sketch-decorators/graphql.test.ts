import { startApp, type RunningApp } from '../support/app-process';

/**
 * The sketch decorators on a real GraphQL API (test/fixtures/apps/sketch-graphql-app: @nestjs/graphql and the
 * Apollo driver on Nest 11), queried over HTTP as a client would: a resolver over its limit answers a GraphQL
 * error on its own field, the query's other fields keep their data, and the key comes from the GraphQL context.
 */
interface GraphQLResponse {
  status: number;
  data: Record<string, unknown> | null;
  errors: { message: string; path?: string[]; extensions?: Record<string, unknown> }[] | undefined;
}

describe('sketch decorators on a GraphQL resolver (nest11-cjs, Apollo)', () => {
  let app: RunningApp;

  beforeAll(async () => {
    // Nest's own logger on, so that an exception Nest took for unexpected would show in the output
    app = await startApp('nest11-cjs', { app: 'sketch-graphql-app', env: { NEST_LOGS: '1' } });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  async function query(source: string, key: string): Promise<GraphQLResponse> {
    const res = await fetch(`http://127.0.0.1:${app.port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-key': key },
      body: JSON.stringify({ query: source }),
    });
    const body = (await res.json()) as Omit<GraphQLResponse, 'status'>;
    return { status: res.status, ...body };
  }

  it('answers the field over its limit with TOO_MANY_REQUESTS and retryAfterSeconds; the other fields keep their data', async () => {
    const seen: GraphQLResponse[] = [];
    for (let i = 0; i < 3; i++) seen.push(await query('{ quota(account: "acme") open }', 'client-a'));
    expect(seen.slice(0, 2).map((r) => r.data)).toEqual([
      { quota: 'quota of acme', open: 'open' },
      { quota: 'quota of acme', open: 'open' },
    ]);
    expect(seen.slice(0, 2).every((r) => r.errors === undefined)).toBe(true);

    const limited = seen[2]!;
    // GraphQL over HTTP: a field error with partial data is still a 200
    expect(limited.status).toBe(200);
    expect(limited.data).toEqual({ quota: null, open: 'open' });
    expect(limited.errors).toHaveLength(1);
    expect(limited.errors![0]!.path).toEqual(['quota']);
    expect(limited.errors![0]!.extensions).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      retryAfterSeconds: 80,
      sketchId: 'LIMIT_60000',
    });
    expect(limited.errors![0]!.message).toBe('Rate limit exceeded (sketch LIMIT_60000); retry after 80 s');
  });

  it('keys on the request in the GraphQL context: another client still has its quota', async () => {
    const other = await query('{ quota(account: "acme") }', 'client-b');
    expect(other.errors).toBeUndefined();
    expect(other.data).toEqual({ quota: 'quota of acme' });
  });

  it('SketchModule.forRoot limits every resolver, the key read from the request in the context', async () => {
    const seen: GraphQLResponse[] = [];
    for (let i = 0; i < 6; i++) seen.push(await query('{ search }', 'client-g'));
    expect(seen.slice(0, 5).map((r) => r.data)).toEqual(Array(5).fill({ search: 'found' }));
    const limited = seen[5]!;
    expect(limited.status).toBe(200);
    expect(limited.data).toEqual({ search: null });
    expect(limited.errors![0]!.path).toEqual(['search']);
    expect(limited.errors![0]!.extensions).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      retryAfterSeconds: 80,
      sketchId: 'GQL_60000',
    });
    // each root field is a resolver call the guard counts: another client's budget is its own
    expect((await query('{ search open }', 'client-h')).data).toEqual({ search: 'found', open: 'open' });
  });

  it('does not log a limited field as an unexpected error, and never logs the key', async () => {
    for (let i = 0; i < 3; i++) await query('{ quota(account: "x") }', 'client-c');
    const output = app.stdout() + app.stderr();
    expect(output).toContain('Mapped {/graphql, POST} route'); // the logger is on
    expect(output).not.toMatch(/ERROR|SketchThresholdError/);
    expect(output).not.toContain('client-c');
  });
});
