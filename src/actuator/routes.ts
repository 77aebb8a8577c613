import { STATUS_CODES } from 'node:http';
import { BearerCheck } from './auth';
import type { EndpointId, Exposure } from './exposure';
import { humanSize } from './format';
import type { ActuatorSources } from './types';

/**
 * Request → response, with no sockets involved: the server feeds it the method, the raw target and two
 * headers, then writes what comes back. Keeping this pure lets every status be tested without I/O and keeps
 * all decisions about what is exposed in one place.
 */

/** What the server writes back. `body` is JSON, as text or already-encoded bytes (empty for 204). */
export interface ActuatorResponse {
  readonly status: number;
  readonly body: string | Buffer;
  /** Extra headers (Allow, WWW-Authenticate); the server adds content type and caching headers itself. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * An answer that needs I/O (`{base}/diag/ledger` reads Redis): the server writes what this resolves to instead
   * of `status` and `body`. It never rejects.
   */
  readonly later?: Promise<ActuatorResponse>;
}

/** How the router is wired. */
export interface RouterOptions {
  /** `management.endpoints.web.base-path`: `''` or a path starting with `/` and no trailing slash. */
  readonly basePath: string;
  readonly exposure: Exposure;
  readonly sources: ActuatorSources;
  /** When set, every request must carry `Authorization: Bearer <authToken>`. */
  readonly authToken?: string;
  /** `host[:port]` used in `_links` when the request's Host header is missing or implausible. */
  readonly fallbackHost: () => string;
  /** Told when a source throws or cannot be serialised; the client only sees a generic 500. */
  readonly onSourceError?: (endpoint: string, error: unknown) => void;
}

/** Longest request target accepted; longer ones get 414 (the parser's own header limit catches far longer). */
export const MAX_URL_LENGTH = 2048;
/** Longest sketch id looked up; ids are `<TYPE>_<windowMs>`, so anything longer cannot exist. */
export const MAX_SKETCH_ID_LENGTH = 128;
/** Methods every endpoint answers. */
export const ALLOW = 'GET, HEAD, OPTIONS';

const SKETCH_ID_FORM = '<TYPE>_<windowMs>, e.g. LIMIT_60000';
const HEALTH_UP = JSON.stringify({ status: 'UP' });
// Control characters, including a NUL that arrived percent-encoded.
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;
// A Host header fit to be echoed into links: name or IPv4 or [IPv6], optional port.
const PLAUSIBLE_HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

type Route =
  | { kind: 'index' }
  | { kind: 'health' }
  | { kind: 'diag' }
  | { kind: 'startup' }
  | { kind: 'ghosts' }
  | { kind: 'ledger' }
  | { kind: 'view' }
  | { kind: 'sketches' }
  | { kind: 'sketch'; id: string };

const ROUTE_ENDPOINT: Record<Route['kind'], EndpointId | undefined> = {
  index: undefined,
  health: 'health',
  diag: 'diag',
  startup: 'startup',
  ghosts: 'diag',
  ledger: 'diag',
  view: 'diag',
  sketches: 'sketches',
  sketch: 'sketches',
};

/** Builds an error body in the shape Spring Boot uses (`status`, `error`) plus a `message` meant for people. */
export function errorResponse(
  status: number,
  message: string,
  headers?: Readonly<Record<string, string>>,
  extra?: Record<string, unknown>,
): ActuatorResponse {
  return {
    status,
    body: JSON.stringify({ status, error: STATUS_CODES[status] ?? 'Error', message, ...extra }),
    headers,
  };
}

const NOT_FOUND = errorResponse(404, 'no such actuator endpoint');

type Target = { segments: string[] } | ActuatorResponse;

/**
 * Splits a request target into decoded path segments. Query and fragment are ignored (no endpoint takes
 * parameters) but must still be well-formed. No `.`/`..` normalisation: such segments simply match nothing.
 */
export function parseTarget(rawUrl: string): Target {
  if (rawUrl.length > MAX_URL_LENGTH)
    return errorResponse(414, `request target longer than ${MAX_URL_LENGTH} characters`);
  let target = rawUrl;
  if (!target.startsWith('/')) {
    // absolute-form (`GET http://host/path`), which proxies send; anything else (`*`, garbage) is malformed.
    const m = /^https?:\/\/[^/?#]*/i.exec(target);
    if (!m) return errorResponse(400, 'malformed request target');
    target = target.slice(m[0].length);
    if (!target.startsWith('/')) target = `/${target}`;
  }
  let end = target.length;
  const q = target.indexOf('?');
  const h = target.indexOf('#');
  if (q >= 0) end = q;
  if (h >= 0 && h < end) end = h;
  const path = target.slice(0, end);
  const rest = target.slice(end);
  if (CONTROL.test(target)) return errorResponse(400, 'control characters are not allowed in the request target');
  if (rest.includes('%')) {
    try {
      if (CONTROL.test(decodeURIComponent(rest.replace(/\+/g, ' ')))) {
        return errorResponse(400, 'control characters are not allowed in the request target');
      }
    } catch {
      return errorResponse(400, 'malformed percent-encoding in the request target');
    }
  }
  const raw = path.split('/');
  raw.shift(); // before the leading slash
  if (raw.length > 1 && raw[raw.length - 1] === '') raw.pop(); // one trailing slash is tolerated
  if (!path.includes('%')) return { segments: raw };
  const segments: string[] = [];
  for (const seg of raw) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(seg);
    } catch {
      return errorResponse(400, 'malformed percent-encoding in the request target');
    }
    if (CONTROL.test(decoded)) return errorResponse(400, 'control characters are not allowed in the request target');
    segments.push(decoded);
  }
  return { segments };
}

/** Answers actuator requests. One instance per running server. */
export class ActuatorRouter {
  private readonly base: string[];
  private readonly bearer: BearerCheck | undefined;
  private readonly indexCache = new Map<string, string>();
  private ghostsCache: { version: number; bytes: Buffer } | undefined;

  constructor(private readonly options: RouterOptions) {
    this.base = options.basePath.split('/').filter((s) => s !== '');
    this.bearer = options.authToken !== undefined ? new BearerCheck(options.authToken) : undefined;
  }

  /**
   * @param method the request method as received (upper case for standard methods)
   * @param rawUrl the request target as received
   * @param host the Host header
   * @param authorization the Authorization header
   */
  respond(method: string, rawUrl: string, host?: string, authorization?: string): ActuatorResponse {
    // Authentication comes first so that without the token nothing, not even which paths exist, is learned.
    if (this.bearer && !this.bearer.matches(authorization)) {
      const challenge =
        authorization === undefined
          ? 'Bearer realm="diag-actuator"'
          : 'Bearer realm="diag-actuator", error="invalid_token"';
      return errorResponse(401, 'this actuator requires Authorization: Bearer <token> (management.server.auth-token)', {
        'WWW-Authenticate': challenge,
      });
    }
    const target = parseTarget(rawUrl);
    if (!('segments' in target)) return target;
    const route = this.match(target.segments);
    if (route === undefined) return NOT_FOUND;
    const endpoint = ROUTE_ENDPOINT[route.kind];
    if (endpoint !== undefined && !this.options.exposure.isExposed(endpoint)) return NOT_FOUND;

    if (method === 'OPTIONS') return { status: 204, body: '', headers: { Allow: ALLOW } };
    if (method !== 'GET' && method !== 'HEAD') {
      return errorResponse(405, `method ${method.slice(0, 32)} is not allowed; use GET`, { Allow: ALLOW });
    }
    return this.serve(route, host);
  }

  private match(segments: string[]): Route | undefined {
    const base = this.base;
    if (segments.length < base.length) return undefined;
    for (let i = 0; i < base.length; i++) if (segments[i] !== base[i]) return undefined;
    const rest = segments.length === base.length ? [] : segments.slice(base.length);
    // With an empty base path the index is `/`, which splits into one empty segment.
    if (rest.length === 1 && rest[0] === '') return { kind: 'index' };
    if (rest.some((s) => s === '')) return undefined;
    switch (rest.length) {
      case 0:
        return { kind: 'index' };
      case 1:
        if (rest[0] === 'health') return { kind: 'health' };
        if (rest[0] === 'diag') return { kind: 'diag' };
        if (rest[0] === 'startup') return { kind: 'startup' };
        if (rest[0] === 'sketches') return { kind: 'sketches' };
        return undefined;
      case 2:
        if (rest[0] === 'diag' && rest[1] === 'ghosts') return { kind: 'ghosts' };
        if (rest[0] === 'diag' && rest[1] === 'ledger') return { kind: 'ledger' };
        if (rest[0] === 'diag' && rest[1] === 'view') return { kind: 'view' };
        if (rest[0] === 'sketches') return { kind: 'sketch', id: rest[1] };
        return undefined;
      default:
        return undefined;
    }
  }

  private serve(route: Route, host: string | undefined): ActuatorResponse {
    switch (route.kind) {
      case 'index':
        return { status: 200, body: this.index(host) };
      case 'health':
        return { status: 200, body: HEALTH_UP };
      case 'diag':
        return this.read('diag', () => {
          const report = this.options.sources.diagReport();
          if (report === undefined) {
            return errorResponse(
              404,
              'the start-up report has not been written yet; it is written once the container has finished starting',
            );
          }
          return { status: 200, body: JSON.stringify(report) };
        });
      case 'startup':
        return this.read('startup', () => {
          const startup = this.options.sources.startup?.();
          if (startup === undefined) {
            return errorResponse(
              404,
              'the start-up timeline is not there yet; it is recorded once the container has finished starting',
            );
          }
          return { status: 200, body: JSON.stringify(startup) };
        });
      case 'ghosts':
        return this.read('diag/ghosts', () => ({ status: 200, body: this.ghosts() }));
      case 'ledger':
        return this.ledger();
      case 'view': {
        const view = (): ActuatorResponse =>
          this.read('diag/view', () => {
            const view = this.options.sources.diagView?.();
            if (view === undefined) {
              return errorResponse(404, 'the report page is there once the container has finished starting');
            }
            return {
              status: 200,
              body: view.html,
              // The page runs exactly its own inline bundle: no other script, no network.
              headers: {
                'Content-Type': 'text/html; charset=utf-8',
                'Content-Security-Policy': view.csp,
                'X-Frame-Options': 'DENY',
              },
            };
          });
        // The page opens on the ledger's verdicts: it waits (5 s at most) for a fresh read rather than show an old one.
        const ledger = this.options.sources.ledger;
        if (ledger === undefined) return view();
        return { status: 503, body: '', later: ledger().then(view, view) };
      }
      case 'sketches':
        return this.read('sketches', () => {
          // Null prototype: a sketch id such as `__proto__` stays an ordinary key.
          const out: Record<string, string> = Object.create(null);
          for (const s of this.options.sources.sketches().list()) out[s.id] = `Active (${humanSize(s.memoryBytes)})`;
          return { status: 200, body: JSON.stringify(out) };
        });
      case 'sketch':
        return this.read('sketches/{id}', () => {
          const id = route.id;
          const info = id.length <= MAX_SKETCH_ID_LENGTH ? this.options.sources.sketches().get(id) : undefined;
          if (info === undefined) {
            return errorResponse(
              404,
              `no active sketch with this id; sketch ids have the form ${SKETCH_ID_FORM}; ` +
                `GET ${this.options.basePath}/sketches lists the active ones`,
              undefined,
              {
                id: id.length <= MAX_SKETCH_ID_LENGTH ? id : `${id.slice(0, MAX_SKETCH_ID_LENGTH)}…`,
                expected: '<TYPE>_<windowMs>',
              },
            );
          }
          const sketches = this.options.sources.sketches();
          const placement = sketches.placement?.(id);
          const fleet = placement?.fleet;
          return {
            status: 200,
            body: JSON.stringify({
              epsilon: info.epsilon,
              memory_bytes: info.memoryBytes,
              delta_percent: info.deltaPercent,
              store: placement?.store ?? 'native',
              ...(fleet ? { fleet: { mode: fleet.mode, nodes: fleet.nodes, lastSyncAgoMs: fleet.lastSyncAgoMs } } : {}),
            }),
          };
        });
    }
  }

  private ghosts(): string | Buffer {
    const sources = this.options.sources;
    if (typeof sources.ghostsVersion !== 'function') return JSON.stringify(sources.ghosts());
    const version = sources.ghostsVersion();
    const cached = this.ghostsCache;
    if (cached !== undefined && Object.is(cached.version, version)) return cached.bytes;
    // Read in the same tick as the version, so the bytes cannot be older than the number they are filed under.
    const text = JSON.stringify(sources.ghosts());
    if (typeof text !== 'string') return text;
    const bytes = Buffer.from(text, 'utf8');
    this.ghostsCache = { version, bytes };
    return bytes;
  }

  /** Runs a source read; a throwing source or an unserialisable value becomes a 500 without details. */
  /**
   * The service's verdicts from its ledger (or this process's run, in the same shape). A Redis that does not
   * answer is a 503 naming the server by address, never a hung request: the read gives up after five seconds.
   */
  private ledger(): ActuatorResponse {
    const source = this.options.sources.ledger;
    if (source === undefined) return errorResponse(404, 'no ledger source');
    const pending = { status: 503, body: '' };
    const later = (async (): Promise<ActuatorResponse> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const answer = await Promise.race([
          source(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('the ledger did not answer within 6 s')), 6_000);
            timer.unref();
          }),
        ]);
        if (answer === undefined) {
          return errorResponse(404, 'the verdicts are there once the container has finished starting');
        }
        return { status: 200, body: JSON.stringify(answer) };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        return errorResponse(503, (error as Error)?.message ?? String(error), undefined, {
          ...(typeof code === 'string' ? { code } : {}),
        });
      } finally {
        if (timer) clearTimeout(timer);
      }
    })();
    return { ...pending, later };
  }

  private read(endpoint: string, produce: () => ActuatorResponse): ActuatorResponse {
    try {
      const r = produce();
      if (typeof r.body !== 'string' && !Buffer.isBuffer(r.body)) throw new TypeError('source produced no JSON value');
      return r;
    } catch (error) {
      try {
        this.options.onSourceError?.(endpoint, error);
      } catch {
        /* reporting must not turn a 500 into a crash */
      }
      return errorResponse(500, `the ${endpoint} endpoint could not read its data; see the application log`);
    }
  }

  private index(hostHeader: string | undefined): string {
    const host = hostHeader !== undefined && PLAUSIBLE_HOST.test(hostHeader) ? hostHeader : this.options.fallbackHost();
    const cached = this.indexCache.get(host);
    if (cached !== undefined) return cached;
    const root = `http://${host}${this.options.basePath}`;
    const link = (path: string, templated = false) => ({ href: `${root}${path}`, templated });
    const links: Record<string, { href: string; templated: boolean }> = { self: link('') };
    const exposure = this.options.exposure;
    if (exposure.isExposed('health')) links.health = link('/health');
    if (exposure.isExposed('diag')) {
      links.diag = link('/diag');
      links['diag-ghosts'] = link('/diag/ghosts');
      links['diag-ledger'] = link('/diag/ledger');
      links['diag-view'] = link('/diag/view');
    }
    if (exposure.isExposed('startup')) links.startup = link('/startup');
    if (exposure.isExposed('sketches')) {
      links.sketches = link('/sketches');
      links['sketches-id'] = link('/sketches/{id}', true);
    }
    const body = JSON.stringify({ _links: links });
    // Host headers are client-chosen: keep the cache small so varying them cannot grow memory.
    if (this.indexCache.size >= 16) this.indexCache.clear();
    this.indexCache.set(host, body);
    return body;
  }
}
