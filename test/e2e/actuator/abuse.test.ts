import * as fs from 'node:fs';
import * as net from 'node:net';
import { startActuator, type ActuatorHandle } from '../../../src/actuator';
import { fakeGhostReport, fakeSources, LIMIT } from '../../unit/actuator/fakes';
import { captureLogs, delay, parseResponses, raw, request, startHostApp } from './helpers';

/**
 * Hostile and broken clients. After every case the actuator must still answer and the host application's own
 * server, in the same process, must too.
 */

let logs: ReturnType<typeof captureLogs>;
let h: ActuatorHandle;
let host: Awaited<ReturnType<typeof startHostApp>>;
const errors: unknown[] = [];
const onError = (e: unknown) => errors.push(e);

beforeAll(async () => {
  logs = captureLogs();
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  host = await startHostApp();
  const started = await startActuator(
    {
      include: ['*'],
      exclude: [],
      basePath: '/actuator',
      port: 0,
      address: '127.0.0.1',
      authToken: undefined,
      authTokenFile: undefined,
    },
    fakeSources({ ghosts: fakeGhostReport(20), sketches: [LIMIT] }),
    // Short timeouts so slow-client cases finish quickly.
    { headersTimeoutMs: 400, requestTimeoutMs: 800, idleSocketTimeoutMs: 1_500, keepAliveTimeoutMs: 1_000 },
  );
  if (!started) throw new Error(logs.lines.join('\n'));
  h = started;
});

afterAll(async () => {
  await h?.stop();
  await host?.close();
  process.off('uncaughtException', onError);
  process.off('unhandledRejection', onError);
  logs.restore();
});

afterEach(async () => {
  // The invariant every case ends on.
  expect((await request(`${h.url}/health`)).status).toBe(200);
  const app = await request(`http://127.0.0.1:${host.port}/`);
  expect([app.status, app.body]).toEqual([200, 'host ok']);
  expect(errors).toEqual([]);
});

/** TCP connections whose local end is `port`, ESTABLISHED (01) or CLOSE_WAIT (08), read from /proc/net/tcp{,6}. */
function openOnPort(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').slice(1) : []))
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[1]?.endsWith(`:${hex}`) && (cols[3] === '01' || cols[3] === '08')).length;
}

const req = (target: string, method = 'GET', extra = '') =>
  `${method} ${target} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`;

function single(text: string) {
  const responses = parseResponses(text);
  expect(responses).toHaveLength(1);
  return responses[0];
}

describe('actuator under abuse', () => {
  it.each([
    ['/actuator/sketches/%zz'],
    ['/actuator/sketches/%'],
    ['/actuator/sketches/%E0%A4%A'],
    ['/actuator/sketches/%C0%AF'],
    ['/actuator/health?q=%G1'],
  ])('400s malformed percent-encoding %s', async (target) => {
    const res = single((await raw(h.port, req(target), { responses: 1 })).text);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.body)).toMatchObject({ status: 400, error: 'Bad Request' });
  });

  it.each([
    ['/actuator/sketches/..'],
    ['/actuator/sketches/../health'],
    ['/actuator/sketches/..%2F..%2F..%2Fetc%2Fpasswd'],
    ['/actuator/sketches/%2e%2e%2f%2e%2e%2fpackage.json'],
    ['/actuator/sketches/..\\..\\windows'],
    ['/actuator/../../etc/passwd'],
  ])('404s traversal-looking %s without normalising it', async (target) => {
    const res = single((await raw(h.port, req(target), { responses: 1 })).text);
    expect(res.status).toBe(404);
    expect(res.body).not.toMatch(/root:|"name":"diag-instrumentation"/);
  });

  it('400s a raw null byte in the target (rejected by the parser) with a JSON body', async () => {
    const out = await raw(h.port, req('/actuator/health\0x'));
    const res = single(out.text);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400 });
    expect(out.closed).toBe(true);
  });

  it('400s a percent-encoded null byte', async () => {
    for (const target of ['/actuator/sketches/LIMIT_60000%00', '/actuator/health%00.json']) {
      expect(single((await raw(h.port, req(target), { responses: 1 })).text).status).toBe(400);
    }
  });

  it('answers a 64 KB URL with 414 and closes', async () => {
    const out = await raw(h.port, req(`/actuator/sketches/${'A'.repeat(64 * 1024)}`));
    const res = single(out.text);
    expect(res.status).toBe(414);
    expect(res.headers.connection).toBe('close');
    expect(out.closed).toBe(true);
  });

  it('answers a URL between the router limit and the parser limit with 414', async () => {
    expect(single((await raw(h.port, req(`/actuator/${'b'.repeat(4_000)}`), { responses: 1 })).text).status).toBe(414);
  });

  it('answers oversized headers with 431', async () => {
    const out = await raw(h.port, req('/actuator/health', 'GET', `X-Big: ${'c'.repeat(32 * 1024)}\r\n`));
    expect(single(out.text).status).toBe(431);
  });

  it.each([
    ['garbage\r\n\r\n'],
    ['\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'],
    ['GET\r\n\r\n'],
    ['GET / HTTP/9.9\r\n\r\n'],
  ])('answers a garbage request line %j with 400 and closes', async (line) => {
    const out = await raw(h.port, line);
    expect(out.closed).toBe(true);
    const res = single(out.text);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400 });
  });

  it('answers a method the parser does not know with 501 and Allow', async () => {
    const res = single((await raw(h.port, req('/actuator/health', 'BREW'), { responses: 1 })).text);
    expect(res.status).toBe(501);
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it.each([['PROPFIND'], ['TRACE'], ['CONNECT'], ['MKCOL'], ['PURGE']])(
    'answers the known-but-unsupported method %s with 405 and Allow',
    async (method) => {
      const target = method === 'CONNECT' ? 'localhost:1' : '/actuator/health';
      const out = await raw(h.port, req(target, method), { responses: 1 });
      const res = single(out.text);
      expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
      if (method === 'CONNECT') expect(res.status).toBe(405);
      else expect(res.status).toBe(405);
    },
  );

  it('closes a half-open socket that never finishes its headers (408), without blocking others', async () => {
    const pending = raw(h.port, 'GET /actuator/health HTTP/1.1\r\nHost: x\r\nX-Slow: ', { waitMs: 5_000 });
    await delay(100);
    expect((await request(`${h.url}/health`)).status).toBe(200);
    const out = await pending;
    expect(out.closed).toBe(true);
    expect(out.ms).toBeLessThan(4_000);
    expect(single(out.text).status).toBe(408);
  });

  it('times out (408) a client that sends only blank lines, which HTTP allows before a request line', async () => {
    const out = await raw(h.port, '\r\n\r\n\r\n', { waitMs: 5_000 });
    expect(out.closed).toBe(true);
    expect(single(out.text).status).toBe(408);
  });

  it('closes a socket that connects and never sends a byte', async () => {
    const out = await raw(h.port, undefined, { waitMs: 5_000 });
    expect(out.closed).toBe(true);
    expect(out.ms).toBeLessThan(4_000);
  });

  it('handles a client that half-closes mid-request', async () => {
    const out = await raw(h.port, 'GET /actuator/health HTTP/1.1\r\nHo', { endAfterWrite: true, waitMs: 5_000 });
    expect(out.closed).toBe(true);
    expect(out.ms).toBeLessThan(4_000);
  });

  it('answers a complete request from a client that half-closes right after sending it', async () => {
    const out = await raw(h.port, req('/actuator/health'), { endAfterWrite: true });
    expect(single(out.text)).toMatchObject({ status: 200, body: '{"status":"UP"}' });
  });

  it('answers pipelined requests in order on one connection', async () => {
    const pipeline =
      req('/actuator/health') +
      req('/actuator/sketches/LIMIT_60000') +
      req('/actuator/nope') +
      req('/actuator/health', 'DELETE') +
      req('/actuator/sketches', 'HEAD') +
      `GET /actuator/diag/ghosts HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
    const out = await raw(h.port, pipeline);
    const responses = parseResponses(out.text, [4]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 404, 405, 200, 200]);
    expect(responses[0].body).toBe('{"status":"UP"}');
    expect(JSON.parse(responses[1].body)).toMatchObject({ memory_bytes: 1_048_576 });
    expect(JSON.parse(responses[5].body)).toMatchObject({ trackedCount: 20 });
    expect(out.closed).toBe(true);
  });

  it('survives a burst of connections destroyed mid-request: each is accepted, none is left open, nothing is logged', async () => {
    const linesBefore = logs.lines.length;
    const connected = await Promise.all(
      Array.from(
        { length: 50 },
        (_, i) =>
          new Promise<boolean>((resolve) => {
            const s = net.connect(h.port, '127.0.0.1', () => {
              s.write(req('/actuator/diag/ghosts').slice(0, 10 + (i % 30)));
              s.destroy();
              resolve(true);
            });
            s.on('error', () => resolve(false));
          }),
      ),
    );
    // every connection reached the server: the burst happened, it was not refused
    expect(connected.filter(Boolean)).toHaveLength(50);
    // and the actuator closes its side of each: none stays ESTABLISHED or CLOSE_WAIT on its port (the kernel's
    // table: the actuator unrefs its sockets, so the process's list of active handles does not show them)
    for (let waited = 0; openOnPort(h.port) > 0 && waited < 2_000; waited += 50) await delay(50);
    expect(openOnPort(h.port)).toBe(0);
    // a half-sent request that the client abandoned is not the actuator's failure to report
    expect(logs.lines.slice(linesBefore)).toEqual([]);
    const after = await request(`${h.url}/diag/ghosts`);
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body)).toMatchObject({ trackedCount: 20 });
  });

  it('never puts a stack trace in a body', async () => {
    const targets = ['/actuator/%zz', '/actuator/x', `/actuator/${'z'.repeat(3_000)}`, '/actuator/sketches/..'];
    for (const t of targets) {
      const body = parseResponses((await raw(h.port, req(t), { responses: 1 })).text)[0].body;
      expect(body).not.toMatch(/\n\s+at |Error:|node:internal|\.ts:\d+/);
    }
  });
});
