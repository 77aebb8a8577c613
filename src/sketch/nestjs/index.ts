import { metadataApi } from '../../shared/reflect-metadata';
import { SketchConfigError } from '../counters';
import { SketchRegistry } from '../registry';
import type { WindowedCountMinSketch } from '../window';
import { SketchKeyError } from './errors';
import {
  answerTooManyRequests,
  attachAnswerParameter,
  attachNestFilter,
  copyMetadata,
  isNestRoute,
  isResponse,
  RateLimitAnswer,
  withoutAnswer,
} from './http';
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
} from './limit';

export {
  SketchThresholdError,
  SketchKeyError,
  hashSketchKey,
  type SketchThresholdBody,
  type SketchThresholdDetails,
} from './errors';
export { SketchThresholdFilter, answerTooManyRequests, type ArgumentsHostLike, type RateLimitHeaders } from './http';
export {
  SketchGuard,
  SketchModule,
  type SketchDynamicModule,
  type SketchExecutionContext,
  type SketchGlobalLimit,
  type SketchGuardCommonOptions,
  type SketchGuardKeyFunction,
  type SketchModuleAsyncOptions,
  type SketchModuleOptions,
} from './guard';
export type {
  KeyErrorPolicy,
  SketchCommonOptions,
  SketchKey,
  SketchKeyFunction,
  SketchMessage,
  SketchMode,
} from './limit';

/** Options of {@link SketchLimit}: at most `requests` calls per key per window. */
export interface SketchLimitOptions extends SketchCommonOptions {
  readonly requests: number;
}
/** Options of {@link SketchShield}: at most `threshold` calls per key per window. */
export interface SketchShieldOptions extends SketchCommonOptions {
  readonly threshold: number;
}
/** Options of {@link SketchFraud}: at most `maxEvents` events per key per window. */
export interface SketchFraudOptions extends SketchCommonOptions {
  readonly maxEvents: number;
}
/** Options of a decorator made by {@link defineSketchDecorator}. */
export interface SketchDecoratorOptions extends SketchCommonOptions {
  readonly threshold: number;
}

/**
 * A method decorator usable both with TypeScript's `experimentalDecorators` (what NestJS uses) and with
 * standard (TC39, TypeScript 5+) decorators.
 */
export interface SketchMethodDecorator {
  <T>(
    target: object,
    propertyKey: string | symbol,
    descriptor: TypedPropertyDescriptor<T>,
  ): TypedPropertyDescriptor<T> | void;
  <F extends (this: any, ...args: any[]) => any>(value: F, context: ClassMethodDecoratorContext<any, F>): F | void;
}

/** A {@link SketchMethodDecorator} that also applies to a class: to every route of a Nest controller. */
export interface SketchDecorator extends SketchMethodDecorator {
  (target: Function): void;
  (value: Function, context: ClassDecoratorContext): void;
}

/**
 * Rate limit per key: each call counts one event for its key in sketch `LIMIT_<windowMs>`; a call that takes
 * the key's estimate in the window above `requests` is not run. It throws (or, for an async method, rejects
 * with) {@link SketchThresholdError}; as a NestJS route handler, or given an Express/Fastify response among
 * its arguments, it answers HTTP 429 with a JSON body and `Retry-After` instead.
 *
 * @example
 * ```ts
 * @Get('search')
 * @SketchLimit({ windowMs: 60_000, requests: 100, key: (req: Request) => req.ip })
 * search(@Req() req: Request) { … }
 * ```
 * @throws SketchConfigError at decoration time for a bad window, threshold or option.
 */
export function SketchLimit(options: SketchLimitOptions): SketchDecorator {
  return sketchDecorator('LIMIT', 'requests', options?.requests, options);
}

/** Abuse shield: like {@link SketchLimit}, in sketch `SHIELD_<windowMs>`, at most `threshold` calls per key. */
export function SketchShield(options: SketchShieldOptions): SketchDecorator {
  return sketchDecorator('SHIELD', 'threshold', options?.threshold, options);
}

/** Fraud detection: like {@link SketchLimit}, in sketch `FRAUD_<windowMs>`, at most `maxEvents` events per key. */
export function SketchFraud(options: SketchFraudOptions): SketchDecorator {
  return sketchDecorator('FRAUD', 'maxEvents', options?.maxEvents, options);
}

/**
 * Makes a decorator for a type of your own: its sketches are `<type>_<windowMs>`, shared by every method it
 * decorates with the same window, and listed by the actuator like the built-in ones.
 *
 * @example
 * ```ts
 * export const SketchBurst = defineSketchDecorator('BURST');
 * @SketchBurst({ windowMs: 1_000, threshold: 20, key: (req) => req.ip })   // sketch BURST_1000
 * ```
 * @param type letters, digits and `_`, starting with a letter.
 * @throws SketchConfigError for a bad type.
 */
export function defineSketchDecorator(type: string): (options: SketchDecoratorOptions) => SketchDecorator {
  SketchRegistry.idOf(type, 1);
  return (options) => sketchDecorator(type, 'threshold', options?.threshold, options);
}

function sketchDecorator(
  type: string,
  thresholdName: string,
  threshold: unknown,
  options: SketchCommonOptions,
): SketchDecorator {
  const spec = limitSpec(type, thresholdName, threshold, options);
  const { id, headers } = spec;
  /** On a class: every route of a Nest controller (or every own method of another class) not skipped. */
  function decorateClass(cls: Function): void {
    const proto = (cls as { prototype?: object }).prototype;
    if (typeof proto !== 'object' || proto === null) return;
    const methods = Object.getOwnPropertyNames(proto).filter((name) => {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      return name !== 'constructor' && d !== undefined && typeof d.value === 'function';
    });
    const routes = methods.filter((name) => isNestRoute((proto as Record<string, object>)[name]!));
    for (const name of routes.length > 0 ? routes : methods) {
      const desc = Object.getOwnPropertyDescriptor(proto, name)!;
      const fn = desc.value as AnyFunction;
      // @SkipSketch(), or a method-level decorator of the same sketch, which overrides the class's
      if (skipMarks.has(fn) || countsIn.get(fn)?.has(id) === true) continue;
      Object.defineProperty(proto, name, { ...desc, value: decorateMethod(proto, name, fn) });
    }
  }

  function decorateMethod(target: object, name: string | symbol, original: AnyFunction): AnyFunction {
    const owner = typeof target === 'function' ? target : (target as object).constructor;
    const method = `${(owner as { name?: string })?.name || 'anonymous'}.${String(name)}`;
    const r = metadataApi();
    // TypeScript's emitted return type, when async compiles down to a function returning a Promise
    const returnType = r?.getMetadata('design:returntype', target, name);
    const async = isAsyncFunction(original) || returnType === Promise;
    const b = bindingOf(spec, method, async);
    if (headers !== 'none') b.answerAt = attachAnswerParameter(owner as object, name, original.length);
    return wrap(original, b);
  }

  function decorate(target: unknown, keyOrContext: unknown, descriptor?: unknown): any {
    if (isStandardContext(keyOrContext)) {
      if (keyOrContext.kind === 'class' && typeof target === 'function') {
        // standard class decorators run after the class is defined, method decorators included
        decorateClass(target);
        return undefined;
      }
      if (keyOrContext.kind !== 'method' || typeof target !== 'function') {
        throw new SketchConfigError(
          `${id}: sketch decorators apply to methods and classes, not to a ${keyOrContext.kind}`,
        );
      }
      const name = String(keyOrContext.name);
      const b = bindingOf(spec, name, isAsyncFunction(target as AnyFunction));
      // a standard decorator does not see its class; the first instance (or the class, if static) names it
      keyOrContext.addInitializer?.(function (this: unknown) {
        const owner = typeof this === 'function' ? this : (this as object | undefined)?.constructor;
        if (b.method === name && owner?.name) b.method = `${owner.name}.${name}`;
      });
      return wrap(target as AnyFunction, b);
    }
    if (keyOrContext === undefined && descriptor === undefined && typeof target === 'function') {
      decorateClass(target);
      return undefined;
    }
    const desc = descriptor as PropertyDescriptor | undefined;
    if (desc === undefined || typeof desc.value !== 'function') {
      throw new SketchConfigError(
        `${id}: sketch decorators apply to methods and classes, not to ${String(keyOrContext)}`,
      );
    }
    desc.value = decorateMethod(target as object, keyOrContext as string | symbol, desc.value as AnyFunction);
    return desc;
  }
  return decorate as SketchDecorator;
}

type AnyFunction = (this: unknown, ...args: unknown[]) => unknown;

/** Wrappers that look for the request's answer among their arguments (and take it off for what they wrap). */
const takesAnswer = new WeakSet<Function>();

/**
 * Exempts a method from the sketch decorators of its class (`@SketchLimit(...)` on a controller applies to
 * every route) and from the global limits of {@link SketchModule}: health checks, webhooks. On a controller
 * class, exempts all its routes from the global limits. Sketch decorators on the method itself still apply.
 */
export function SkipSketch(): SketchDecorator {
  return ((target: unknown, keyOrContext: unknown, descriptor?: PropertyDescriptor) => {
    if (isStandardContext(keyOrContext)) {
      if (typeof target === 'function') skipMarks.add(target);
      return undefined;
    }
    if (keyOrContext === undefined && descriptor === undefined && typeof target === 'function') {
      skipMarks.add(target);
      return undefined;
    }
    if (descriptor !== undefined && typeof descriptor.value === 'function') skipMarks.add(descriptor.value);
    return descriptor;
  }) as SketchDecorator;
}

function isStandardContext(
  x: unknown,
): x is { kind: string; name: string | symbol; addInitializer?(init: (this: unknown) => void): void } {
  return typeof x === 'object' && x !== null && typeof (x as { kind?: unknown }).kind === 'string';
}

function isAsyncFunction(fn: AnyFunction): boolean {
  const tag = Object.prototype.toString.call(fn);
  return tag === '[object AsyncFunction]';
}

/**
 * The replacement method. Everything it needs lives in `b`; per call it reads the key, counts it, bumps two
 * number fields and compares, and allocates nothing on the admitted path beyond what the key function does.
 */
function wrap(original: AnyFunction, b: Binding): AnyFunction {
  const wrapper = function (this: unknown): unknown {
    let args: ArrayLike<unknown> = arguments;
    let answer: RateLimitAnswer | undefined;
    if (b.answerAt >= 0 && args.length > b.answerAt) {
      const a = args[b.answerAt];
      if (a instanceof RateLimitAnswer) {
        answer = a;
        if (!b.passesAnswerOn) args = withoutAnswer(args, b.answerAt);
      } else if (a === undefined && args.length === b.answerAt + 1 && !b.passesAnswerOn) {
        // another transport (GraphQL, WebSocket) resolved the parameter to nothing: not the method's either
        args = withoutAnswer(args, b.answerAt);
      }
    }
    if (b.skipIf !== undefined && skipped(b, this, args)) return Reflect.apply(original, this, args);
    let sketch = b.sketch;
    if (sketch === undefined || sketch.closed) sketch = bind(b);
    let key: string;
    if (b.key === undefined) {
      key = b.defaultKey;
    } else {
      const k = readKey(b.key, this, args);
      if (typeof k !== 'string') {
        b.counters.keyErrors++;
        reportKeyError(b, k);
        if (!b.rejectOnKeyError) return Reflect.apply(original, this, args);
        const err = new SketchKeyError(b.id, b.method, k);
        if (b.async) return Promise.reject(err);
        throw err;
      }
      key = k;
    }
    const estimate = count(b, sketch, key, answer);
    if (estimate <= b.threshold) return Reflect.apply(original, this, args);
    b.counters.breaches++;
    if (b.observe) {
      reportObservedBreach(b, key, estimate);
      return Reflect.apply(original, this, args);
    }
    return reject(b, sketch, key, estimate, wrapper, args);
  };
  b.passesAnswerOn = takesAnswer.has(original);
  if (b.answerAt >= 0) takesAnswer.add(wrapper);
  copyMetadata(original, wrapper);
  countsIn.set(wrapper, new Set([...(countsIn.get(original) ?? []), b.id]));
  if (skipMarks.has(original)) skipMarks.add(wrapper);
  Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
  Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });
  attachNestFilter(wrapper);
  return wrapper;
}

function reject(
  b: Binding,
  sketch: WindowedCountMinSketch,
  key: string,
  estimate: number,
  wrapper: object,
  args: ArrayLike<unknown>,
): unknown {
  const err = thresholdError(b, sketch, key, estimate);
  // A Nest route throws: its exception layer (and the filter attached to the handler) answers, so Nest's
  // interceptors see the error as they would any other. A plain handler holding its response answers here.
  if (!isNestRoute(wrapper)) {
    for (let i = 0; i < args.length; i++) {
      const res: unknown = args[i];
      if (isResponse(res) && answerTooManyRequests(res, err)) return b.async ? Promise.resolve(res) : res;
    }
  }
  if (b.async) return Promise.reject(err);
  throw err;
}
