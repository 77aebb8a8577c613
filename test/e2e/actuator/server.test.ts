import * as http from 'node:http';
import * as net from 'node:net';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startActuator, type ActuatorConfig, type ActuatorHandle } from '../../../src/actuator';
import { isLoopback } from '../../../src/actuator/server';
import { tempDir } from '../../support/temp';
import { fakeGhostReport, fakeSources, LIMIT, SHIELD } from '../../unit/actuator/fakes';
import { captureLogs, delay, raw, request } from './helpers';

const config = (over: Partial<ActuatorConfig> = {}): ActuatorConfig => ({
  include: ['*'],
  exclude: [],
  basePath: '/actuator',
  port: 0,
  address: '127.0.0.1',
  authToken: undefined,
  authTokenFile: undefined,
  ...over,
});

let logs: ReturnType<typeof captureLogs>;
const handles: ActuatorHandle[] = [];
beforeEach(() => {
  logs = captureLogs();
});
afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.stop()));
  logs.restore();
});

async function start(
  over: Partial<ActuatorConfig> = {},
  sources = fakeSources({ ghosts: fakeGhostReport(3), diag: { orphans: [] }, sketches: [LIMIT, SHIELD] }),
) {
  const h = await startActuator(config(over), sources, { gracefulStopTimeoutMs: 2_000 });
  if (!h) throw new Error(`actuator did not start: ${logs.lines.join('\n')}`);
  handles.push(h);
  return h;
}

describe('startActuator', () => {
  it('does not listen when include is unset', async () => {
    const h = await startActuator(config({ include: undefined }), fakeSources());
    expect(h).toBeUndefined();
    expect(logs.lines.join('\n')).not.toMatch(/listening/);
  });

  it('binds 127.0.0.1 on a free port when port is 0, and logs the bound port', async () => {
    const h = await start();
    expect(h.address).toBe('127.0.0.1');
    expect(h.port).toBeGreaterThan(0);
    expect(h.url).toBe(`http://127.0.0.1:${h.port}/actuator`);
    expect(h.exposed).toEqual(['health', 'diag', 'startup', 'sketches']);
    expect(logs.lines).toContainEqual(
      expect.stringMatching(new RegExp(`^INFO actuator listening on http://127\\.0\\.0\\.1:${h.port}/actuator`)),
    );
  });

  it('serves every endpoint as JSON with safe headers', async () => {
    const h = await start();
    const expectations: [string, number, unknown][] = [
      [
        '',
        200,
        expect.objectContaining({
          _links: expect.objectContaining({
            'sketches-id': { href: `http://127.0.0.1:${h.port}/actuator/sketches/{id}`, templated: true },
          }),
        }),
      ],
      ['/health', 200, { status: 'UP' }],
      ['/diag', 200, { orphans: [] }],
      ['/diag/ghosts', 200, fakeGhostReport(3)],
      ['/sketches', 200, { LIMIT_60000: 'Active (1 MB)', SHIELD_1000: 'Active (1.5 MB)' }],
      [
        '/sketches/LIMIT_60000',
        200,
        { epsilon: 0.0001, memory_bytes: 1_048_576, delta_percent: 0.0335, store: 'native' },
      ],
      ['/sketches/NOPE_1', 404, expect.objectContaining({ status: 404, expected: '<TYPE>_<windowMs>' })],
      ['/unknown', 404, expect.objectContaining({ status: 404, error: 'Not Found' })],
      ['/sketches/%zz', 400, expect.objectContaining({ status: 400 })],
    ];
    for (const [path, status, body] of expectations) {
      const res = await request(h.url + path);
      expect([path, res.status]).toEqual([path, status]);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
      expect(JSON.parse(res.body)).toEqual(body);
    }
  });

  it('serves the DISABLED snapshot when Phase 2 is off', async () => {
    const h = await start({}, fakeSources());
    const res = await request(`${h.url}/diag/ghosts`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ status: 'DISABLED' });
  });

  it('answers HEAD with the GET headers and no body, OPTIONS with 204 and Allow, other methods with 405 and Allow', async () => {
    const h = await start();
    const get = await request(`${h.url}/diag/ghosts`);
    const head = await request(`${h.url}/diag/ghosts`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    const options = await request(`${h.url}/health`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe('GET, HEAD, OPTIONS');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await request(`${h.url}/health`, {
        method,
        body: method === 'DELETE' ? undefined : '{"x":1}',
        headers: { 'content-type': 'application/json' },
      });
      expect([method, res.status]).toEqual([method, 405]);
      expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
      expect(JSON.parse(res.body)).toMatchObject({ status: 405, error: 'Method Not Allowed' });
    }
  });

  it.each([
    [
      ['health'],
      [],
      { '/health': 200, '/diag': 404, '/diag/ghosts': 404, '/sketches': 404, '/sketches/LIMIT_60000': 404 },
    ],
    [
      ['*'],
      ['diag'],
      { '/health': 200, '/diag': 404, '/diag/ghosts': 404, '/sketches': 200, '/sketches/LIMIT_60000': 200 },
    ],
    [
      ['DIAG', 'Sketches'],
      ['sketches'],
      { '/health': 404, '/diag': 200, '/diag/ghosts': 200, '/sketches': 404, '/sketches/LIMIT_60000': 404 },
    ],
    [['*'], ['*'], { '': 200, '/health': 404, '/diag': 404, '/sketches': 404 }],
  ])('exposure include=%j exclude=%j', async (include, exclude, expected) => {
    const h = await start({ include, exclude });
    const unknown = await request(`${h.url}/unknown`);
    for (const [path, status] of Object.entries(expected)) {
      const res = await request(h.url + path);
      expect([path, res.status]).toEqual([path, status]);
      // Unexposed and unknown are indistinguishable.
      if (status === 404) expect(res.body).toBe(unknown.body);
    }
    const index = JSON.parse((await request(h.url)).body);
    const exposedPaths = Object.entries(expected)
      .filter(([p, s]) => s === 200 && p !== '')
      .map(([p]) => p);
    const hrefs = Object.values(index._links as Record<string, { href: string }>).map((l) => l.href.replace(h.url, ''));
    for (const p of ['/health', '/diag', '/sketches'])
      expect([p, hrefs.includes(p)]).toEqual([p, exposedPaths.includes(p)]);
  });

  it('serves under a custom base path', async () => {
    const h = await start({ basePath: '/manage' });
    expect(h.url).toMatch(/\/manage$/);
    expect((await request(`${h.url}/health`)).status).toBe(200);
    expect((await request(`http://127.0.0.1:${h.port}/actuator/health`)).status).toBe(404);
  });

  it('requires the bearer token when one is configured', async () => {
    const h = await start({ authToken: 'T0ken-!' });
    const none = await request(`${h.url}/health`);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="diag-actuator"');
    expect(JSON.parse(none.body)).toMatchObject({ status: 401 });
    const wrong = await request(`${h.url}/health`, { headers: { authorization: 'Bearer T0ken-' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/invalid_token/);
    const hidden = await request(`${h.url}/does-not-exist`);
    expect(hidden.status).toBe(401);
    const ok = await request(`${h.url}/diag/ghosts`, { headers: { authorization: 'Bearer T0ken-!' } });
    expect(ok.status).toBe(200);
    expect(logs.lines.join('\n')).not.toMatch(/T0ken/);
  });

  it('reads the token from management.server.auth-token-file, as a mounted secret', async () => {
    const file = path.join(tempDir('token'), 'token');
    fs.writeFileSync(file, 'from-a-file\n');
    const h = await start({ authTokenFile: file });
    expect((await request(`${h.url}/health`)).status).toBe(401);
    const ok = await request(`${h.url}/health`, { headers: { authorization: 'Bearer from-a-file' } });
    expect(ok.status).toBe(200);
    expect(logs.lines.join('\n')).not.toContain('from-a-file');
  });

  it('does not start, naming the path, when the token file cannot be read or is empty', async () => {
    const dir = tempDir('token');
    const empty = path.join(dir, 'empty');
    fs.writeFileSync(empty, '\n');
    for (const file of [path.join(dir, 'missing'), empty]) {
      const h = await startActuator(config({ authTokenFile: file }), fakeSources());
      expect(h).toBeUndefined();
    }
    expect(logs.lines).toContainEqual(
      expect.stringMatching(
        /^WARN actuator not started: management\.server\.auth-token-file .*missing cannot be read \(ENOENT\)/,
      ),
    );
    expect(logs.lines).toContainEqual(
      expect.stringMatching(/^WARN actuator not started: management\.server\.auth-token-file .*empty is empty/),
    );
  });

  it('warns once when it listens beyond loopback without a token, naming the address and what becomes readable', async () => {
    const open = await start({ address: '0.0.0.0' });
    const warning = logs.lines.filter((l) => l.startsWith('WARN'));
    expect(warning).toEqual([
      expect.stringMatching(
        new RegExp(
          `^WARN actuator listens on 0\\.0\\.0\\.0:${open.port}, beyond loopback, with no management\\.server\\.auth-token: .*every bean name`,
        ),
      ),
    ]);
    logs.lines.length = 0;
    await start({ address: '0.0.0.0', authToken: 't0ken' });
    await start({ address: '127.0.0.1' });
    expect(logs.lines.filter((l) => l.startsWith('WARN'))).toEqual([]);
    expect(['127.0.0.1', '127.8.9.1', '::1', 'localhost', '::ffff:127.0.0.1'].every(isLoopback)).toBe(true);
    expect(['0.0.0.0', '::', '10.0.0.5', 'example.com', '::ffff:10.0.0.1'].some(isLoopback)).toBe(false);
  });

  it('keeps connections alive between requests', async () => {
    const h = await start();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const results = [];
      for (let i = 0; i < 3; i++) results.push(await request(`${h.url}/health`, { agent }));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(results.map((r) => r.reusedSocket)).toEqual([false, true, true]);
      expect(results[0].headers.connection).toBe('keep-alive');
    } finally {
      agent.destroy();
    }
  });

  it('hides a throwing source behind a generic 500, warns once, and keeps serving', async () => {
    const sources = fakeSources();
    sources.ghosts = () => {
      throw new Error('boom at /secret/path.ts:12');
    };
    const h = await start({}, sources);
    for (let i = 0; i < 3; i++) {
      const res = await request(`${h.url}/diag/ghosts`);
      expect(res.status).toBe(500);
      expect(res.body).not.toMatch(/boom|secret|\.ts/);
    }
    expect(logs.lines.filter((l) => l.startsWith('WARN') && l.includes('diag/ghosts failed'))).toHaveLength(1);
    expect((await request(`${h.url}/health`)).status).toBe(200);
  });
});

describe('port in use and bad addresses', () => {
  it('warns and resolves undefined when the port is taken; no unhandled rejection; the holder keeps working', async () => {
    const holder = net.createServer((s) => s.end('holder'));
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as net.AddressInfo).port;
    const rejections: unknown[] = [];
    const onRejection = (e: unknown) => rejections.push(e);
    process.on('unhandledRejection', onRejection);
    try {
      const h = await startActuator(config({ port }), fakeSources());
      expect(h).toBeUndefined();
      await delay(50);
      expect(rejections).toEqual([]);
      const warn = logs.lines.find((l) => l.startsWith('WARN'));
      expect(warn).toMatch(new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
      expect(warn).toMatch(/ERR_ACTUATOR_LISTEN_FAILED\/EADDRINUSE/);
      expect(warn).toMatch(/application continues/);
      expect((await raw(port, undefined, { waitMs: 1_000 })).text).toBe('holder');
    } finally {
      process.off('unhandledRejection', onRejection);
      await new Promise((r) => holder.close(r));
    }
  });

  it('warns and resolves undefined for an address this machine does not have', async () => {
    // 192.0.2.0/24 is TEST-NET-1, never assigned to a local interface.
    const h = await startActuator(config({ address: '192.0.2.1' }), fakeSources());
    expect(h).toBeUndefined();
    expect(logs.lines.find((l) => l.startsWith('WARN'))).toMatch(/192\.0\.2\.1/);
  });

  it('warns and resolves undefined for an unresolvable host name', async () => {
    const h = await startActuator(config({ address: 'no-such-host.invalid' }), fakeSources());
    expect(h).toBeUndefined();
    expect(logs.lines.find((l) => l.startsWith('WARN'))).toMatch(/no-such-host\.invalid/);
  });
});

describe('graceful stop', () => {
  it('finishes a request that is in flight when stop() is called, then refuses new connections', async () => {
    let handle: ActuatorHandle | undefined;
    let stopPromise: Promise<void> | undefined;
    const sources = fakeSources({ ghosts: fakeGhostReport(50) });
    const real = sources.ghosts.bind(sources);
    // Stop is requested while the request is being answered: it is in flight by construction.
    sources.ghosts = () => {
      stopPromise = handle!.stop();
      return real();
    };
    handle = await start({}, sources);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const res = await request(`${handle.url}/diag/ghosts`, { agent });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual(fakeGhostReport(50));
      expect(res.headers.connection).toBe('close');
      expect(stopPromise).toBeDefined();
      await stopPromise;
      await expect(request(`${handle.url}/health`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      agent.destroy();
    }
  });

  it('delivers a large response to a slow reader in full while stopping', async () => {
    const h = await start({}, fakeSources({ ghosts: fakeGhostReport(200_000) }));
    const expectedLength = Buffer.byteLength(JSON.stringify(fakeGhostReport(200_000)));
    let stop: Promise<void> | undefined;
    const received = await new Promise<number>((resolve, reject) => {
      const req = http.get(`${h.url}/diag/ghosts`, { agent: false }, (res) => {
        res.pause();
        stop = h.stop();
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
        res.on('error', reject);
        setTimeout(() => res.resume(), 300);
      });
      req.on('error', reject);
    });
    expect(received).toBe(expectedLength);
    await stop;
  });

  it('closes idle keep-alive sockets promptly, and stop() is idempotent', async () => {
    const h = await start();
    const socketClosed = new Promise<void>((resolve) => {
      const s = net.connect(h.port, '127.0.0.1', () => s.write(`GET /actuator/health HTTP/1.1\r\nHost: x\r\n\r\n`));
      s.on('data', () => undefined);
      s.on('close', () => resolve());
    });
    await delay(100);
    const started = Date.now();
    const a = h.stop();
    const b = h.stop();
    expect(b).toBe(a);
    await a;
    await socketClosed;
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(logs.lines.filter((l) => /stopped/.test(l))).toHaveLength(1);
  });
});
