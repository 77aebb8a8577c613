/** A key function as the decorators' `key` option takes it (their `KeyFunction`). */
type KeyFunction = (this: unknown, ...args: unknown[]) => string | undefined;

/** The parts of an Express request or Fastify request the key helpers read. */
interface RequestLike {
  headers: Record<string, string | string[] | undefined>;
  ip?: unknown;
  socket?: { remoteAddress?: unknown };
  raw?: unknown;
  user?: unknown;
}

function isRequest(x: unknown): x is RequestLike {
  if (typeof x !== 'object' || x === null) return false;
  const r = x as Partial<RequestLike>;
  return typeof r.headers === 'object' && r.headers !== null && (r.socket !== undefined || r.raw !== undefined);
}

/**
 * The HTTP request among a handler's arguments: an argument that is one (`@Req()`), or the `req` of one (the
 * GraphQL context `@Context()` gives a resolver). Undefined when the handler takes none: the key is then
 * missing, and the decorator's `onKeyError` decides.
 */
function requestIn(args: ArrayLike<unknown>): RequestLike | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (isRequest(a)) return a;
    const inner = typeof a === 'object' && a !== null ? (a as { req?: unknown }).req : undefined;
    if (isRequest(inner)) return inner;
  }
  return undefined;
}

function text(v: unknown): string | undefined {
  if (Array.isArray(v)) v = v[0];
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Key functions for the usual trackers, for any sketch decorator's `key`. Each finds the request among the
 * handler's arguments, so the handler must take it (`@Req()`, or `@Context()` on a GraphQL resolver), as a key
 * function of your own would.
 */
export const SketchKeys = {
  /**
   * The client's address as the platform resolved it: Express's `req.ip`, which follows the application's
   * `trust proxy` setting, Fastify's `request.ip`, which follows `trustProxy`; else the socket's peer address.
   * It never reads `X-Forwarded-For` itself: without a trusted proxy in front, any client could write it.
   */
  ip(): KeyFunction {
    return function sketchKeyIp(this: unknown) {
      const req = requestIn(arguments);
      return req === undefined ? undefined : (text(req.ip) ?? text(req.socket?.remoteAddress));
    };
  },

  /** A request header, such as an API key: `SketchKeys.header('x-api-key')`. The first value if repeated. */
  header(name: string): KeyFunction {
    if (typeof name !== 'string' || name === '') throw new TypeError('SketchKeys.header needs a header name');
    const lower = name.toLowerCase();
    return function sketchKeyHeader(this: unknown) {
      return text(requestIn(arguments)?.headers[lower]);
    };
  },

  /**
   * A field of the authenticated user (`req.user`, as passport and most guards set it): `SketchKeys.user()`
   * keys on `req.user.id`, `SketchKeys.user('sub')` on a JWT's subject. Missing before authentication: run
   * the guard first (guards run before the handler, so a route guard always has).
   */
  user(field = 'id'): KeyFunction {
    return function sketchKeyUser(this: unknown) {
      const user = requestIn(arguments)?.user;
      return typeof user === 'object' && user !== null ? text((user as Record<string, unknown>)[field]) : undefined;
    };
  },
} as const;
