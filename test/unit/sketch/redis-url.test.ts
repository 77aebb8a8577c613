import { parseRedisUrl } from '../../../src/shared/redis';
import { resolveSketchRedisConfig } from '../../../src/sketch/settings';

describe('the Redis URL of the fleet store', () => {
  it('names the server without user or password, and scrubs the password from any text', () => {
    const t = parseRedisUrl('rediss://app:p%40ss-w0rd@cache.internal:6380/2');
    expect(t.address).toBe('rediss://cache.internal:6380/2');
    expect(t.redact('WRONGPASS for app:p%40ss-w0rd and p@ss-w0rd')).toBe('WRONGPASS for app:*** and ***');
  });

  it('scrubs a short password only where it is one (in a URL), not every matching letter of a message', () => {
    const t = parseRedisUrl('redis://:x@cache.internal:6379');
    expect(t.redact('Reached the max retries; redis://:x@cache.internal:6379')).toBe(
      'Reached the max retries; redis://:***@cache.internal:6379',
    );
  });

  it.each([
    ['http://host:6379', /scheme http: is not redis: or rediss:/],
    ['redis://:secret-pw@host:nope', /not a URL/],
    ['redis://:secret-pw@host:6379/zero', /database number/],
    ['secret-pw', /not a URL/],
  ])('refuses %s with a reason that never quotes it', (raw, reason) => {
    let message = '';
    try {
      parseRedisUrl(raw);
    } catch (err) {
      message = (err as Error).message;
      expect((err as { code?: string }).code).toBe('ERR_REDIS_URL');
    }
    expect(message).toMatch(reason);
    expect(message).not.toContain('secret-pw');
  });

  it('reads the diag.sketch.redis.* settings; a bad value is a warning that never quotes the URL', () => {
    const warnings: string[] = [];
    const settings = resolveSketchRedisConfig(
      { sketchRedis: { url: '' as string } },
      {
        DIAG_SKETCH_REDIS_SYNC_INTERVAL_MS: '0',
        DIAG_SKETCH_REDIS_FAIL_MODE: 'closed',
        DIAG_SKETCH_REDIS_KEY_PREFIX: 'a{b',
      },
      (m) => warnings.push(m),
    );
    expect(settings).toEqual({
      url: undefined,
      syncIntervalMs: 100,
      timeoutMs: 250,
      failMode: 'closed',
      keyPrefix: 'diag:sketch:',
    });
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toMatch(/diag\.sketch\.redis\.url: the value \(not shown: it may hold a secret\) is not valid/);
    expect(warnings[1]).toMatch(
      /DIAG_SKETCH_REDIS_SYNC_INTERVAL_MS for diag\.sketch\.redis\.sync-interval-ms: "0" is not valid/,
    );
  });
});
