import { Buffer } from 'node:buffer';

import { safeLog } from '../../logger';
import { SketchConfigError } from '../counters';
import { SketchRegistry, sketchRegistry, type RegistrySketchOptions, type SketchCounters } from '../registry';
import type { WindowedCountMinSketch } from '../window';
import { KeyMissing, SketchKeyError, SketchThresholdError, describeKeyFailure, hashSketchKey } from './errors';
import {
  addRateLimitFields,
  answerTooManyRequests,
  attachAnswerParameter,
  attachNestFilter,
  copyMetadata,
  isNestRoute,
  isResponse,
  RateLimitAnswer,
  reflector,
  withoutAnswer,
  type RateLimitHeaders,
} from './http';

export {
  SketchThresholdError,
  SketchKeyError,
  hashSketchKey,
  type SketchThresholdBody,
  type SketchThresholdDetails,
} from './errors';
export {
  SketchThresholdFilter,
  answerTooManyRequests,
  type ArgumentsHostLike,
  type RateLimitHeaders,
} from './http';

/** `'enforce'` (default) rejects calls over the threshold; `'observe'` counts and reports them but runs them. */
export type SketchMode = 'enforce' | 'observe';

/** What a key function may return: strings are hashed as UTF-8, numbers as their decimal string, bytes as latin1. */
export type SketchKey = string | number | bigint | Uint8Array;

/** Receives the decorated method's arguments, with `this` the instance. */
export type SketchKeyFunction = (this: any, ...args: any[]) => SketchKey | null | undefined;

/**
 * What a call whose key function throws or returns nothing (undefined, null, '', an object…) gets:
 * `'admit'` (default) runs it uncounted; `'reject'` throws {@link SketchKeyError}. Either way the registry's
 * `keyErrors` stat counts it and a warning is logged, at most once per sketch per minute.
 */
export type KeyErrorPolicy = 'admit' | 'reject';

/** Options every sketch decorator takes besides its threshold. */
export interface SketchCommonOptions {
  /** Window length in ms (a positive integer); part of the sketch id. Default 60000. */
  readonly windowMs?: number;
  /** The key counted for a call. Default: the decorated method itself, i.e. one limit for all its callers. */
  readonly key?: SketchKeyFunction;
  /** Default `'enforce'`. */
  readonly mode?: SketchMode;
  /** Default `'admit'`; see {@link KeyErrorPolicy}. */
  readonly onKeyError?: KeyErrorPolicy;
  /**
   * Receives the method's arguments (like `key`); a call for which it returns true is run without being
   * counted (health checks, internal callers). A skipIf that throws counts the call, and is logged.
   */
  readonly skipIf?: (this: any, ...args: any[]) => boolean;
  /** Registry holding the sketch; default the process-wide {@link sketchRegistry} (the one the actuator serves). */
  readonly registry?: SketchRegistry;
  /** Shape of the sketch when this decorator is the first to create it (default 1 MiB, depth 4). */
  readonly sketch?: RegistrySketchOptions;
  /**
   * Rate-limit header fields on the answers of a decorated NestJS HTTP route, admitted and rejected:
   * `'standard'` (default) the IETF `RateLimit-Policy` and `RateLimit` fields; `'standard+legacy'` also
   * `X-RateLimit-Limit`, `-Remaining` and `-Reset` (what @nestjs/throttler's clients read); `'none'`. The
   * decorator reaches the response through one hidden route parameter (no interceptor): within noise of the
   * route without fields in bench/sketch/decorators.js.
   */
  readonly headers?: RateLimitHeaders;
}

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
  <T>(target: object, propertyKey: string | symbol, descriptor: TypedPropertyDescriptor<T>): TypedPropertyDescriptor<T> | void;
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

/** Largest threshold the 32-bit saturating counters can tell apart from "over". */
const MAX_THRESHOLD = 0xfffffffe;
const LOG_EVERY_MS = 60_000;

/** Everything one decorated method needs per call, resolved once. */
interface Binding {
  readonly type: string;
  readonly windowMs: number;
  readonly id: string;
  readonly threshold: number;
  readonly observe: boolean;
  readonly rejectOnKeyError: boolean;
  readonly headers: RateLimitHeaders;
  readonly key: SketchKeyFunction | undefined;
  readonly skipIf: ((this: unknown, ...args: unknown[]) => boolean) | undefined;
  readonly shape: RegistrySketchOptions | undefined;
  readonly explicitRegistry: SketchRegistry | undefined;
  readonly async: boolean;
  method: string;
  defaultKey: string;
  sketch: WindowedCountMinSketch | undefined;
  counters: SketchCounters;
  /** Index of the hidden parameter carrying the request's answer (rate-limit fields), or -1. */
  answerAt: number;
  /** The decorated method is another sketch decorator's wrapper that looks for the answer: it gets it too. */
  passesAnswerOn: boolean;
}

/** When each sketch last logged, per kind of event, and how many it kept quiet since. */
interface LogState {
  at: number;
  quiet: number;
}
const logStates = new WeakMap<SketchCounters, { breach: LogState; key: LogState }>();

let methodSeq = 0;

function sketchDecorator(type: string, thresholdName: string, threshold: unknown, options: SketchCommonOptions): SketchDecorator {
  if (options === null || typeof options !== 'object') throw new SketchConfigError(`sketch decorator ${type}: options object required`);
  const windowMs = options.windowMs ?? 60_000;
  const id = SketchRegistry.idOf(type, windowMs);
  if (typeof threshold !== 'number' || !Number.isInteger(threshold) || threshold < 1 || threshold > MAX_THRESHOLD) {
    throw new SketchConfigError(`${id}: ${thresholdName} must be an integer in 1..${MAX_THRESHOLD}, got ${String(threshold)}`);
  }
  const mode = options.mode ?? 'enforce';
  if (mode !== 'enforce' && mode !== 'observe') throw new SketchConfigError(`${id}: mode must be 'enforce' or 'observe', got ${String(mode)}`);
  const onKeyError = options.onKeyError ?? 'admit';
  if (onKeyError !== 'admit' && onKeyError !== 'reject') {
    throw new SketchConfigError(`${id}: onKeyError must be 'admit' or 'reject', got ${String(onKeyError)}`);
  }
  if (options.key !== undefined && typeof options.key !== 'function') throw new SketchConfigError(`${id}: key must be a function`);
  if (options.skipIf !== undefined && typeof options.skipIf !== 'function') throw new SketchConfigError(`${id}: skipIf must be a function`);
  const headers = options.headers ?? 'standard';
  if (headers !== 'standard' && headers !== 'standard+legacy' && headers !== 'none') {
    throw new SketchConfigError(`${id}: headers must be 'standard', 'standard+legacy' or 'none', got ${String(headers)}`);
  }
  if (options.registry !== undefined && !(options.registry instanceof SketchRegistry)) {
    throw new SketchConfigError(`${id}: registry must be a SketchRegistry`);
  }

  const bindingFor = (method: string, async: boolean): Binding => {
    const seq = ++methodSeq;
    return {
      type, windowMs, id, threshold,
      observe: mode === 'observe',
      rejectOnKeyError: onKeyError === 'reject',
      headers,
      key: options.key,
      skipIf: options.skipIf,
      shape: options.sketch,
      explicitRegistry: options.registry,
      async,
      method,
      // a NUL-led key no string a person types collides with; seq keeps two same-named methods apart
      defaultKey: `\u0000method#${seq}:${method}`,
      sketch: undefined,
      counters: UNBOUND,
      answerAt: -1,
      passesAnswerOn: false,
    };
  };

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
    const r = reflector();
    // TypeScript's emitted return type, when async compiles down to a function returning a Promise
    const returnType = r?.getMetadata('design:returntype', target, name);
    const async = isAsyncFunction(original) || returnType === Promise;
    const b = bindingFor(method, async);
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
        throw new SketchConfigError(`${id}: sketch decorators apply to methods and classes, not to a ${keyOrContext.kind}`);
      }
      const name = String(keyOrContext.name);
      const b = bindingFor(name, isAsyncFunction(target as AnyFunction));
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
      throw new SketchConfigError(`${id}: sketch decorators apply to methods and classes, not to ${String(keyOrContext)}`);
    }
    desc.value = decorateMethod(target as object, keyOrContext as string | symbol, desc.value as AnyFunction);
    return desc;
  }
  return decorate as SketchDecorator;
}

type AnyFunction = (this: unknown, ...args: unknown[]) => unknown;

/** Methods marked by {@link SkipSketch}, and the sketches each decorated method already counts in. */
const skipMarks = new WeakSet<Function>();
const countsIn = new WeakMap<Function, ReadonlySet<string>>();
/** Wrappers that look for the request's answer among their arguments (and take it off for what they wrap). */
const takesAnswer = new WeakSet<Function>();

/**
 * Exempts a method from the sketch decorators of its class (`@SketchLimit(...)` on a controller applies to
 * every route): health checks, webhooks. Sketch decorators on the method itself still apply.
 */
export function SkipSketch(): SketchMethodDecorator {
  return ((target: unknown, keyOrContext: unknown, descriptor?: PropertyDescriptor) => {
    if (isStandardContext(keyOrContext)) {
      if (typeof target === 'function') skipMarks.add(target);
      return undefined;
    }
    if (descriptor !== undefined && typeof descriptor.value === 'function') skipMarks.add(descriptor.value);
    return descriptor;
  }) as SketchMethodDecorator;
}

const UNBOUND: SketchCounters = Object.freeze({ hits: 0, breaches: 0, keyErrors: 0 }) as SketchCounters;

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
    const estimate = sketch.hit(key);
    const counters = b.counters;
    counters.hits++;
    if (answer !== undefined) {
      addRateLimitFields(
        answer,
        b.id,
        b.threshold,
        Math.ceil(b.windowMs / 1000),
        estimate >= b.threshold ? 0 : b.threshold - estimate,
        retryAfterSeconds(sketch),
        b.headers === 'standard+legacy',
      );
    }
    if (estimate <= b.threshold) return Reflect.apply(original, this, args);
    counters.breaches++;
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

function skipped(b: Binding, self: unknown, args: ArrayLike<unknown>): boolean {
  try {
    return Reflect.apply(b.skipIf!, self, args) === true;
  } catch (err) {
    safeLog('warn', `sketch ${b.id}: skipIf of ${b.method} threw (${err instanceof Error ? err.message : String(err)}); the call was counted`);
    return false;
  }
}

function bind(b: Binding): WindowedCountMinSketch {
  const registry = b.explicitRegistry ?? sketchRegistry();
  const sketch = registry.getOrCreate(b.type, b.windowMs, b.shape);
  sketch.noteThreshold(b.threshold);
  b.sketch = sketch;
  b.counters = registry.counters(b.id) ?? { hits: 0, breaches: 0, keyErrors: 0 };
  return sketch;
}

/** The key as a sketch key, or the reason there is none (the thrown value, or a {@link KeyMissing}). */
function readKey(fn: SketchKeyFunction, self: unknown, args: ArrayLike<unknown>): string | unknown {
  let v: unknown;
  try {
    v = Reflect.apply(fn, self, args);
  } catch (err) {
    return err === undefined || typeof err === 'string' ? new Error(String(err)) : err;
  }
  if (typeof v === 'string') return v.length > 0 ? v : new KeyMissing('an empty string');
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : new KeyMissing(String(v));
  if (typeof v === 'bigint') return String(v);
  if (v instanceof Uint8Array) {
    // latin1 maps each byte to one code unit: distinct byte strings stay distinct keys
    return v.length > 0 ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1') : new KeyMissing('empty bytes');
  }
  return new KeyMissing(v === null ? 'null' : typeof v === 'object' ? 'an object' : String(v));
}

/**
 * Retry-After: a key that stops calling is certainly below the threshold again once every slot holding its
 * events is cleared, at most windowMs + windowMs/subWindows later (docs/sketches.md, "The price").
 */
function retryAfterSeconds(sketch: WindowedCountMinSketch): number {
  return Math.max(1, Math.ceil((sketch.windowMs + sketch.subWindowMs) / 1000));
}

function reject(b: Binding, sketch: WindowedCountMinSketch, key: string, estimate: number, wrapper: object, args: ArrayLike<unknown>): unknown {
  const err = new SketchThresholdError({
    sketchId: b.id,
    keyHash: hashSketchKey(key),
    threshold: b.threshold,
    estimate,
    retryAfterSeconds: retryAfterSeconds(sketch),
    method: b.method,
  });
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

function logState(b: Binding): { breach: LogState; key: LogState } {
  let s = logStates.get(b.counters);
  if (s === undefined) {
    s = { breach: { at: -Infinity, quiet: 0 }, key: { at: -Infinity, quiet: 0 } };
    logStates.set(b.counters, s);
  }
  return s;
}

/** True at most once per sketch and kind per minute; counts the calls it kept quiet. */
function due(state: LogState): number | undefined {
  const now = Date.now();
  if (now - state.at < LOG_EVERY_MS) {
    state.quiet++;
    return undefined;
  }
  const quiet = state.quiet;
  state.at = now;
  state.quiet = 0;
  return quiet;
}

function reportObservedBreach(b: Binding, key: string, estimate: number): void {
  const quiet = due(logState(b).breach);
  if (quiet === undefined) return;
  safeLog(
    'warn',
    `sketch ${b.id} (observe mode): ${b.method} key ${hashSketchKey(key)} at ${estimate} > threshold ${b.threshold}; ` +
      `the call ran` + (quiet > 0 ? `; ${quiet} more breaches since the last report` : ''),
  );
}

function reportKeyError(b: Binding, reason: unknown): void {
  const quiet = due(logState(b).key);
  if (quiet === undefined) return;
  safeLog(
    'warn',
    `sketch ${b.id}: the key function of ${b.method} ${describeKeyFailure(reason)}; the call was ` +
      (b.rejectOnKeyError ? 'rejected' : 'run without being counted (onKeyError: admit)') +
      (quiet > 0 ? `; ${quiet} more key errors since the last report` : ''),
  );
}
