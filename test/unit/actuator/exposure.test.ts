import { ENDPOINT_IDS, resolveExposure } from '../../../src/actuator';

describe('resolveExposure (Spring Boot Actuator rules)', () => {
  it.each([
    [undefined, [], []],
    [[], [], []],
    [['*'], [], ['health', 'diag', 'startup', 'sketches']],
    [['health'], [], ['health']],
    [['HEALTH', 'Sketches'], [], ['health', 'sketches']],
    [['sketches', 'health'], [], ['health', 'sketches']],
    [['*'], ['diag'], ['health', 'startup', 'sketches']],
    [['*'], ['DIAG', 'health', 'startup'], ['sketches']],
    [['health', 'diag'], ['*'], []],
    [['*'], ['*'], []],
    [['health'], ['health'], []],
    [['diag'], ['sketches'], ['diag']],
    [[' diag ', ''], [], ['diag']],
  ] as const)('include %j exclude %j exposes %j', (include, exclude, expected) => {
    const e = resolveExposure(include as readonly string[] | undefined, exclude as readonly string[]);
    expect(e.exposed).toEqual(expected);
    for (const id of ENDPOINT_IDS) expect(e.isExposed(id)).toBe((expected as readonly string[]).includes(id));
  });

  it('reports ids it does not know, without exposing anything for them', () => {
    const e = resolveExposure(['health', 'metrics', 'env'], ['beans']);
    expect(e.exposed).toEqual(['health']);
    expect(e.unknown).toEqual(['metrics', 'env', 'beans']);
  });
});
