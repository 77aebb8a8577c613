import { safeLog } from '../../shared/logger';
import { nativeSketchStore } from './native';
import type * as Connection from '../../shared/redis';
import type * as RedisStore from './redis/store';
import type { SketchStore } from './types';
import type { SketchRedisSettings } from '../settings';

/**
 * The store the settings ask for: a `RedisSketchStore` on a connection of its own when a URL is set,
 * else the native store. A malformed URL or a missing ioredis is a WARN naming the setting, and the native
 * store: configuration never breaks the host. Nothing logged quotes the URL's password.
 */
export function storeFromSettings(settings: SketchRedisSettings): SketchStore {
  if (settings.url === undefined) return nativeSketchStore;
  // Loaded only when a URL is set: a process with local sketches never loads the Redis store.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { connectIORedis, parseRedisUrl } = require('../../shared/redis') as typeof Connection;
  const { RedisSketchStore } = require('./redis/store') as typeof RedisStore;
  /* eslint-enable @typescript-eslint/no-require-imports */
  let target;
  try {
    target = parseRedisUrl(settings.url);
  } catch (err) {
    safeLog(
      'warn',
      `ignoring diag.sketch.redis.url (DIAG_SKETCH_REDIS_URL): ${(err as Error).message}; sketches stay in this process`,
    );
    return nativeSketchStore;
  }
  let client;
  try {
    client = connectIORedis(target, Math.max(10_000, 40 * settings.timeoutMs), (err) =>
      safeLog('debug', `sketch store connection to ${target.address}: ${target.redact(err.message)}`),
    );
  } catch (err) {
    const missing = (err as { code?: string }).code === 'MODULE_NOT_FOUND';
    safeLog(
      'warn',
      missing
        ? `diag.sketch.redis.url is set but ioredis is not installed (npm install ioredis); sketches stay in this process`
        : `could not create the Redis client for ${target.address}: ${target.redact((err as Error).message)}; sketches stay in this process`,
    );
    return nativeSketchStore;
  }
  return new RedisSketchStore({
    client,
    syncIntervalMs: settings.syncIntervalMs,
    timeoutMs: settings.timeoutMs,
    failMode: settings.failMode,
    keyPrefix: settings.keyPrefix,
    address: target.address,
    redact: target.redact,
    ownsClient: true,
  });
}
