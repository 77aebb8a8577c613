import { createHmac, randomBytes } from 'node:crypto';

import { DiagError } from '../../shared/errors';

/** What a rejected call answers over HTTP: the JSON body of the 429. */
export interface SketchThresholdBody {
  readonly statusCode: 429;
  readonly error: 'Too Many Requests';
  readonly message: string;
  readonly code: 'ERR_SKETCH_THRESHOLD';
  readonly sketchId: string;
  readonly retryAfterSeconds: number;
}

/** Fields of a {@link SketchThresholdError}. */
export interface SketchThresholdDetails {
  /** `<TYPE>_<windowMs>` of the sketch that rejected the call. */
  readonly sketchId: string;
  /** {@link hashSketchKey} of the key: lets logs correlate rejections without recording who was rejected. */
  readonly keyHash: string;
  /** The decorator's threshold: calls are admitted while the key's estimate is at most this. */
  readonly threshold: number;
  /** The key's estimate right after this call was counted. */
  readonly estimate: number;
  /** Seconds after which a key that stops calling is certainly admitted again. */
  readonly retryAfterSeconds: number;
  /** `Class.method` that was not run. */
  readonly method: string;
}

/**
 * A call rejected by a sketch decorator because its key's estimate in the window exceeded the threshold.
 *
 * It carries the shape HTTP frameworks look for, so that wherever it escapes it reads as a 429 rather than a
 * 500: `getStatus()` / `getResponse()` (NestJS's HttpException), and `status`, `statusCode` and `expose`
 * (the `http-errors` signature that Nest's default filter, Express and Fastify error handlers honour).
 * The key itself is never stored: only an HMAC of it under a per-process random secret, so even a
 * low-entropy key such as an IPv4 address cannot be recovered from logs by enumeration.
 */
export class SketchThresholdError extends DiagError implements SketchThresholdDetails {
  readonly sketchId: string;
  readonly keyHash: string;
  readonly threshold: number;
  readonly estimate: number;
  readonly retryAfterSeconds: number;
  readonly method: string;
  readonly status = 429;
  readonly statusCode = 429;
  /** http-errors convention: the message is safe to show to the client. */
  readonly expose = true;

  /**
   * @param message what the client reads (the decorator's `message` option); by default it names the sketch
   *   and when to retry, and never the method or the key
   */
  constructor(details: SketchThresholdDetails, message?: string) {
    super(
      'ERR_SKETCH_THRESHOLD',
      message ?? `Rate limit exceeded (sketch ${details.sketchId}); retry after ${details.retryAfterSeconds} s`,
    );
    this.sketchId = details.sketchId;
    this.keyHash = details.keyHash;
    this.threshold = details.threshold;
    this.estimate = details.estimate;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.method = details.method;
  }

  /** HTTP status, as NestJS's HttpException names it. */
  getStatus(): 429 {
    return 429;
  }

  /**
   * What a GraphQL response reports with the error (graphql-js copies a thrown error's `extensions`):
   * `code: "TOO_MANY_REQUESTS"`, `retryAfterSeconds` and the sketch. A getter, so it stays out of JSON.
   */
  get extensions(): { code: 'TOO_MANY_REQUESTS'; retryAfterSeconds: number; sketchId: string } {
    return { code: 'TOO_MANY_REQUESTS', retryAfterSeconds: this.retryAfterSeconds, sketchId: this.sketchId };
  }

  /** The JSON body a client receives; names neither the method nor the key. */
  getResponse(): SketchThresholdBody {
    return {
      statusCode: 429,
      error: 'Too Many Requests',
      message: this.message,
      code: 'ERR_SKETCH_THRESHOLD',
      sketchId: this.sketchId,
      retryAfterSeconds: this.retryAfterSeconds,
    };
  }
}

/**
 * A key function threw or returned no usable key, and the decorator was told `onKeyError: 'reject'`.
 * A server-side fault rather than the caller's, so it carries no HTTP status and reads as a 500.
 */
export class SketchKeyError extends DiagError {
  constructor(
    readonly sketchId: string,
    readonly method: string,
    cause: unknown,
  ) {
    super('ERR_SKETCH_KEY', `${method}: the key function of sketch ${sketchId} ${describeKeyFailure(cause)}`, {
      cause,
    });
  }
}

/** @internal What went wrong with a key, for messages: "threw …" or "returned …". */
export function describeKeyFailure(cause: unknown): string {
  if (cause instanceof KeyMissing) return `returned ${cause.what}, not a non-empty string, number or bytes`;
  const message = cause instanceof Error ? cause.message : String(cause);
  return `threw: ${message}`;
}

/** @internal Marks a key function that returned nothing usable (as opposed to one that threw). */
export class KeyMissing {
  constructor(readonly what: string) {}
}

let secret: Buffer | undefined;

/**
 * The hash a {@link SketchThresholdError} reports instead of its key: 16 hex digits of HMAC-SHA256 under a
 * secret drawn once per process. Stable within a process (to correlate log lines), meaningless outside it.
 */
export function hashSketchKey(key: string): string {
  secret ??= randomBytes(32);
  return createHmac('sha256', secret).update(key).digest('hex').slice(0, 16);
}
