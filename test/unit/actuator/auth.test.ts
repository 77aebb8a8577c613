import { BearerCheck } from '../../../src/actuator/auth';

describe('BearerCheck', () => {
  const check = new BearerCheck('s3cret-token');

  it('accepts the secret with the Bearer scheme, scheme case-insensitive', () => {
    expect(check.matches('Bearer s3cret-token')).toBe(true);
    expect(check.matches('bearer s3cret-token')).toBe(true);
    expect(check.matches('BEARER  s3cret-token ')).toBe(true);
  });

  it.each([
    [undefined],
    [''],
    ['s3cret-token'],
    ['Basic s3cret-token'],
    ['Bearer'],
    ['Bearer '],
    ['Bearer s3cret-toke'],
    ['Bearer s3cret-token2'],
    ['Bearer S3CRET-TOKEN'],
    ['Bearer s3cret-token extra'],
  ])('rejects %j', (header) => {
    expect(check.matches(header)).toBe(false);
  });
});
