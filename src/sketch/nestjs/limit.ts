// One limit as the decorators and the global guard both apply it: its options validated once, the sketch it
// counts in, how a call's key is read and counted, and what is logged about it.
import { Buffer } from 'node:buffer';

import { safeLog } from '../../shared/logger';
import { SketchConfigError } from '../counters';
import { SketchRegistry, sketchRegistry, type RegistrySketchOptions, type SketchCounters } from '../registry';
import type { WindowedCountMinSketch } from '../window';
import {
  KeyMissing,
  SketchThresholdError,
  describeKeyFailure,
  hashSketchKey,
  type SketchThresholdDetails,
} from './errors';
import { addRateLimitFields, type RateLimitAnswer, type RateLimitHeaders } from './http';

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

/**
 * The message of a rejected call (`SketchThresholdError.message`, and `message` in the 429 body): fixed text,
 * or made from the rejection's details. It reaches the client, so it should not name the key; the details
 * carry only its hash. A function that throws or returns no string leaves the default message.
 */
export type SketchMessage = string | ((details: SketchThresholdDetails) => string);

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
  /** The message of a rejected call; default `Rate limit exceeded (sketch <id>); retry after <n> s`. */
  readonly message?: SketchMessage;
}

/** Largest threshold the 32-bit saturating counters can tell apart from "over". */
const MAX_THRESHOLD = 0xfffffffe;
const LOG_EVERY_MS = 60_000;

/** A limit's options, validated: what every call counted against it shares. */
export interface LimitSpec {
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
  readonly message: SketchMessage | undefined;
}

/** Everything one decorated method (or the guard's limit) needs per call, resolved once. */
export interface Binding extends LimitSpec {
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

/**
 * Validates a limit's options.
 * @param thresholdName the option holding the threshold (`requests`, `threshold`, `maxEvents`), for messages
 * @throws SketchConfigError naming the sketch and the option at fault
 */
export function limitSpec(
  type: string,
  thresholdName: string,
  threshold: unknown,
  options: SketchCommonOptions,
): LimitSpec {
  if (options === null || typeof options !== 'object')
    throw new SketchConfigError(`sketch decorator ${type}: options object required`);
  const windowMs = options.windowMs ?? 60_000;
  const id = SketchRegistry.idOf(type, windowMs);
  if (typeof threshold !== 'number' || !Number.isInteger(threshold) || threshold < 1 || threshold > MAX_THRESHOLD) {
    throw new SketchConfigError(
      `${id}: ${thresholdName} must be an integer in 1..${MAX_THRESHOLD}, got ${String(threshold)}`,
    );
  }
  const mode = options.mode ?? 'enforce';
  if (mode !== 'enforce' && mode !== 'observe')
    throw new SketchConfigError(`${id}: mode must be 'enforce' or 'observe', got ${String(mode)}`);
  const onKeyError = options.onKeyError ?? 'admit';
  if (onKeyError !== 'admit' && onKeyError !== 'reject') {
    throw new SketchConfigError(`${id}: onKeyError must be 'admit' or 'reject', got ${String(onKeyError)}`);
  }
  if (options.key !== undefined && typeof options.key !== 'function')
    throw new SketchConfigError(`${id}: key must be a function`);
  if (options.skipIf !== undefined && typeof options.skipIf !== 'function')
    throw new SketchConfigError(`${id}: skipIf must be a function`);
  const headers = options.headers ?? 'standard';
  if (headers !== 'standard' && headers !== 'standard+legacy' && headers !== 'none') {
    throw new SketchConfigError(
      `${id}: headers must be 'standard', 'standard+legacy' or 'none', got ${String(headers)}`,
    );
  }
  if (options.registry !== undefined && !(options.registry instanceof SketchRegistry)) {
    throw new SketchConfigError(`${id}: registry must be a SketchRegistry`);
  }
  const message = options.message;
  if (message !== undefined && typeof message !== 'function' && (typeof message !== 'string' || message === '')) {
    throw new SketchConfigError(`${id}: message must be a non-empty string or a function`);
  }
  return {
    type,
    windowMs,
    id,
    threshold,
    observe: mode === 'observe',
    rejectOnKeyError: onKeyError === 'reject',
    headers,
    key: options.key,
    skipIf: options.skipIf,
    shape: options.sketch,
    explicitRegistry: options.registry,
    message,
  };
}

const UNBOUND: SketchCounters = Object.freeze({ hits: 0, breaches: 0, keyErrors: 0 }) as SketchCounters;
let bindingSeq = 0;

/** A fresh binding of `spec` for one method (`Class.method`), its sketch looked up on the first call. */
export function bindingOf(spec: LimitSpec, method: string, async: boolean): Binding {
  const seq = ++bindingSeq;
  return {
    ...spec,
    async,
    method,
    // a NUL-led key no string a person types collides with; seq keeps two same-named methods apart
    defaultKey: `\u0000method#${seq}:${method}`,
    sketch: undefined,
    counters: UNBOUND,
    answerAt: -1,
    passesAnswerOn: false,
  };
}

/** The binding's sketch, created in its registry on first use (and again after the registry closed it). */
export function bind(b: Binding): WindowedCountMinSketch {
  const registry = b.explicitRegistry ?? sketchRegistry();
  const sketch = registry.getOrCreate(b.type, b.windowMs, b.shape);
  sketch.noteThreshold(b.threshold);
  b.sketch = sketch;
  b.counters = registry.counters(b.id) ?? { hits: 0, breaches: 0, keyErrors: 0 };
  return sketch;
}

/** Whether the limit's `skipIf` exempts this call; one that throws does not, and is logged. */
export function skipped(b: Binding, self: unknown, args: ArrayLike<unknown>): boolean {
  try {
    return Reflect.apply(b.skipIf!, self, args) === true;
  } catch (err) {
    safeLog(
      'warn',
      `sketch ${b.id}: skipIf of ${b.method} threw (${err instanceof Error ? err.message : String(err)}); the call was counted`,
    );
    return false;
  }
}

/** The key as a sketch key, or the reason there is none (the thrown value, or a {@link KeyMissing}). */
export function readKey(fn: SketchKeyFunction, self: unknown, args: ArrayLike<unknown>): string | unknown {
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
    return v.length > 0
      ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1')
      : new KeyMissing('empty bytes');
  }
  return new KeyMissing(v === null ? 'null' : typeof v === 'object' ? 'an object' : String(v));
}

/**
 * Counts one call of `key` and returns the key's estimate with it; adds the limit to the request's rate-limit
 * fields when there is an answer to carry them. Allocates nothing beyond the fields' strings.
 */
export function count(
  b: Binding,
  sketch: WindowedCountMinSketch,
  key: string,
  answer: RateLimitAnswer | undefined,
): number {
  const estimate = sketch.hit(key);
  b.counters.hits++;
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
  return estimate;
}

/**
 * Retry-After: a key that stops calling is certainly below the threshold again once every slot holding its
 * events is cleared, at most windowMs + windowMs/subWindows later (docs/sketches.md, "The price").
 */
export function retryAfterSeconds(sketch: WindowedCountMinSketch): number {
  return Math.max(1, Math.ceil((sketch.windowMs + sketch.subWindowMs) / 1000));
}

/** The error of a call over the limit (of `method`, default the bound one), with the limit's own message if any. */
export function thresholdError(
  b: Binding,
  sketch: WindowedCountMinSketch,
  key: string,
  estimate: number,
  method = b.method,
): SketchThresholdError {
  const details: SketchThresholdDetails = {
    sketchId: b.id,
    keyHash: hashSketchKey(key),
    threshold: b.threshold,
    estimate,
    retryAfterSeconds: retryAfterSeconds(sketch),
    method,
  };
  return new SketchThresholdError(details, b.message === undefined ? undefined : messageOf(b, details));
}

function messageOf(b: Binding, details: SketchThresholdDetails): string | undefined {
  if (typeof b.message === 'string') return b.message;
  try {
    const m: unknown = b.message!(details);
    if (typeof m === 'string' && m !== '') return m;
    safeLog(
      'warn',
      `sketch ${b.id}: the message function of ${b.method} returned no text; the default message was used`,
    );
  } catch (err) {
    safeLog(
      'warn',
      `sketch ${b.id}: the message function of ${b.method} threw (${err instanceof Error ? err.message : String(err)}); the default message was used`,
    );
  }
  return undefined;
}

/** When each sketch last logged, per kind of event, and how many it kept quiet since. */
interface LogState {
  at: number;
  quiet: number;
}
const logStates = new WeakMap<SketchCounters, { breach: LogState; key: LogState }>();

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

export function reportObservedBreach(b: Binding, key: string, estimate: number): void {
  const quiet = due(logState(b).breach);
  if (quiet === undefined) return;
  safeLog(
    'warn',
    `sketch ${b.id} (observe mode): ${b.method} key ${hashSketchKey(key)} at ${estimate} > threshold ${b.threshold}; ` +
      `the call ran` +
      (quiet > 0 ? `; ${quiet} more breaches since the last report` : ''),
  );
}

export function reportKeyError(b: Binding, reason: unknown): void {
  const quiet = due(logState(b).key);
  if (quiet === undefined) return;
  safeLog(
    'warn',
    `sketch ${b.id}: the key function of ${b.method} ${describeKeyFailure(reason)}; the call was ` +
      (b.rejectOnKeyError ? 'rejected' : 'run without being counted (onKeyError: admit)') +
      (quiet > 0 ? `; ${quiet} more key errors since the last report` : ''),
  );
}

/** Methods and classes marked by `@SkipSketch()`. */
export const skipMarks = new WeakSet<Function>();
/** The sketches each decorated method already counts in (by id): a decorator of the same sketch overrides. */
export const countsIn = new WeakMap<Function, ReadonlySet<string>>();
