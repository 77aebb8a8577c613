import {
  ActuatorRouter,
  MAX_URL_LENGTH,
  parseTarget,
  resolveExposure,
  type ActuatorResponse,
} from '../../../src/actuator';
import { FakeSketches, fakeGhostReport, fakeSources, LIMIT, SHIELD } from './fakes';

function router(
  opts: {
    include?: string[];
    exclude?: string[];
    basePath?: string;
    token?: string;
    sources?: ReturnType<typeof fakeSources>;
    onSourceError?: (e: string, err: unknown) => void;
  } = {},
) {
  const sources =
    opts.sources ?? fakeSources({ ghosts: fakeGhostReport(4), diag: { orphans: ['A'] }, sketches: [LIMIT, SHIELD] });
  const r = new ActuatorRouter({
    basePath: opts.basePath ?? '/actuator',
    exposure: resolveExposure(opts.include ?? ['*'], opts.exclude ?? []),
    sources,
    authToken: opts.token,
    fallbackHost: () => '127.0.0.1:8081',
    onSourceError: opts.onSourceError,
  });
  return { r, sources };
}

const json = (res: ActuatorResponse) => JSON.parse(String(res.body));

describe('ActuatorRouter endpoints', () => {
  it('serves health', () => {
    const res = router().r.respond('GET', '/actuator/health');
    expect(res.status).toBe(200);
    expect(json(res)).toEqual({ status: 'UP' });
  });

  it('serves the _links index at {base} and {base}/ with a templated sketch link', () => {
    const { r } = router();
    for (const url of ['/actuator', '/actuator/', '/actuator?x=1']) {
      const res = r.respond('GET', url, 'localhost:9000');
      expect(res.status).toBe(200);
      expect(json(res)._links).toEqual({
        self: { href: 'http://localhost:9000/actuator', templated: false },
        health: { href: 'http://localhost:9000/actuator/health', templated: false },
        diag: { href: 'http://localhost:9000/actuator/diag', templated: false },
        'diag-ghosts': { href: 'http://localhost:9000/actuator/diag/ghosts', templated: false },
        'diag-ledger': { href: 'http://localhost:9000/actuator/diag/ledger', templated: false },
        'diag-view': { href: 'http://localhost:9000/actuator/diag/view', templated: false },
        startup: { href: 'http://localhost:9000/actuator/startup', templated: false },
        sketches: { href: 'http://localhost:9000/actuator/sketches', templated: false },
        'sketches-id': { href: 'http://localhost:9000/actuator/sketches/{id}', templated: true },
      });
    }
  });

  it('lists only exposed endpoints in the index', () => {
    const res = router({ include: ['health'] }).r.respond('GET', '/actuator', 'h:1');
    expect(Object.keys(json(res)._links)).toEqual(['self', 'health']);
  });

  it('does not echo an implausible Host header into links', () => {
    const res = router().r.respond('GET', '/actuator', 'evil.example"><script>');
    expect(json(res)._links.self.href).toBe('http://127.0.0.1:8081/actuator');
  });

  it('serves the start-up report, or a JSON 404 while it is not written', () => {
    const { r, sources } = router();
    expect(json(r.respond('GET', '/actuator/diag'))).toEqual({ orphans: ['A'] });
    sources.state.diag = undefined;
    const res = r.respond('GET', '/actuator/diag');
    expect(res.status).toBe(404);
    expect(json(res).message).toMatch(/not been written yet/);
  });

  it('serves the live ghost snapshot, and the DISABLED object when tracking is off', () => {
    const { r, sources } = router();
    const res = r.respond('GET', '/actuator/diag/ghosts');
    expect(res.status).toBe(200);
    expect(json(res)).toEqual(fakeGhostReport(4));
    sources.state.ghosts = undefined;
    const off = json(r.respond('GET', '/actuator/diag/ghosts'));
    expect(off.status).toBe('DISABLED');
    expect(off.message).toMatch(/DIAG_GHOST_TRACKING_ENABLED=true/);
  });

  it('lists sketches as "Active (<size>)" and details one', () => {
    const { r } = router();
    expect(json(r.respond('GET', '/actuator/sketches'))).toEqual({
      LIMIT_60000: 'Active (1 MB)',
      SHIELD_1000: 'Active (1.5 MB)',
    });
    const res = r.respond('GET', '/actuator/sketches/LIMIT_60000');
    expect(res.status).toBe(200);
    expect(res.body).toBe('{"epsilon":0.0001,"memory_bytes":1048576,"delta_percent":0.0335,"store":"native"}');
  });

  it('adds the store and, for a fleet sketch, its mode, nodes and last sync; the listing keeps its shape', () => {
    const sketches = new FakeSketches([LIMIT], {
      LIMIT_60000: {
        store: 'redis',
        fleet: { mode: 'local-fallback', nodes: 3, lastSyncAgoMs: 1250, syncFailures: 4 },
      },
    });
    const sources = { ...fakeSources(), sketches: () => sketches };
    const { r } = router({ sources });
    expect(json(r.respond('GET', '/actuator/sketches'))).toEqual({ LIMIT_60000: 'Active (1 MB)' });
    expect(json(r.respond('GET', '/actuator/sketches/LIMIT_60000'))).toEqual({
      epsilon: 0.0001,
      memory_bytes: 1048576,
      delta_percent: 0.0335,
      store: 'redis',
      fleet: { mode: 'local-fallback', nodes: 3, lastSyncAgoMs: 1250 },
    });
  });

  it('answers an empty listing before any sketch exists', () => {
    const { r } = router({ sources: fakeSources() });
    expect(json(r.respond('GET', '/actuator/sketches'))).toEqual({});
  });

  it('keeps a sketch id such as __proto__ an ordinary key', () => {
    const { r } = router({ sources: fakeSources({ sketches: [{ ...LIMIT, id: '__proto__' }] }) });
    expect(r.respond('GET', '/actuator/sketches').body).toBe('{"__proto__":"Active (1 MB)"}');
  });

  it('answers 404 naming the <TYPE>_<windowMs> form for an unknown sketch', () => {
    const res = router().r.respond('GET', '/actuator/sketches/LIMIT_1');
    expect(res.status).toBe(404);
    expect(json(res)).toMatchObject({ status: 404, error: 'Not Found', id: 'LIMIT_1', expected: '<TYPE>_<windowMs>' });
    expect(json(res).message).toMatch(/<TYPE>_<windowMs>/);
  });

  it('truncates a very long sketch id in the 404 body and does not look it up', () => {
    const sources = fakeSources({ sketches: [LIMIT] });
    const get = jest.spyOn(sources, 'sketches');
    const res = router({ sources }).r.respond('GET', `/actuator/sketches/${'A'.repeat(500)}_1`);
    expect(res.status).toBe(404);
    expect(json(res).id.length).toBeLessThanOrEqual(129);
    expect(get).not.toHaveBeenCalled();
  });

  it('reading changes nothing: repeated reads give identical bodies and leave the sources as they were', () => {
    const ghosts = fakeGhostReport(10);
    const sources = fakeSources({ ghosts, diag: { a: 1 }, sketches: [LIMIT] });
    const before = JSON.stringify(sources.state);
    const { r } = router({ sources });
    const paths = [
      '/actuator',
      '/actuator/health',
      '/actuator/diag',
      '/actuator/diag/ghosts',
      '/actuator/sketches',
      '/actuator/sketches/LIMIT_60000',
    ];
    const first = paths.map((p) => r.respond('GET', p, 'h').body);
    const second = paths.map((p) => r.respond('GET', p, 'h').body);
    expect(second).toEqual(first);
    expect(JSON.stringify(sources.state)).toBe(before);
  });
});

describe('ActuatorRouter ghost snapshot reuse', () => {
  it('serialises on every request when the source offers no version', () => {
    const { r, sources } = router();
    r.respond('GET', '/actuator/diag/ghosts');
    r.respond('GET', '/actuator/diag/ghosts');
    expect(sources.calls.ghosts).toBe(2);
  });

  it('reuses the bytes while the version is unchanged and re-reads when it changes', () => {
    const sources = fakeSources({ ghosts: fakeGhostReport(4) });
    let version = 1;
    const withVersion = Object.assign(sources, { ghostsVersion: () => version });
    const { r } = router({ sources: withVersion });
    const a = r.respond('GET', '/actuator/diag/ghosts');
    const b = r.respond('GET', '/actuator/diag/ghosts');
    expect(b.body).toBe(a.body);
    expect(sources.calls.ghosts).toBe(1);
    // A first touch: the tracker's lists change and so does the version.
    sources.state.ghosts = { ...fakeGhostReport(4), touchedCount: 3, untouchedCount: 1 };
    version = 2;
    const c = r.respond('GET', '/actuator/diag/ghosts');
    expect(json(c).touchedCount).toBe(3);
    expect(sources.calls.ghosts).toBe(2);
  });
});

describe('ActuatorRouter statuses', () => {
  it('404s unknown paths with a JSON body', () => {
    const { r } = router();
    for (const url of [
      '/',
      '/actuatorx',
      '/actuator/env',
      '/actuator/diag/ghosts/x',
      '/actuator//health',
      '/actuator/health/',
      '/other/health',
    ]) {
      const res = r.respond('GET', url);
      if (url === '/actuator/health/') {
        expect(res.status).toBe(200); // one trailing slash is tolerated
        continue;
      }
      expect([url, res.status]).toEqual([url, 404]);
      expect(json(res)).toMatchObject({ status: 404, error: 'Not Found' });
    }
  });

  it('answers an unexposed endpoint exactly as an unknown one, whatever the method', () => {
    const { r } = router({ include: ['health'] });
    const unknown = r.respond('GET', '/actuator/nope');
    for (const url of [
      '/actuator/diag',
      '/actuator/diag/ghosts',
      '/actuator/sketches',
      '/actuator/sketches/LIMIT_60000',
    ]) {
      for (const method of ['GET', 'POST', 'HEAD']) expect(r.respond(method, url)).toEqual(unknown);
    }
  });

  it('answers 405 with Allow for other methods on existing endpoints; OPTIONS gets 204 with Allow', () => {
    const { r, sources } = router();
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'PROPFIND', 'TRACE']) {
      const res = r.respond(method, '/actuator/diag/ghosts');
      expect(res.status).toBe(405);
      expect(res.headers).toEqual({ Allow: 'GET, HEAD, OPTIONS' });
    }
    expect(sources.calls.ghosts).toBe(0);
    const opt = r.respond('OPTIONS', '/actuator/health');
    expect(opt.status).toBe(204);
    expect(opt.body).toBe('');
    expect(opt.headers).toEqual({ Allow: 'GET, HEAD, OPTIONS' });
  });

  it('answers HEAD like GET (the server drops the body)', () => {
    const { r } = router();
    expect(r.respond('HEAD', '/actuator/health')).toEqual(r.respond('GET', '/actuator/health'));
  });

  it.each([
    ['/actuator/sketches/%zz'],
    ['/actuator/sketches/%E0%A4%A'],
    ['/actuator/%'],
    ['/actuator/health%00'],
    ['/actuator/sketches/LIMIT%0d%0aSet-Cookie:x'],
    ['/actuator/health?x=%zz'],
    ['/actuator/health?x=%00'],
    ['*'],
    ['actuator/health'],
  ])('400s a malformed target %s', (url) => {
    const res = router().r.respond('GET', url);
    expect(res.status).toBe(400);
    expect(json(res)).toMatchObject({ status: 400, error: 'Bad Request' });
  });

  it('accepts absolute-form targets', () => {
    expect(router().r.respond('GET', 'http://localhost:8081/actuator/health').status).toBe(200);
  });

  it('414s an overlong target', () => {
    const res = router().r.respond('GET', `/actuator/${'a'.repeat(MAX_URL_LENGTH)}`);
    expect(res.status).toBe(414);
  });

  it.each([
    ['/actuator/sketches/..'],
    ['/actuator/sketches/../health'],
    ['/actuator/sketches/..%2F..%2Fetc%2Fpasswd'],
    ['/actuator/sketches/%2e%2e'],
    ['/actuator/../actuator/health'],
    ['/actuator/./health'],
  ])('treats traversal-looking %s as a plain non-matching path (404, no normalisation)', (url) => {
    expect(router().r.respond('GET', url).status).toBe(404);
  });

  it('decodes percent-encoded ids', () => {
    expect(router().r.respond('GET', '/actuator/sketches/LIMIT%5F60000').status).toBe(200);
  });

  it('serves under a custom or empty base path', () => {
    expect(router({ basePath: '/manage/x' }).r.respond('GET', '/manage/x/health').status).toBe(200);
    expect(router({ basePath: '/manage/x' }).r.respond('GET', '/actuator/health').status).toBe(404);
    const root = router({ basePath: '' }).r;
    expect(root.respond('GET', '/health').status).toBe(200);
    expect(json(root.respond('GET', '/', 'h:1'))._links.self.href).toBe('http://h:1');
  });

  it('hides a source failure behind a generic 500 and reports it', () => {
    const sources = fakeSources();
    sources.ghosts = () => {
      throw new Error('secret internal detail');
    };
    const reported: string[] = [];
    const { r } = router({ sources, onSourceError: (e, err) => reported.push(`${e}: ${(err as Error).message}`) });
    const res = r.respond('GET', '/actuator/diag/ghosts');
    expect(res.status).toBe(500);
    expect(res.body).not.toMatch(/secret|at |\.ts/);
    expect(reported).toEqual(['diag/ghosts: secret internal detail']);
  });

  it('500s a value JSON cannot serialise (cycle, BigInt)', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const { r } = router({ sources: fakeSources({ diag: cyclic }) });
    expect(r.respond('GET', '/actuator/diag').status).toBe(500);
    const { r: r2 } = router({ sources: fakeSources({ diag: { n: 1n } }) });
    expect(r2.respond('GET', '/actuator/diag').status).toBe(500);
  });
});

describe('ActuatorRouter bearer token', () => {
  const { r } = router({ token: 'tok-123' });

  it('401s every path without the token, before revealing whether it exists', () => {
    for (const url of ['/actuator', '/actuator/health', '/actuator/nope', '/actuator/%zz']) {
      const res = r.respond('GET', url);
      expect(res.status).toBe(401);
      expect(res.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="diag-actuator"' });
    }
  });

  it('401s a wrong token with error="invalid_token"', () => {
    const res = r.respond('GET', '/actuator/health', undefined, 'Bearer nope');
    expect(res.status).toBe(401);
    expect(res.headers?.['WWW-Authenticate']).toMatch(/error="invalid_token"/);
  });

  it('serves with the right token', () => {
    expect(r.respond('GET', '/actuator/health', undefined, 'Bearer tok-123').status).toBe(200);
  });
});

describe('parseTarget', () => {
  it('splits and decodes segments, ignoring query and fragment', () => {
    expect(parseTarget('/a/b%20c?d=e#f')).toEqual({ segments: ['a', 'b c'] });
    expect(parseTarget('/a/b/')).toEqual({ segments: ['a', 'b'] });
    expect(parseTarget('/')).toEqual({ segments: [''] });
  });
});
