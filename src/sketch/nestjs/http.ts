import { createRequire } from 'node:module';
import path from 'node:path';
import { copyOwnMetadata, metadataApi } from '../../shared/reflect-metadata';
import { SketchThresholdError } from './errors';

// Nest's metadata keys (stable since Nest 5); spelled out so that @nestjs/common stays an optional peer.
const EXCEPTION_FILTERS_METADATA = '__exceptionFilters__';
const FILTER_CATCH_EXCEPTIONS = '__filterCatchExceptions__';
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';
const ROUTE_ARGS_METADATA = '__routeArguments__';
const CUSTOM_ROUTE_ARGS_METADATA = '__customRouteArgs__';

interface NodeResponseLike {
  statusCode: number;
  readonly headersSent: boolean;
  setHeader(name: string, value: string | number): unknown;
  end(body?: string): unknown;
}

interface FastifyReplyLike {
  readonly sent: boolean;
  readonly raw: unknown;
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(body: string): unknown;
}

function isFastifyReply(x: unknown): x is FastifyReplyLike {
  const r = x as Partial<FastifyReplyLike> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.code === 'function' &&
    typeof r.header === 'function' &&
    typeof r.send === 'function' &&
    typeof r.raw === 'object'
  );
}

function isNodeResponse(x: unknown): x is NodeResponseLike {
  const r = x as Partial<NodeResponseLike> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.setHeader === 'function' &&
    typeof r.end === 'function' &&
    typeof r.headersSent === 'boolean'
  );
}

/** @internal Whether `x` is a response this module can answer: a Fastify reply or a Node/Express response. */
export function isResponse(x: unknown): boolean {
  return isFastifyReply(x) || isNodeResponse(x);
}

/**
 * Answers `res` (a Fastify reply, or a Node `ServerResponse` such as Express's) with 429, `Retry-After` and
 * the error's JSON body. Returns false when `res` is neither, or when its headers have already gone out and
 * no status can be set any more (then the response is only ended).
 */
export function answerTooManyRequests(res: unknown, error: SketchThresholdError): boolean {
  const body = JSON.stringify(error.getResponse());
  const retryAfter = String(error.retryAfterSeconds);
  if (isFastifyReply(res)) {
    if (res.sent) return false;
    res
      .code(429)
      .header('retry-after', retryAfter)
      .header('content-type', 'application/json; charset=utf-8')
      .send(body);
    return true;
  }
  if (isNodeResponse(res)) {
    if (res.headersSent) {
      res.end();
      return false;
    }
    res.statusCode = 429;
    res.setHeader('Retry-After', retryAfter);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
    return true;
  }
  return false;
}

/** The part of Nest's ArgumentsHost this filter uses (typed here so that Nest stays optional). */
export interface ArgumentsHostLike {
  getType?(): string;
  getArgByIndex(index: number): unknown;
}

/**
 * A NestJS exception filter for {@link SketchThresholdError}: answers 429 with `Retry-After` and the JSON
 * body, on Express or Fastify; on GraphQL hands the error to the field; on a WebSocket gateway sends the
 * client Nest's `exception` event; to a microservice's caller, the error its `send()` receives. The decorators
 * attach one to every decorated route handler themselves; register it globally
 * (`app.useGlobalFilters(new SketchThresholdFilter())`) to get the same answer when a decorated service
 * method, rather than the handler, rejects the call. Without it such a call still answers 429, through Nest's
 * default filter (which honours the error's `statusCode`), but without the header and with a logged error.
 */
export class SketchThresholdFilter {
  catch(exception: unknown, host: ArgumentsHostLike): unknown {
    const type = typeof host.getType === 'function' ? host.getType() : 'http';
    if (!(exception instanceof SketchThresholdError)) return undefined;
    // GraphQL: the error itself is the field's result; GraphQL reports it on that field with the error's
    // `extensions` (code TOO_MANY_REQUESTS), and Nest does not log it as an unexpected error.
    if (type === 'graphql') return exception;
    if (type === 'ws') return tellSocket(host.getArgByIndex(0), exception) ? true : undefined;
    // Microservices: an Observable that errors is what Nest sends back as the error the caller's `send()`
    // receives, as for an `RpcException`: here with the code and when to retry.
    if (type === 'rpc') return failedObservable(clientError(exception));
    if (type !== 'http') return undefined;
    // Returning the exception tells Nest (11.2+) the request is still unanswered, so its default filter runs.
    return answerTooManyRequests(host.getArgByIndex(1), exception) ? undefined : exception;
  }
}

type ThrowError = (factory: () => unknown) => unknown;
/** rxjs's throwError once looked up: null when there is none to find. */
let throwError: ThrowError | null | undefined;

/**
 * rxjs's `throwError(() => error)`, from the application's own rxjs (Nest's peer dependency, which this package
 * does not depend on): resolved beside this package, else from the working directory, once. Undefined without
 * one, which leaves the error to Nest's default handling.
 */
function failedObservable(error: unknown): unknown {
  if (throwError === undefined) {
    throwError = null;
    for (const from of [__filename, path.join(process.cwd(), 'index.js')]) {
      try {
        const rxjs = createRequire(from)('rxjs') as { throwError?: unknown };
        if (typeof rxjs.throwError === 'function') {
          throwError = rxjs.throwError as ThrowError;
          break;
        }
      } catch {
        // not resolvable from there
      }
    }
  }
  return throwError === null ? undefined : throwError(() => error);
}

type HttpExceptionClass = new (response: object, status: number, options?: { cause?: unknown }) => Error;
/** Nest's HttpException once looked up: null when there is none to find. */
let httpException: HttpExceptionClass | null | undefined;

/**
 * @internal Nest's `HttpException` as the application's exception layer knows it, so that what the global guard
 * throws is an HttpException to every filter of the application, its own catch-all ones included (as
 * @nestjs/throttler's ThrottlerException is). The copy of @nestjs/common already loaded (one, almost always;
 * else the one the working directory resolves); undefined when there is none.
 */
export function nestHttpException(): HttpExceptionClass | undefined {
  if (httpException === undefined) {
    const suffix = path.join('@nestjs', 'common', 'index.js');
    const loaded = Object.keys(require.cache).filter((id) => id.endsWith(suffix));
    let fromCwd: string | undefined;
    try {
      fromCwd = createRequire(path.join(process.cwd(), 'index.js')).resolve('@nestjs/common');
    } catch {
      // not resolvable from there
    }
    const chosen = loaded.length === 1 ? loaded[0] : (loaded.find((id) => id === fromCwd) ?? loaded[0] ?? fromCwd);
    httpException = null;
    if (chosen !== undefined) {
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const common = require(chosen) as { HttpException?: unknown };
        if (typeof common.HttpException === 'function') httpException = common.HttpException as HttpExceptionClass;
      } catch {
        // a broken install: the caller falls back on the error's own HTTP shape
      }
    }
  }
  return httpException ?? undefined;
}

/** What a WebSocket or microservice client receives, in the `{ status: 'error', message }` shape Nest uses there. */
function clientError(error: SketchThresholdError): Record<string, unknown> {
  return {
    status: 'error',
    message: error.message,
    code: error.code,
    retryAfterSeconds: error.retryAfterSeconds,
    sketchId: error.sketchId,
  };
}

/**
 * Sends a WebSocket client Nest's `exception` event for a call over its limit, the connection left open:
 * `{ status: 'error', message, code: 'ERR_SKETCH_THRESHOLD', retryAfterSeconds, sketchId }`. A socket.io socket
 * gets it as an event; a plain `ws` socket, which has no events of its own, as the JSON message
 * `{ "event": "exception", "data": … }` that Nest's ws adapter uses for every event (Nest's own filter calls
 * `emit`, which on a `ws` socket sends nothing). Returns false when `client` is neither.
 */
function tellSocket(client: unknown, error: SketchThresholdError): boolean {
  if (typeof client !== 'object' || client === null) return false;
  const data = clientError(error);
  const socket = client as { emit?: unknown; send?: unknown; handshake?: unknown; readyState?: unknown };
  if (socket.handshake !== undefined && typeof socket.emit === 'function') {
    (socket.emit as (event: string, data: unknown) => unknown).call(client, 'exception', data);
    return true;
  }
  if (typeof socket.send === 'function' && typeof socket.readyState === 'number') {
    // 1: OPEN; a socket that is closing takes no more messages
    if (socket.readyState === 1)
      (socket.send as (text: string) => unknown).call(client, JSON.stringify({ event: 'exception', data }));
    return true;
  }
  return false;
}

let filterMarked = false;
const FILTER = new SketchThresholdFilter();

/**
 * @internal The filter instance the decorators attach, marked (once) with the `@Catch(SketchThresholdError)`
 * metadata Nest selects filters by, so that Nest hands it nothing else, wherever it is registered.
 */
export function sketchThresholdFilter(): SketchThresholdFilter {
  const r = metadataApi();
  if (!filterMarked && r !== undefined) {
    // both places Nest versions look: the filter's prototype (11.2+) and its class
    r.defineMetadata(FILTER_CATCH_EXCEPTIONS, [SketchThresholdError], SketchThresholdFilter);
    r.defineMetadata(FILTER_CATCH_EXCEPTIONS, [SketchThresholdError], SketchThresholdFilter.prototype);
    filterMarked = true;
  }
  return FILTER;
}

/**
 * Puts {@link SketchThresholdFilter} among the exception filters Nest reads from this handler (what
 * `@UseFilters()` writes), keeping filters already there. Nest selects it for SketchThresholdError only, by the
 * same `@Catch()` metadata its own decorator writes, so every other exception still reaches the application's
 * filters. Does nothing without reflect-metadata: then there is no Nest to read it either.
 */
export function attachNestFilter(handler: object): void {
  const r = metadataApi();
  if (r === undefined) return;
  sketchThresholdFilter();
  const existing = r.getOwnMetadata(EXCEPTION_FILTERS_METADATA, handler);
  const filters = Array.isArray(existing) ? existing : [];
  if (filters.includes(FILTER)) return;
  // Nest tries a handler's filters last-first: appended, this narrow one is tried before broader ones
  // written before it, so a catch-all filter of the method does not turn the 429 into its own answer.
  r.defineMetadata(EXCEPTION_FILTERS_METADATA, [...filters, FILTER], handler);
}

/** Whether Nest's route decorators (`@Get()` and the like) marked this handler, whichever ran first. */
export function isNestRoute(handler: object): boolean {
  const r = metadataApi();
  return (
    r !== undefined &&
    r.getOwnMetadata(METHOD_METADATA, handler) !== undefined &&
    r.getOwnMetadata(PATH_METADATA, handler) !== undefined
  );
}

/**
 * Copies every own reflect-metadata entry of `from` onto `to`: Nest's route, guard, pipe and filter decorators
 * store theirs on the method function itself, so a replacement without them would no longer be a route.
 */
export function copyMetadata(from: object, to: object): void {
  const r = metadataApi();
  if (r !== undefined) copyOwnMetadata(r, from, to);
}

/** Which rate-limit header fields a decorated route's answers carry; see {@link addRateLimitFields}. */
export type RateLimitHeaders = 'standard' | 'standard+legacy' | 'none';

function headerSetter(res: unknown): (name: string, value: string) => void {
  if (isFastifyReply(res)) {
    return (name, value) => {
      if (!res.sent) res.header(name, value);
    };
  }
  if (isNodeResponse(res)) {
    return (name, value) => {
      if (!res.headersSent) res.setHeader(name, value);
    };
  }
  return () => undefined;
}

/**
 * The answer of one request to a decorated Nest route, handed to the decorator's wrapper as a hidden trailing
 * argument (see {@link attachAnswerParameter}), and the limits the request met so far (a route may have several).
 */
export class RateLimitAnswer {
  policies = '';
  limits = '';
  /** `remaining` of the tightest limit met so far, for the legacy fields. */
  tightest = Infinity;

  /** @param set sets a header on the answer while it can still take one; chosen once per answer */
  constructor(readonly set: (name: string, value: string) => void) {}
}

/** The minimal shape of Nest's ExecutionContext the parameter factory uses. */
interface ExecutionContextLike {
  getType?(): string;
  switchToHttp(): { getRequest(): unknown; getResponse(): unknown };
}

/** Each request's answer, shared by the global guard and the route's own decorators: one set of fields. */
const answers = new WeakMap<object, RateLimitAnswer>();

/**
 * @internal The answer of the HTTP request `request` to `response`: the one already made for it (by the global
 * guard, which runs before the route's parameters are resolved), else a new one.
 */
export function answerFor(request: unknown, response: unknown): RateLimitAnswer {
  if (typeof request !== 'object' || request === null) return new RateLimitAnswer(headerSetter(response));
  let answer = answers.get(request);
  if (answer === undefined) {
    answer = new RateLimitAnswer(headerSetter(response));
    answers.set(request, answer);
  }
  return answer;
}

/** Nest calls it once per request for the hidden parameter, as for any `createParamDecorator()` parameter. */
function answerOf(_data: unknown, context: ExecutionContextLike): RateLimitAnswer | undefined {
  const type = typeof context.getType === 'function' ? context.getType() : 'http';
  if (type !== 'http') return undefined;
  const http = context.switchToHttp();
  return answerFor(http.getRequest(), http.getResponse());
}

/** How the hidden parameter is keyed among a handler's parameters (`<name>__customRouteArgs__:<index>`). */
const ANSWER_PARAMETER = `diagRateLimitAnswer${CUSTOM_ROUTE_ARGS_METADATA}:`;

/**
 * Gives a decorated method one more parameter, past those it declares and those Nest's decorators gave it:
 * a custom route parameter (what `createParamDecorator()` writes) whose value is the request's
 * {@link RateLimitAnswer}. Nest resolves it like the route's other parameters, so the decorator reaches the
 * response without an interceptor (which would move the route onto Nest's slower RxJS path) and without an
 * async-context store. Returns the parameter's index (the same for every sketch decorator of the method), or
 * -1 without reflect-metadata.
 */
export function attachAnswerParameter(owner: object, name: string | symbol, declared: number): number {
  const r = metadataApi();
  if (r === undefined) return -1;
  const existing = (r.getMetadata(ROUTE_ARGS_METADATA, owner, name) ?? {}) as Record<string, { index?: unknown }>;
  let last = -1;
  for (const key of Object.keys(existing)) {
    const index = existing[key]?.index;
    if (typeof index !== 'number') continue;
    if (key.startsWith(ANSWER_PARAMETER)) return index;
    if (index > last) last = index;
  }
  const index = Math.max(declared, last + 1);
  const parameter = { index, factory: answerOf, data: undefined, pipes: [] };
  r.defineMetadata(ROUTE_ARGS_METADATA, { ...existing, [`${ANSWER_PARAMETER}${index}`]: parameter }, owner, name);
  return index;
}

/** The arguments without the hidden answer at `at`, for the decorated method itself. */
export function withoutAnswer(args: ArrayLike<unknown>, at: number): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < args.length; i++) if (i !== at) out.push(args[i]);
  return out;
}

/**
 * Adds one limit the call has just been counted against to the request's answer, as
 * draft-ietf-httpapi-ratelimit-headers structured fields (`RateLimit-Policy: "<name>";q=<quota>;w=<seconds>`,
 * `RateLimit: "<name>";r=<remaining>;t=<seconds until the key is certainly back to its full quota>`), one list
 * item per limit the call met; with `legacy`, also `X-RateLimit-Limit/-Remaining/-Reset` of the tightest
 * limit. Positional, so that a decorated call allocates no record for it.
 */
export function addRateLimitFields(
  answer: RateLimitAnswer,
  name: string,
  quota: number,
  windowSeconds: number,
  remaining: number,
  resetSeconds: number,
  legacy: boolean,
): void {
  answer.policies += `${answer.policies === '' ? '' : ', '}"${name}";q=${quota};w=${windowSeconds}`;
  answer.limits += `${answer.limits === '' ? '' : ', '}"${name}";r=${remaining};t=${resetSeconds}`;
  answer.set('RateLimit-Policy', answer.policies);
  answer.set('RateLimit', answer.limits);
  if (!legacy || remaining >= answer.tightest) return;
  answer.tightest = remaining;
  answer.set('X-RateLimit-Limit', String(quota));
  answer.set('X-RateLimit-Remaining', String(remaining));
  answer.set('X-RateLimit-Reset', String(resetSeconds));
}
