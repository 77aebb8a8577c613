// The global form of the sketch limits: one NestJS guard (APP_GUARD) that counts every HTTP route and GraphQL
// resolver of the application against the same sketches the decorators use, what @nestjs/throttler's
// ThrottlerModule.forRoot() + ThrottlerGuard are to its users.
import { SketchConfigError } from '../counters';
import { SketchKeyError } from './errors';
import { answerFor, nestHttpException, sketchThresholdFilter, type RateLimitAnswer } from './http';
import { SketchKeys } from './keys';
import {
  bind,
  bindingOf,
  count,
  countsIn,
  limitSpec,
  readKey,
  reportKeyError,
  reportObservedBreach,
  skipMarks,
  skipped,
  thresholdError,
  type Binding,
  type SketchCommonOptions,
  type SketchKey,
} from './limit';

/** The part of Nest's ExecutionContext the guard reads (typed here so that Nest stays an optional peer). */
export interface SketchExecutionContext {
  getType(): string;
  getClass(): Function;
  getHandler(): Function;
  getArgs(): unknown[];
  switchToHttp(): { getRequest(): unknown; getResponse(): unknown };
}

/**
 * What the global limits' `key` and `skipIf` receive: the HTTP request (Express's or Fastify's; for a GraphQL
 * resolver, its context's `req`, else the context itself), then Nest's execution context. The
 * {@link SketchKeys} helpers take this shape as they are.
 */
export type SketchGuardKeyFunction = (request: any, context: SketchExecutionContext) => SketchKey | null | undefined;

/** Options shared by every global limit, each of which may override them. */
export interface SketchGuardCommonOptions extends Omit<SketchCommonOptions, 'windowMs' | 'key' | 'skipIf'> {
  /** The key a request is counted under. Default {@link SketchKeys.ip}: the client address, as throttler's. */
  readonly key?: SketchGuardKeyFunction;
  /** A request for which it returns true is not counted against this limit (health checks, your own robots). */
  readonly skipIf?: (request: any, context: SketchExecutionContext) => boolean;
}

/** One global limit: at most `requests` requests per key per window, in sketch `<type>_<windowMs>`. */
export interface SketchGlobalLimit extends SketchGuardCommonOptions {
  readonly requests: number;
  /** Default 60000. With `type`, names the sketch: a route's own decorator of that sketch overrides this limit. */
  readonly windowMs?: number;
  /** Letters, digits and `_`; default `'LIMIT'`, the sketches of `@SketchLimit`. */
  readonly type?: string;
}

/** Options of {@link SketchModule.forRoot} and {@link SketchGuard}. */
export interface SketchModuleOptions extends SketchGuardCommonOptions {
  /** One limit, or several that must all pass (`10 per second and 1000 per hour`), counted in this order. */
  readonly limits: SketchGlobalLimit | readonly SketchGlobalLimit[];
}

/** Nest's `DynamicModule`, the part this package writes (typed here so that Nest stays an optional peer). */
export interface SketchDynamicModule {
  module: Function;
  global?: boolean;
  imports?: unknown[];
  providers: unknown[];
  exports?: unknown[];
}

/** Options of {@link SketchModule.forRootAsync}: the options made by a factory Nest injects (ConfigService…). */
export interface SketchModuleAsyncOptions {
  readonly imports?: unknown[];
  readonly inject?: unknown[];
  readonly useFactory: (...deps: any[]) => SketchModuleOptions | Promise<SketchModuleOptions>;
}

/** Nest's APP_GUARD and APP_FILTER tokens: a provider under one guards (filters) every route of the application. */
const APP_GUARD = 'APP_GUARD';
const APP_FILTER = 'APP_FILTER';

/**
 * The module's providers besides the guard: {@link SketchThresholdFilter} as a global filter, which answers a
 * GraphQL field refused by the guard (Nest would otherwise log the refusal as an unexpected error) and a
 * decorated service method's rejection anywhere in the application in full.
 */
function globalFilter(): unknown {
  return { provide: APP_FILTER, useValue: sketchThresholdFilter() };
}

/** One global limit, bound once; its key and skipIf take (request, context). */
interface GuardLimit {
  readonly b: Binding;
  readonly key: SketchGuardKeyFunction;
}

/**
 * Counts every request of the application against the global limits, before Nest runs the handler: HTTP
 * routes (Express and Fastify) and GraphQL resolvers, the contexts where Nest runs global guards. A request
 * over a limit is refused: on HTTP with Nest's own `HttpException` (429, the same JSON body as the decorators,
 * `Retry-After`), so every filter of the application, catch-all ones included, sees an ordinary 429; on GraphQL
 * with a field error `TOO_MANY_REQUESTS` (through the global {@link SketchThresholdFilter} the module registers;
 * a guard registered by hand needs `app.useGlobalFilters(new SketchThresholdFilter())` for that). Every answer carries the rate-limit fields of the limits it met,
 * one list with those of the route's own decorators.
 *
 * Per route: `@SkipSketch()` on the method or the controller class exempts it; a sketch decorator of the same
 * sketch (same type and window) on the method or its class overrides that limit; decorators of other sketches
 * add to the global limits. Nest runs no global guard on WebSocket gateways or (outside hybrid applications)
 * microservice handlers: decorate those classes.
 */
export class SketchGuard {
  private readonly limits: readonly GuardLimit[];

  /** @throws SketchConfigError for a bad option, naming the limit at fault, when the module is defined. */
  constructor(options: SketchModuleOptions) {
    if (options === null || typeof options !== 'object')
      throw new SketchConfigError('SketchModule: options object required');
    const list = Array.isArray(options.limits)
      ? options.limits
      : options.limits === undefined
        ? []
        : [options.limits as SketchGlobalLimit];
    if (list.length === 0)
      throw new SketchConfigError('SketchModule: at least one limit required (limits: { requests, windowMs })');
    const { limits: _limits, ...shared } = options;
    const seen = new Set<string>();
    this.limits = list.map((limit: SketchGlobalLimit) => {
      const merged = { ...shared, ...limit };
      const spec = limitSpec(merged.type ?? 'LIMIT', 'requests', merged.requests, merged as SketchCommonOptions);
      if (seen.has(spec.id))
        throw new SketchConfigError(
          `SketchModule: two limits of sketch ${spec.id}; give them different windows or types`,
        );
      seen.add(spec.id);
      return {
        b: bindingOf(spec, 'SketchGuard', false),
        key: (merged.key ?? SketchKeys.ip()) as SketchGuardKeyFunction,
      };
    });
  }

  /** Nest calls it for every request of a guarded handler; returns true, or throws the refusal. */
  canActivate(context: SketchExecutionContext): boolean {
    const type = context.getType();
    if (type !== 'http' && type !== 'graphql') return true;
    const handler = context.getHandler();
    if (skipMarks.has(handler) || skipMarks.has(context.getClass())) return true;
    const own = countsIn.get(handler);
    let request: unknown;
    let answer: RateLimitAnswer | undefined;
    if (type === 'http') {
      const http = context.switchToHttp();
      request = http.getRequest();
      answer = answerFor(request, http.getResponse());
    } else {
      const gql = context.getArgs()[2] as { req?: unknown } | undefined;
      request = gql?.req ?? gql;
    }
    for (const { b, key: keyOf } of this.limits) {
      if (own !== undefined && own.has(b.id)) continue;
      if (b.skipIf !== undefined && skipped(b, undefined, [request, context])) continue;
      const key = readKey(keyOf, undefined, [request, context]);
      if (typeof key !== 'string') {
        b.counters.keyErrors++;
        reportKeyError(b, key);
        if (b.rejectOnKeyError) throw new SketchKeyError(b.id, routeOf(context), key);
        continue;
      }
      let sketch = b.sketch;
      if (sketch === undefined || sketch.closed) sketch = bind(b);
      const estimate = count(b, sketch, key, b.headers === 'none' ? undefined : answer);
      if (estimate <= b.threshold) continue;
      b.counters.breaches++;
      if (b.observe) {
        reportObservedBreach(b, key, estimate);
        continue;
      }
      const err = thresholdError(b, sketch, key, estimate, routeOf(context));
      if (type === 'graphql') throw err;
      answer!.set('Retry-After', String(err.retryAfterSeconds));
      const HttpException = nestHttpException();
      throw HttpException === undefined ? err : new HttpException(err.getResponse(), 429, { cause: err });
    }
    return true;
  }
}

/** `Class.method` of the handler a request was refused, for the error (never the key). */
function routeOf(context: SketchExecutionContext): string {
  return `${context.getClass()?.name || 'anonymous'}.${context.getHandler()?.name || 'anonymous'}`;
}

/**
 * The global form: every HTTP route and GraphQL resolver of the application limited per client, what
 * `ThrottlerModule.forRoot()` with `APP_GUARD` is to @nestjs/throttler users.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [SketchModule.forRoot({ limits: [{ windowMs: 1_000, requests: 10 }, { windowMs: 3_600_000, requests: 1_000 }] })],
 * })
 * export class AppModule {}
 * ```
 */
export class SketchModule {
  /** @throws SketchConfigError for a bad option, when the application's module is defined. */
  static forRoot(options: SketchModuleOptions): SketchDynamicModule {
    const guard = new SketchGuard(options);
    return { module: SketchModule, providers: [{ provide: APP_GUARD, useValue: guard }, globalFilter()] };
  }

  /** The options from a factory Nest injects, e.g. `inject: [ConfigService]`; validated when Nest calls it. */
  static forRootAsync(options: SketchModuleAsyncOptions): SketchDynamicModule {
    if (options === null || typeof options !== 'object' || typeof options.useFactory !== 'function') {
      throw new SketchConfigError('SketchModule.forRootAsync: useFactory required');
    }
    const factory = options.useFactory;
    return {
      module: SketchModule,
      imports: options.imports ?? [],
      providers: [
        {
          provide: APP_GUARD,
          inject: options.inject ?? [],
          useFactory: async (...deps: unknown[]) => new SketchGuard(await factory(...deps)),
        },
        globalFilter(),
      ],
    };
  }
}
