import { AsyncLocalStorage } from 'node:async_hooks';
import { SketchThresholdError } from './errors';

// Nest's metadata keys (stable since Nest 5); spelled out so that @nestjs/common stays an optional peer.
const EXCEPTION_FILTERS_METADATA = '__exceptionFilters__';
const FILTER_CATCH_EXCEPTIONS = '__filterCatchExceptions__';
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';
const INTERCEPTORS_METADATA = '__interceptors__';

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

type Reflector = typeof Reflect & {
  getMetadata?(key: unknown, target: object, propertyKey?: string | symbol): unknown;
  getOwnMetadata?(key: unknown, target: object): unknown;
  getOwnMetadataKeys?(target: object): unknown[];
  defineMetadata?(key: unknown, value: unknown, target: object): void;
};

/** @internal reflect-metadata's API when the application loaded it (Nest always does), else undefined. */
export function reflector(): Required<Pick<Reflector, 'getMetadata' | 'getOwnMetadata' | 'getOwnMetadataKeys' | 'defineMetadata'>> | undefined {
  const r = Reflect as Reflector;
  return typeof r.defineMetadata === 'function' &&
    typeof r.getOwnMetadataKeys === 'function' &&
    typeof r.getOwnMetadata === 'function' &&
    typeof r.getMetadata === 'function'
    ? (r as never)
    : undefined;
}

function isFastifyReply(x: unknown): x is FastifyReplyLike {
  const r = x as Partial<FastifyReplyLike> | null;
  return (
    typeof r === 'object' && r !== null &&
    typeof r.code === 'function' && typeof r.header === 'function' && typeof r.send === 'function' &&
    typeof r.raw === 'object'
  );
}

function isNodeResponse(x: unknown): x is NodeResponseLike {
  const r = x as Partial<NodeResponseLike> | null;
  return (
    typeof r === 'object' && r !== null &&
    typeof r.setHeader === 'function' && typeof r.end === 'function' && typeof r.headersSent === 'boolean'
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
    res.code(429).header('retry-after', retryAfter).header('content-type', 'application/json; charset=utf-8').send(body);
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
 * body, on Express or Fastify. The decorators attach one to every decorated route handler themselves; register
 * it globally (`app.useGlobalFilters(new SketchThresholdFilter())`) to get the same answer when a decorated
 * service method, rather than the handler, rejects the call. Without it such a call still answers 429, through
 * Nest's default filter (which honours the error's `statusCode`), but without the header and with a logged error.
 */
export class SketchThresholdFilter {
  catch(exception: unknown, host: ArgumentsHostLike): unknown {
    const type = typeof host.getType === 'function' ? host.getType() : 'http';
    // Other transports (RPC, WebSocket, GraphQL) have their own idea of an answer: undefined leaves the
    // exception to their default handling.
    if (type !== 'http' || !(exception instanceof SketchThresholdError)) return undefined;
    // Returning the exception tells Nest (11.2+) the request is still unanswered, so its default filter runs.
    return answerTooManyRequests(host.getArgByIndex(1), exception) ? undefined : exception;
  }
}

let filterMarked = false;
const FILTER = new SketchThresholdFilter();

/**
 * Puts {@link SketchThresholdFilter} among the exception filters Nest reads from this handler (what
 * `@UseFilters()` writes), keeping filters already there. Nest selects it for SketchThresholdError only, by the
 * same `@Catch()` metadata its own decorator writes, so every other exception still reaches the application's
 * filters. Does nothing without reflect-metadata: then there is no Nest to read it either.
 */
export function attachNestFilter(handler: object): void {
  const r = reflector();
  if (r === undefined) return;
  if (!filterMarked) {
    // both places Nest versions look: the filter's prototype (11.2+) and its class
    r.defineMetadata(FILTER_CATCH_EXCEPTIONS, [SketchThresholdError], SketchThresholdFilter);
    r.defineMetadata(FILTER_CATCH_EXCEPTIONS, [SketchThresholdError], SketchThresholdFilter.prototype);
    filterMarked = true;
  }
  const existing = r.getOwnMetadata(EXCEPTION_FILTERS_METADATA, handler);
  const filters = Array.isArray(existing) ? existing : [];
  if (filters.includes(FILTER)) return;
  // Nest tries a handler's filters last-first: appended, this narrow one is tried before broader ones
  // written before it, so a catch-all filter of the method does not turn the 429 into its own answer.
  r.defineMetadata(EXCEPTION_FILTERS_METADATA, [...filters, FILTER], handler);
}

/** Whether Nest's route decorators (`@Get()` and the like) marked this handler, whichever ran first. */
export function isNestRoute(handler: object): boolean {
  const r = reflector();
  return r !== undefined && r.getOwnMetadata(METHOD_METADATA, handler) !== undefined && r.getOwnMetadata(PATH_METADATA, handler) !== undefined;
}

/**
 * Copies every own reflect-metadata entry of `from` onto `to`: Nest's route, guard, pipe and filter decorators
 * store theirs on the method function itself, so a replacement without them would no longer be a route.
 */
export function copyMetadata(from: object, to: object): void {
  const r = reflector();
  if (r === undefined) return;
  for (const key of r.getOwnMetadataKeys(from)) r.defineMetadata(key, r.getOwnMetadata(key, from), to);
}

/** Which rate-limit header fields a decorated route's answers carry; see {@link addRateLimitFields}. */
export type RateLimitHeaders = 'standard' | 'standard+legacy' | 'none';

/** The answer a decorated call belongs to, and the limits it has met so far (a route may meet several). */
interface AnswerSlot {
  /** Sets a header on the answer while it can still take one; chosen once per answer. */
  readonly set: (name: string, value: string) => void;
  policies: string;
  limits: string;
  /** `remaining` of the tightest limit met so far, for the legacy fields. */
  tightest: number;
}

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

const answers = new AsyncLocalStorage<AnswerSlot>();
let interceptorRan = false;

/** @internal False until a decorated Nest route has run: plain decorated methods skip the store lookup. */
export function rateLimitFieldsInUse(): boolean {
  return interceptorRan;
}

/** The minimal shape of Nest's ExecutionContext and CallHandler this interceptor uses. */
interface ExecutionContextLike {
  getType?(): string;
  switchToHttp(): { getResponse(): unknown };
}
type ObservableLike = unknown;

/**
 * Runs a decorated route's handler with its response at hand, so that the decorator, which sees only the
 * handler's arguments, can put the rate-limit fields on the answer. Attached to every decorated route by the
 * decorators themselves (what `@UseInterceptors()` writes); other transports pass straight through.
 */
export class RateLimitFieldsInterceptor {
  intercept(context: ExecutionContextLike, next: { handle(): ObservableLike }): ObservableLike {
    const type = typeof context.getType === 'function' ? context.getType() : 'http';
    if (type !== 'http') return next.handle();
    interceptorRan = true;
    const slot: AnswerSlot = { set: headerSetter(context.switchToHttp().getResponse()), policies: '', limits: '', tightest: Infinity };
    // Recent Nest binds what runs the handler to the async context in which `handle()` is called
    // (AsyncResource.bind); older releases run it in the context of the subscription. Both happen inside the
    // store. The Observable class is the application's own rxjs, reached through the one Nest handed over.
    const source = answers.run(slot, () => next.handle()) as { subscribe(subscriber: unknown): unknown; constructor: unknown };
    const Observable = source.constructor as new (subscribe: (subscriber: unknown) => unknown) => unknown;
    return new Observable((subscriber) => answers.run(slot, () => source.subscribe(subscriber)));
  }
}

const INTERCEPTOR = new RateLimitFieldsInterceptor();

/** Puts {@link RateLimitFieldsInterceptor} among the interceptors Nest reads from this handler, once. */
export function attachNestInterceptor(handler: object): void {
  const r = reflector();
  if (r === undefined) return;
  const existing = r.getOwnMetadata(INTERCEPTORS_METADATA, handler);
  const interceptors = Array.isArray(existing) ? existing : [];
  if (interceptors.includes(INTERCEPTOR)) return;
  // First, so that the application's own interceptors already run inside it.
  r.defineMetadata(INTERCEPTORS_METADATA, [INTERCEPTOR, ...interceptors], handler);
}

/**
 * Adds one limit the call has just been counted against to the answer of the Nest route being handled, as
 * draft-ietf-httpapi-ratelimit-headers structured fields (`RateLimit-Policy: "<name>";q=<quota>;w=<seconds>`,
 * `RateLimit: "<name>";r=<remaining>;t=<seconds until the key is certainly back to its full quota>`), one list
 * item per limit the call met; with `legacy`, also `X-RateLimit-Limit/-Remaining/-Reset` of the tightest
 * limit. Outside a decorated Nest route (no answer in scope) it does nothing. Positional, so that a decorated
 * call allocates no record for it.
 */
export function addRateLimitFields(
  name: string,
  quota: number,
  windowSeconds: number,
  remaining: number,
  resetSeconds: number,
  legacy: boolean,
): void {
  const slot = answers.getStore();
  if (slot === undefined) return;
  slot.policies += `${slot.policies === '' ? '' : ', '}"${name}";q=${quota};w=${windowSeconds}`;
  slot.limits += `${slot.limits === '' ? '' : ', '}"${name}";r=${remaining};t=${resetSeconds}`;
  slot.set('RateLimit-Policy', slot.policies);
  slot.set('RateLimit', slot.limits);
  if (!legacy || remaining >= slot.tightest) return;
  slot.tightest = remaining;
  slot.set('X-RateLimit-Limit', String(quota));
  slot.set('X-RateLimit-Remaining', String(remaining));
  slot.set('X-RateLimit-Reset', String(resetSeconds));
}
