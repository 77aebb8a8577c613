import { DiagError } from './errors';

/** A Redis URL that cannot be used; the message never quotes the URL (it may hold a password). */
export class RedisUrlError extends DiagError {
  constructor(reason: string) {
    super('ERR_REDIS_URL', reason);
  }
}

/**
 * The Redis connection both products share (the fleet sketches' store and the ghost ledger).
 *
 * The part of a Redis client they use: a pipeline built from raw commands, as ioredis's `Redis`
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
 * @throws RedisUrlError naming what is wrong.
 */
export function parseRedisUrl(raw: string): RedisTarget {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new RedisUrlError('not a URL (expected redis://[user:password@]host[:port][/db] or rediss://…)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new RedisUrlError(`scheme ${url.protocol} is not redis: or rediss:`);
  }
  if (url.hostname === '') throw new RedisUrlError('no host');
  const db = url.pathname.replace(/^\/+/, '');
  if (db !== '' && !/^\d+$/.test(db)) throw new RedisUrlError('the path must be a database number');
  const password = url.password ? decodeURIComponent(url.password) : '';
  const address = `${url.protocol}//${url.host}${db ? `/${db}` : ''}`;
  return {
    url: url.href,
    address,
    redact: (text) => {
      let out = text;
      for (const secret of new Set([password, url.password])) {
        if (!secret) continue;
        // In a URL always; anywhere else only when long enough to be itself: a password `x` must not turn an
        // error's every "x" into stars (and a message that quotes a 3-letter word quotes no secret).
        out = out.split(`:${secret}@`).join(':***@');
        if (secret.length >= 6) out = out.split(secret).join('***');
      }
      return out;
    },
  };
}

/** An ioredis client (`Redis` or `Cluster`), as far as used here. */
interface IORedisClient extends RedisPipelineClient {
  on(event: 'error' | 'connect', listener: (err: Error) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
}

/** ioredis's module, as far as used here. */
interface IORedisModule {
  new (url: string, options: Record<string, unknown>): IORedisClient;
  Cluster: new (nodes: { host: string; port: number }[], options: Record<string, unknown>) => IORedisClient;
}

/** What {@link connectIORedis} returns: a pipeline client that follows the server to a Redis Cluster. */
export interface RedisConnection extends RedisPipelineClient {
  /** Whether the server turned out to be a Redis Cluster (a MOVED answer), and the cluster client is in use. */
  readonly cluster: boolean;
  quit(): Promise<unknown>;
  disconnect(): void;
}

/**
 * Connects with ioredis, the application's copy (an optional peer dependency). Connection errors are
 * handed to `onError` instead of ioredis's console warning; reconnection is ioredis's, at most every 2 s.
 *
 * The URL may name any node of a Redis Cluster: the first MOVED answer switches to ioredis's `Cluster`, seeded
 * with that node and the same credentials, and the pipeline is sent again (every key of one pipeline shares a
 * hash tag, so a MOVED pipeline ran none of its keyed commands). Nothing to configure for a cluster.
 * @throws Error with `code: 'MODULE_NOT_FOUND'` when ioredis is not installed.
 */
export function connectIORedis(
  target: RedisTarget,
  commandTimeoutMs: number,
  onError: (err: Error) => void,
): RedisConnection {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const IORedis = require('ioredis') as IORedisModule;
  const options = {
    // A round that waits past this is given up (its counts are pushed again); the store's own timeout
    // (much shorter) is what switches to local-fallback.
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt: number) => Math.min(100 * attempt, 2000),
    connectTimeout: Math.max(1000, commandTimeoutMs),
    enableAutoPipelining: false,
    lazyConnect: false,
  };
  const watch = (client: IORedisClient): IORedisClient => {
    client.on('error', onError);
    // The connection must not be what keeps a finished process alive (the sync timer is unref'd as well).
    client.on('connect', () => (client as { stream?: { unref?(): void } }).stream?.unref?.());
    return client;
  };
  let client = watch(new IORedis(target.url, options));
  let cluster = false;
  const toCluster = (): void => {
    const url = new URL(target.url);
    const seed = { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379) };
    const old = client;
    client = watch(
      new IORedis.Cluster([seed], {
        redisOptions: {
          ...options,
          ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
          ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
          ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
        },
        clusterRetryStrategy: options.retryStrategy,
        enableOfflineQueue: true,
      }),
    );
    // Each node of the cluster is a connection of its own: none may keep a finished process alive either.
    (client as unknown as { on(event: '+node', listener: (node: IORedisClient) => void): unknown }).on(
      '+node',
      (node) => node.on('connect', () => (node as { stream?: { unref?(): void } }).stream?.unref?.()),
    );
    cluster = true;
    old.disconnect();
  };
  const moved = (results: [Error | null, unknown][] | null): boolean =>
    !cluster && results !== null && results.some(([e]) => e !== null && /^MOVED /.test(e.message));
  return {
    get cluster() {
      return cluster;
    },
    pipeline(commands) {
      return {
        async exec() {
          const results = await client.pipeline(commands).exec();
          if (!moved(results)) return results;
          toCluster();
          return client.pipeline(commands).exec();
        },
      };
    },
    quit: () => client.quit(),
    disconnect: () => client.disconnect(),
  };
}
