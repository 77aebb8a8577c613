import { envVarName, PROPERTIES, resolveConfig } from '../../../src/config/properties';

const quiet = (): { warn: (m: string) => void; warnings: string[] } => {
  const warnings: string[] = [];
  return { warn: (m) => warnings.push(m), warnings };
};

describe('configuration', () => {
  it('derives environment variable names from property names', () => {
    expect(envVarName('diag.ghost-tracking.enabled')).toBe('DIAG_GHOST_TRACKING_ENABLED');
    expect(envVarName('management.endpoints.web.exposure.include')).toBe('MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE');
  });

  it('has the SPEC defaults', () => {
    const c = resolveConfig({}, {});
    expect(c.ghostTracking).toEqual({
      enabled: false,
      exclude: [],
      lastUseResolutionMs: 86_400_000,
      depth: 'method',
      kept: [],
    });
    expect(c.ledger).toMatchObject({ minDays: 14, minProcessHours: 168, minTrackedShare: 1 });
    expect(c.report.dir).toBe(process.cwd());
    expect(c.actuator).toMatchObject({
      include: undefined,
      exclude: [],
      basePath: '/actuator',
      port: 8081,
      address: '127.0.0.1',
    });
  });

  it('lets the environment override options, which override defaults', () => {
    const c = resolveConfig(
      {
        ghostTracking: { enabled: true, exclude: ['A'], depth: 'method' },
        actuator: { port: 9000, include: ['diag'] },
      },
      { MANAGEMENT_SERVER_PORT: '0', DIAG_GHOST_TRACKING_EXCLUDE: 'B, C ,', DIAG_GHOST_TRACKING_DEPTH: 'Bean' },
    );
    expect(c.ghostTracking).toEqual({
      enabled: true,
      exclude: ['B', 'C'],
      lastUseResolutionMs: 86_400_000,
      depth: 'bean',
      kept: [],
    });
    expect(c.actuator.port).toBe(0);
    expect(c.actuator.include).toEqual(['diag']);
  });

  it.each([
    ['DIAG_GHOST_TRACKING_ENABLED', 'maybe', /expected true or false/],
    ['MANAGEMENT_SERVER_PORT', 'abc', /expected a whole number/],
    ['MANAGEMENT_SERVER_PORT', '70000', /0 to 65535/],
    ['DIAG_GHOST_TRACKING_LEDGER_MIN_TRACKED_SHARE', '1.5', /a fraction from 0 to 1/],
    ['DIAG_GHOST_TRACKING_LAST_USE_RESOLUTION_MS', '500', /at least 1000/],
    ['MANAGEMENT_SERVER_ADDRESS', 'a b', /host/],
    ['MANAGEMENT_ENDPOINTS_WEB_BASE_PATH', '/a b', /path/],
    ['DIAG_CONTAINERS_INCLUDE', 'nest,tsyringe', /unknown: nest/],
  ])('warns about %s=%s and keeps the default', (name, value, reason) => {
    const { warn, warnings } = quiet();
    const c = resolveConfig({}, { [name]: value }, warn);
    const def = resolveConfig({}, {}, () => undefined);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(name);
    expect(warnings[0]).toMatch(reason);
    expect(c).toEqual(def);
  });

  it('narrows the containers hooked to those named', () => {
    const c = resolveConfig(
      { containers: { include: ['tsyringe'] } },
      { DIAG_CONTAINERS_INCLUDE: 'nestjs, awilix' },
      () => undefined,
    );
    expect(c.containers.include).toEqual(['nestjs', 'awilix']);
    expect(resolveConfig({}, {}, () => undefined).containers.include).toEqual(['*']);
  });

  it('warns about malformed options without throwing', () => {
    const { warn, warnings } = quiet();
    const c = resolveConfig(
      { ghostTracking: { enabled: 'yes' as unknown as boolean }, actuator: { port: -1 } },
      {},
      warn,
    );
    expect(c.ghostTracking.enabled).toBe(false);
    expect(c.actuator.port).toBe(8081);
    expect(warnings).toHaveLength(2);
  });

  it('names where an invalid value came from, keeps the layer below it and never shows a secret', () => {
    const { warn, warnings } = quiet();
    const c = resolveConfig(
      { actuator: { port: 9000, authToken: 424242 as unknown as string } },
      { MANAGEMENT_SERVER_PORT: 'abc' },
      warn,
    );
    // the invalid environment variable falls back to the valid option, not to the default
    expect(c.actuator.port).toBe(9000);
    expect(c.actuator.authToken).toBeUndefined();
    expect(warnings).toHaveLength(2);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^ignoring environment variable MANAGEMENT_SERVER_PORT for management\.server\.port: "abc" .*using 9000$/,
      ),
    );
    const secret = warnings.find((w) => w.includes('auth-token'));
    expect(secret).toMatch(
      /^ignoring option actuator\.authToken for management\.server\.auth-token: the value \(not shown/,
    );
    expect(secret).not.toContain('424242');
  });

  it('lower-cases endpoint ids and normalises the base path', () => {
    const c = resolveConfig(
      {},
      { MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: 'Health,DIAG', MANAGEMENT_ENDPOINTS_WEB_BASE_PATH: 'manage/' },
    );
    expect(c.actuator.include).toEqual(['health', 'diag']);
    expect(c.actuator.basePath).toBe('/manage');
  });

  it('returns a frozen object', () => {
    const c = resolveConfig({}, {});
    expect(Object.isFrozen(c.actuator)).toBe(true);
  });

  it('documents every property', () => {
    for (const p of PROPERTIES) expect(p.description.length).toBeGreaterThan(10);
  });
});
