import * as http from 'node:http';
import * as net from 'node:net';
import { captureLogs as captureAll } from '../../support/logs';

/** Captures the package's log lines for one test file. */
export function captureLogs(): { lines: string[]; restore: () => void } {
  return captureAll();
}

export interface SimpleResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request with node:http, no connection reuse unless an agent is given. */
export function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; agent?: http.Agent; body?: string } = {},
): Promise<SimpleResponse & { reusedSocket: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: init.method ?? 'GET', headers: init.headers, agent: init.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            reusedSocket: req.reusedSocket,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * Writes raw bytes on a fresh TCP connection and collects everything the server sends until it closes the
 * connection or `waitMs` passes. `closed` tells which of the two happened.
 */
export function raw(
  port: number,
  data: string | Buffer | undefined,
  opts: { waitMs?: number; endAfterWrite?: boolean; responses?: number } = {},
): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), opts.waitMs ?? 2_000);
    socket.on('connect', () => {
      if (data !== undefined) socket.write(data);
      if (opts.endAfterWrite) socket.end();
    });
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // Keep-alive answers leave the connection open: stop once the expected responses are complete.
      if (
        opts.responses !== undefined &&
        parseResponses(Buffer.concat(chunks).toString('latin1')).length >= opts.responses
      ) {
        done = true;
        clearTimeout(timer);
        socket.destroy();
        resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: false, ms: Date.now() - started });
      }
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
  });
}

/**
 * Parses every complete HTTP/1.1 response in a raw byte stream (Content-Length framed, as the actuator sends).
 * `bodiless` lists the indices of responses to HEAD requests, which carry Content-Length but no body.
 */
export function parseResponses(text: string, bodiless: readonly number[] = []): SimpleResponse[] {
  const out: SimpleResponse[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) break;
    const lines = rest.slice(0, headEnd).split('\r\n');
    const status = Number(lines[0].split(' ')[1]);
    const headers: http.IncomingHttpHeaders = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const len = bodiless.includes(out.length) ? 0 : Number(headers['content-length'] ?? 0);
    if (rest.length < headEnd + 4 + len) break;
    out.push({ status, headers, body: rest.slice(headEnd + 4, headEnd + 4 + len) });
    rest = rest.slice(headEnd + 4 + len);
  }
  return out;
}

/** A stand-in for the host application's own HTTP server, living in the same process as the actuator. */
export async function startHostApp(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end('host ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
