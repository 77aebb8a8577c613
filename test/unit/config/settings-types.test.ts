/** DiagConfig and DiagOptions are derived from the settings table: their fields keep the types they had when written by hand. */
import type { DiagConfig, DiagOptions } from '../../../src/config/properties';
type Eq<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const checks: [
  Eq<DiagConfig['actuator']['include'], readonly string[] | undefined>,
  Eq<DiagConfig['actuator']['port'], number>,
  Eq<DiagConfig['report']['runId'], string | undefined>,
  Eq<DiagConfig['report']['dir'], string>,
  Eq<DiagConfig['sketchRedis']['failMode'], 'open' | 'closed'>,
  Eq<DiagConfig['sketchRedis']['url'], string | undefined>,
  Eq<DiagConfig['ghostTracking']['enabled'], boolean>,
  Eq<DiagConfig['containers']['include'], readonly string[]>,
  Eq<NonNullable<NonNullable<DiagOptions['ghostTracking']>['exclude']>, string[] | string>,
  Eq<NonNullable<NonNullable<DiagOptions['sketchRedis']>['failMode']>, 'open' | 'closed'>,
  Eq<NonNullable<DiagOptions['actuator']>['port'], number | undefined>,
] = [true, true, true, true, true, true, true, true, true, true, true];
export { checks };

// The assertions above are checked by the compiler (ts-jest typechecks this file): a change to the settings
// table that changes DiagConfig's or DiagOptions' types fails here.
describe('the types derived from the settings table', () => {
  it('compiles', () => {
    expect(checks).toHaveLength(11);
  });
});
