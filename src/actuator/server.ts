import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type * as HttpTerminator from 'http-terminator';
import { safeLog } from '../shared/logger';
import { ActuatorListenError } from './errors';
import { ENDPOINT_IDS, resolveExposure } from './exposure';
import { ActuatorRouter, type ActuatorResponse } from './routes';
import type { ActuatorConfig, ActuatorHandle, ActuatorOptions, ActuatorSources } from './types';
import { markOwnServer } from '../shared/own-servers';
import { yieldPortToApplication } from './port-yield';

const DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  idleSocketTimeoutMs: 30_000,
  gracefulStopTimeoutMs: 3_000,
  maxHeaderBytes: 16_384,
  maxConnections: 256,
} satisfies Required<ActuatorOptions>;

// Every response is JSON, never cached by intermediaries, never sniffed into something a browser would run.
const BASE_HEADERS = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
} as const;

/**
 * Starts the actuator side server, or does nothing when `config.include` is unset.
 *
 * Never rejects and never throws: a port in use, an address that cannot be bound or any other start-up
 * failure is logged as a warning and resolves `undefined`, and the application carries on without the
 * actuator. The server never keeps the process alive by itself (listening handle and sockets are unref'd).
 *
 * @param config the resolved `management.*` settings (`DiagConfig['actuator']`)
 * @param sources where responses are read from, at request time
 * @param options timeouts and limits; the defaults suit production
 */
export async function startActuator(
  config: ActuatorConfig,
  sources: ActuatorSources,
  options: ActuatorOptions = {},
): Promise<ActuatorHandle | undefined> {
  try {
    if (config.include === undefined) return undefined;
    const authToken = resolveAuthToken(config);
    if (authToken instanceof Error) {
      safeLog('warn', `actuator not started: ${authToken.message}`);
      return undefined;
    }
    return await start({ ...config, authToken }, sources, { ...DEFAULTS, ...definedOnly(options) });
  } catch (error) {
    safeLog('warn', `actuator not started: ${describe(error)}; the application continues without it`);
    return undefined;
  }
}

async function start(
  config: ActuatorConfig,
  sources: ActuatorSources,
  opts: Required<ActuatorOptions>,
): Promise<ActuatorHandle | undefined> {
  const exposure = resolveExposure(config.include, config.exclude);
  if (exposure.unknown.length > 0) {
    safeLog(
      'warn',
      `actuator: ignoring unknown endpoint id(s) ${exposure.unknown.join(', ')} in management.endpoints.web.exposure; ` +
        `known ids are ${ENDPOINT_IDS.join(', ')}`,
    );
  }
  const address = config.address;
  let boundPort = config.port;
  const hostForLinks = () => `${address.includes(':') ? `[${address}]` : address}:${boundPort}`;
  const failures = new Set<string>();
  const router = new ActuatorRouter({
    basePath: config.basePath,
    exposure,
    sources,
    authToken: config.authToken,
    fallbackHost: hostForLinks,
    onSourceError: (endpoint, error) => {
      // Once per endpoint at WARN: a broken source under polling must not flood the host's log.
      const level = failures.has(endpoint) ? 'debug' : 'warn';
      failures.add(endpoint);
      safeLog(level, `actuator: ${endpoint} failed: ${describe(error)}`);
    },
  });

  const server = http.createServer(
    {
      maxHeaderSize: opts.maxHeaderBytes,
      // Node refuses a headers timeout longer than the request timeout; the request bound is the outer one.
      headersTimeout: Math.min(opts.headersTimeoutMs, opts.requestTimeoutMs),
      requestTimeout: opts.requestTimeoutMs,
      // The timeouts above are only enforced when this check runs; Node's default (30 s) would make them loose.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(opts.headersTimeoutMs / 2))),
      insecureHTTPParser: false,
      noDelay: true,
    },
    (req, res) => onRequest(router, req, res),
  );
  // its listening is not the application's: a lazy container's "ready" waits for the application's server
  markOwnServer(server);
  server.keepAliveTimeout = opts.keepAliveTimeoutMs;
  server.timeout = opts.idleSocketTimeoutMs;
  server.maxConnections = opts.maxConnections;
  // A keep-alive socket is a handle of its own; unref'd, an open client connection cannot hold the host up.
  server.on('connection', (socket: net.Socket) => socket.unref());
  server.on('clientError', onClientError);
  // Without a listener Node drops CONNECT silently; a proxy tunnel is not something this server offers.
  server.on('connect', (_req: http.IncomingMessage, socket: net.Socket) => {
    socket.on('error', () => socket.destroy());
    writeRawAndClose(socket, 405, 'CONNECT is not supported; use GET', 'Allow: GET, HEAD, OPTIONS\r\n');
  });

  try {
    await listen(server, config.port, address);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    const why =
      code === 'EADDRINUSE'
        ? `${address}:${config.port} is already in use; set management.server.port to a free port, or 0 for any free port`
        : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
          ? `address ${address} is not available on this machine (management.server.address)`
          : code === 'EACCES'
            ? `permission denied binding ${address}:${config.port}`
            : describe(error);
    const failure = new ActuatorListenError(`actuator not started: ${why}`, code, error);
    safeLog(
      'warn',
      `${failure.message} [${failure.code}${code ? `/${code}` : ''}]; the application continues without it`,
    );
    server.removeAllListeners();
    return undefined;
  }
  server.unref();
  // After start-up an 'error' event (rare: accept failures) must not become an uncaught exception.
  server.on('error', (error) => safeLog('warn', `actuator server error: ${describe(error)}`));

  const boundTo = (): number => {
    const info = server.address();
    return typeof info === 'object' && info !== null ? info.port : config.port;
  };
  boundPort = boundTo();
  const url = (): string => `http://${hostForLinks()}${config.basePath}`;
  let stopped = false;
  const stopYielding = yieldPortToApplication({
    port: () => boundPort,
    giveWay(port) {
      // Synchronous: the application's listen runs next, on this turn, and must find the port free.
      boundPort = 0;
      server.close();
      void listen(server, 0, address).then(
        () => {
          if (stopped) return void server.close();
          boundPort = boundTo();
          safeLog(
            'warn',
            `actuator: the application listens on port ${port}, the actuator's (management.server.port): the ` +
              `actuator gave it up and now listens on ${url()}; set management.server.port to a port of its own`,
          );
        },
        (error: unknown) =>
          safeLog(
            'warn',
            `actuator: the application listens on port ${port}, the actuator's (management.server.port): the ` +
              `actuator gave it up and stopped (${describe(error)}); set management.server.port to a port of its own`,
          ),
      );
    },
  });
  safeLog(
    'info',
    `actuator listening on ${url()} (port ${boundPort}; endpoints: ${exposure.exposed.join(', ') || 'none'}` +
      `${config.authToken !== undefined ? '; bearer token required' : ''})`,
  );
  if (config.authToken === undefined && !isLoopback(address)) {
    safeLog(
      'warn',
      `actuator listens on ${hostForLinks()}, beyond loopback, with no management.server.auth-token: anyone who can ` +
        `reach it can read ${exposure.exposed.map((id) => READABLE[id]).join(', ') || 'the endpoint index'}; ` +
        'set management.server.auth-token or auth-token-file, or bind 127.0.0.1',
    );
  }

  // Loaded here, not at the top: an application without the actuator never pays for its ~25 modules.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createHttpTerminator } = require('http-terminator') as typeof HttpTerminator;
  const terminator = createHttpTerminator({ server, gracefulTerminationTimeout: opts.gracefulStopTimeoutMs });
  let stopping: Promise<void> | undefined;
  return {
    get port() {
      return boundPort;
    },
    address,
    get url() {
      return url();
    },
    exposed: exposure.exposed,
    stop(): Promise<void> {
      stopped = true;
      stopYielding();
      stopping ??= terminator.terminate().then(
        () => safeLog('info', `actuator on port ${boundPort} stopped`),
        (error: unknown) => safeLog('warn', `actuator on port ${boundPort} did not stop cleanly: ${describe(error)}`),
      );
      return stopping;
    },
  };
}

function onRequest(router: ActuatorRouter, req: http.IncomingMessage, res: http.ServerResponse): void {
  let response: ActuatorResponse;
  try {
    response = router.respond(req.method ?? 'GET', req.url ?? '/', req.headers.host, req.headers.authorization);
  } catch (error) {
    safeLog('warn', `actuator: request failed: ${describe(error)}`);
    response = { status: 500, body: JSON.stringify({ status: 500, error: 'Internal Server Error' }) };
  }
  if (response.later) {
    void response.later.then((answer) => write(req, res, answer));
    return;
  }
  write(req, res, response);
}

function write(req: http.IncomingMessage, res: http.ServerResponse, response: ActuatorResponse): void {
  try {
    const headers: http.OutgoingHttpHeaders = { ...BASE_HEADERS, ...response.headers };
    // Encoded once: the length comes for free and the socket gets bytes, not a string to encode again.
    const body =
      response.status === 204
        ? undefined
        : typeof response.body === 'string'
          ? Buffer.from(response.body, 'utf8')
          : response.body;
    if (body !== undefined) headers['Content-Length'] = body.length;
    // A body we will not read is not drained either: closing is cheaper than reading an arbitrary upload.
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) {
      if (req.headers['content-length'] !== '0') headers.Connection = 'close';
    }
    res.writeHead(response.status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch (error) {
    safeLog('debug', `actuator: could not write a response: ${describe(error)}`);
    res.destroy();
  }
}

/**
 * Requests the parser rejects never reach the handler. Node's default answer is an empty 400; this one says
 * what was wrong, in JSON like every other answer, then closes the connection.
 */
function onClientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: net.Socket): void {
  const code = error.code;
  if (
    code === 'ECONNRESET' ||
    !socket.writable ||
    (socket as { _httpMessage?: http.ServerResponse })._httpMessage?.headersSent
  ) {
    socket.destroy();
    return;
  }
  let status = 400;
  let message = 'malformed HTTP request';
  let extra = '';
  if (code === 'HPE_HEADER_OVERFLOW') {
    const raw = error.rawPacket;
    const lineEnd = raw ? raw.indexOf('\n') : -1;
    // No end of the request line within the limit: the URL itself is what is too long.
    if (raw && (lineEnd < 0 || lineEnd >= raw.length - 1)) {
      status = 414;
      message = 'request target too long';
    } else {
      status = 431;
      message = 'request headers too large';
    }
  } else if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADER_TIMEOUT') {
    status = 408;
    message = 'request not received in time';
  } else if (
    code === 'HPE_INVALID_METHOD' &&
    error.rawPacket &&
    /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S+ HTTP\/1\.[01]\r?\n/.test(error.rawPacket.toString('latin1', 0, 4096))
  ) {
    // A well-formed request with a method the parser does not know.
    status = 501;
    message = 'method not implemented; use GET';
    extra = 'Allow: GET, HEAD, OPTIONS\r\n';
  } else if (code === 'HPE_INVALID_URL') {
    message = 'malformed request target';
  }
  writeRawAndClose(socket, status, message, extra);
}

/** A complete JSON error response written straight to a socket the HTTP layer has given up on, then closed. */
function writeRawAndClose(socket: net.Socket, status: number, message: string, extraHeaders = ''): void {
  const body = JSON.stringify({ status, error: http.STATUS_CODES[status], message });
  try {
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n${extraHeaders}Connection: close\r\n\r\n${body}`,
    );
  } catch {
    socket.destroy();
  }
}

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    // exclusive: under cluster, a second worker gets EADDRINUSE (a warning) instead of silently sharing.
    server.listen({ port, host, exclusive: true });
  });
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}

function definedOnly(options: ActuatorOptions): Partial<ActuatorOptions> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options ?? {})) if (v !== undefined) out[k] = v;
  return out as Partial<ActuatorOptions>;
}

/** What each endpoint lets a caller read, for the warning about an unprotected non-loopback actuator. */
const READABLE: Record<string, string> = {
  health: 'the health status',
  diag: 'every bean name, the dependency graph and the ghost reports',
  startup: 'every bean name and its creation time',
  sketches: 'the sketch ids and their fleet state',
};

/** Whether a bind address only accepts connections from this machine. */
export function isLoopback(address: string): boolean {
  const a = address.trim().toLowerCase();
  if (a === 'localhost' || a === '::1' || a === '[::1]') return true;
  if (net.isIPv4(a)) return a.startsWith('127.');
  const mapped = /^(?:::ffff:)(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped !== null && mapped[1]!.startsWith('127.');
}

/**
 * The token requests must carry: `auth-token` if set, else the content of `auth-token-file` (trailing line
 * breaks removed). A file that cannot be read, or is empty, is an error: starting without the token the
 * operator asked for would serve everything unprotected. The message names the path, never the content.
 */
export function resolveAuthToken(
  config: Pick<ActuatorConfig, 'authToken' | 'authTokenFile'>,
): string | undefined | Error {
  if (config.authToken !== undefined) {
    if (config.authTokenFile !== undefined) {
      safeLog('warn', 'both management.server.auth-token and auth-token-file are set; using auth-token');
    }
    return config.authToken;
  }
  if (config.authTokenFile === undefined) return undefined;
  let token: string;
  try {
    token = fs.readFileSync(config.authTokenFile, 'utf8').replace(/[\r\n]+$/, '');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return new Error(
      `management.server.auth-token-file ${config.authTokenFile} cannot be read (${code}); the actuator would have served without its token`,
    );
  }
  if (token.length === 0)
    return new Error(
      `management.server.auth-token-file ${config.authTokenFile} is empty; the actuator would have served without a token`,
    );
  return token;
}
