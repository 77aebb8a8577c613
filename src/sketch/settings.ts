import { safeLog } from '../shared/logger';
import {
  deepFreeze,
  InvalidValue,
  resolveSettings,
  setting,
  type OptionsOf,
  type SettingsOf,
  type SettingType,
} from '../shared/settings';
import { oneOf, POSITIVE_INT, STRING } from '../shared/setting-types';

/*
 * The sketches' own settings, `diag.sketch.redis.*`, declared here so that the sketch entry point (which may
 * run without the instrumentation) resolves them itself; the instrumentation's settings include this table.
 * The Redis store takes its defaults and its checks from here too: one place for each.
 */

/** What a fleet sketch does while Redis is away: `open` admits a share of the threshold, `closed` rejects. */
export const FAIL_MODES = ['open', 'closed'] as const;

export function isFailMode(value: unknown): value is (typeof FAIL_MODES)[number] {
  return (FAIL_MODES as readonly unknown[]).includes(value);
}

/** Sync every 100 ms unless told otherwise. */
export const DEFAULT_SYNC_INTERVAL_MS = 100;
/** A sync round unanswered after 250 ms switches the sketch to local-fallback. */
export const DEFAULT_TIMEOUT_MS = 250;
export const DEFAULT_KEY_PREFIX = 'diag:sketch:';
export const DEFAULT_FAIL_MODE: (typeof FAIL_MODES)[number] = 'open';

/** A key prefix may not hold braces (the sketch id is the Redis Cluster hash tag) or spaces. */
export function isKeyPrefix(value: unknown): value is string {
  return typeof value === 'string' && !/[{}\s]/.test(value);
}

const FAIL_MODE = oneOf('failMode', FAIL_MODES);

const KEY_PREFIX: SettingType<string> = {
  kind: 'keyPrefix',
  parse: (raw) => (isKeyPrefix(raw) ? raw : new InvalidValue('expected a string without braces or spaces')),
};

export const SKETCH_SETTINGS = {
  sketchRedis: {
    /** `diag.sketch.redis.url`: `redis://` or `rediss://` URL of the fleet store; unset = sketches stay in this process. */
    url: setting({
      property: 'diag.sketch.redis.url',
      type: STRING,
      defaultValue: () => undefined,
      description:
        '`redis://[user:password@]host:port[/db]` or `rediss://` (TLS) URL: sketches hold one limit across every replica ([fleet-wide sketches](sketches.md#fleet-wide-sketches-through-redis)); never logged with its password',
      secret: true,
    }),
    /** `diag.sketch.redis.sync-interval-ms`: how often each sketch syncs with Redis. */
    syncIntervalMs: setting({
      property: 'diag.sketch.redis.sync-interval-ms',
      type: POSITIVE_INT,
      defaultValue: () => DEFAULT_SYNC_INTERVAL_MS,
      description: 'How often each sketch pushes its changed cells to Redis and reads the fleet’s back',
    }),
    /** `diag.sketch.redis.timeout-ms`: a sync with no answer after this long switches to local-fallback. */
    timeoutMs: setting({
      property: 'diag.sketch.redis.timeout-ms',
      type: POSITIVE_INT,
      defaultValue: () => DEFAULT_TIMEOUT_MS,
      description: 'A sync with no answer after this long switches the sketch to `local-fallback`',
    }),
    /** `diag.sketch.redis.fail-mode`: `open` admits threshold ÷ nodes locally while Redis is away; `closed` rejects. */
    failMode: setting({
      property: 'diag.sketch.redis.fail-mode',
      type: FAIL_MODE,
      defaultValue: () => DEFAULT_FAIL_MODE,
      description: '`open`: while Redis is away each replica admits threshold ÷ replicas per key; `closed`: it rejects',
    }),
    /** `diag.sketch.redis.key-prefix`: prefix of every key the store writes. */
    keyPrefix: setting({
      property: 'diag.sketch.redis.key-prefix',
      type: KEY_PREFIX,
      defaultValue: () => DEFAULT_KEY_PREFIX,
      description: 'Prefix of every Redis key the fleet store writes',
    }),
  },
} as const;

type SketchSettingsGroups = SettingsOf<typeof SKETCH_SETTINGS>;
type SketchRedisGroup = SketchSettingsGroups['sketchRedis'];

/**
 * The `diag.sketch.redis.*` settings, as the store needs them (resolved: environment over options over
 * defaults). The configuration refers to this table, not the other way round: the sketches import nothing of
 * the instrumentation.
 */
export interface SketchRedisSettings extends SketchRedisGroup {}

/** The options the sketches' settings accept (`sketchRedis: { url, … }`), part of the instrumentation's options. */
export type SketchOptions = OptionsOf<typeof SKETCH_SETTINGS>;

/**
 * The `diag.sketch.redis.*` settings alone, for the process-wide sketch registry, which the sketch entry point
 * creates without the instrumentation. Problems are warnings (`warn`), never thrown.
 */
export function resolveSketchRedisConfig(
  options: SketchOptions = {},
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = (m) => safeLog('warn', m),
): SketchRedisSettings {
  return deepFreeze(resolveSettings(SKETCH_SETTINGS, options, env, warn).sketchRedis);
}
