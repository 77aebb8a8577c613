import { SketchConfigError } from '../../counters';

/**
 * The part of a Redis client the fleet store uses: a pipeline built from raw commands, as ioredis's `Redis`
 * and `Cluster` both offer (`client.pipeline([['get', 'k'], …]).exec()`), with ioredis's `getBuffer` for the
 * one binary read. Any client of that shape works.
 */
export interface RedisPipelineClient {
  pipeline(commands: (string | number)[][]): { exec(): Promise<[Error | null, unknown][] | null> };
}

/** A Redis URL taken apart: where to connect, and how to name it in a log line without its secrets. */
export interface RedisTarget {
  readonly url: string;
  /** `redis://host:port/db`: no user, no password, no query. Safe for logs, errors and the actuator. */
  readonly address: string;
  /** Removes the password from any text (a client's error message, say) before it is logged. */
  redact(text: string): string;
}

/**
 * Checks a `redis://` or `rediss://` URL. The error never quotes the URL, which may hold a password.
 * @throws SketchConfigError naming what is wrong.
 */
export function parseRedisUrl(raw: string): RedisTarget {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new SketchConfigError('not a URL (expected redis://[user:password@]host[:port][/db] or rediss://…)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new SketchConfigError(`scheme ${url.protocol} is not redis: or rediss:`);
  }
  if (url.hostname === '') throw new SketchConfigError('no host');
  const db = url.pathname.replace(/^\/+/, '');
  if (db !== '' && !/^\d+$/.test(db)) throw new SketchConfigError('the path must be a database number');
  const password = url.password ? decodeURIComponent(url.password) : '';
  const address = `${url.protocol}//${url.host}${db ? `/${db}` : ''}`;
  return {
    url: url.href,
    address,
    redact: (text) => {
      let out = text;
      for (const secret of [password, url.password]) {
        if (secret) out = out.split(secret).join('***');
      }
      return out;
    },
  };
}

/** ioredis's constructor, as far as used here. */
interface IORedisModule {
  new (
    url: string,
    options: Record<string, unknown>,
  ): RedisPipelineClient & {
    on(event: 'error' | 'connect', listener: (err: Error) => void): unknown;
    quit(): Promise<unknown>;
    disconnect(): void;
  };
}

/**
 * Connects with ioredis, the application's copy (an optional peer dependency). Connection errors are
 * handed to `onError` instead of ioredis's console warning; reconnection is ioredis's, at most every 2 s.
 * @throws Error with `code: 'MODULE_NOT_FOUND'` when ioredis is not installed.
 */
export function connectIORedis(target: RedisTarget, commandTimeoutMs: number, onError: (err: Error) => void) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const IORedis = require('ioredis') as IORedisModule;
  const client = new IORedis(target.url, {
    // A round that waits past this is given up (its counts are pushed again); the store's own timeout
    // (much shorter) is what switches to local-fallback.
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt: number) => Math.min(100 * attempt, 2000),
    connectTimeout: Math.max(1000, commandTimeoutMs),
    enableAutoPipelining: false,
    lazyConnect: false,
  });
  client.on('error', onError);
  // The connection must not be what keeps a finished process alive (the sync timer is unref'd as well).
  client.on('connect', () => (client as { stream?: { unref?(): void } }).stream?.unref?.());
  return client;
}
