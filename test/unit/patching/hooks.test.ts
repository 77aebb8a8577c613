import * as path from 'node:path';
import { isWrapped } from '@opentelemetry/instrumentation';
import { packageOf } from '../../../src/patching/module-hooks';
import { isSupportedVersion } from '../../../src/patching/versions';
import { unwrapMethod, wrapMethod } from '../../../src/patching/wrap';
import { SUPPORTED_NEST_VERSIONS } from '../../../src/adapters/nestjs/module-definitions';
import { SUPPORTED_TSYRINGE_VERSIONS } from '../../../src/adapters/lazy/tsyringe/module-definitions';
import { SUPPORTED_AWILIX_VERSIONS } from '../../../src/adapters/lazy/awilix/module-definitions';
import {
  SUPPORTED_INVERSIFY_6,
  SUPPORTED_INVERSIFY_7,
  SUPPORTED_INVERSIFY_CORE,
} from '../../../src/adapters/lazy/inversify/module-definitions';

describe('isSupportedVersion', () => {
  it.each([
    [SUPPORTED_NEST_VERSIONS, '10.0.0', true],
    [SUPPORTED_NEST_VERSIONS, '12.5.1', true],
    [SUPPORTED_NEST_VERSIONS, '9.4.3', false],
    [SUPPORTED_NEST_VERSIONS, '13.0.0', false],
    [SUPPORTED_NEST_VERSIONS, '12.0.0-rc.1', false],
    [SUPPORTED_TSYRINGE_VERSIONS, '4.10.0', true],
    [SUPPORTED_TSYRINGE_VERSIONS, '5.0.0', false],
    [SUPPORTED_AWILIX_VERSIONS, '13.9.9', true],
    [SUPPORTED_INVERSIFY_6, '6.2.2', true],
    [SUPPORTED_INVERSIFY_6, '7.0.0', false],
    [SUPPORTED_INVERSIFY_7, '8.2.3', true],
    [SUPPORTED_INVERSIFY_CORE, '15.0.1', true],
    [SUPPORTED_INVERSIFY_CORE, '16.0.0', false],
  ])('%j with %s is %s', (ranges, version, expected) => {
    expect(isSupportedVersion(ranges, version)).toBe(expected);
  });

  it('reads partial bounds, exclusive and inclusive comparators and alternatives', () => {
    expect(isSupportedVersion(['>=9 <16'], '9.0.0')).toBe(true);
    expect(isSupportedVersion(['>1.2.3 <=2'], '1.2.3')).toBe(false);
    expect(isSupportedVersion(['>1.2.3 <=2'], '2.0.0')).toBe(true);
    expect(isSupportedVersion(['=1.0.0 || >=3.0.0'], '3.1.0')).toBe(true);
    expect(isSupportedVersion(['=1.0.0 || >=3.0.0'], '2.0.0')).toBe(false);
  });

  it('supports an unknown version only under *, and rejects a range outside its grammar with a RangeError', () => {
    expect(isSupportedVersion(['>=1.0.0'], undefined)).toBe(false);
    expect(isSupportedVersion(['*'], undefined)).toBe(true);
    expect(() => isSupportedVersion(['^1.2.3'], '1.2.3')).toThrow(RangeError);
  });
});

describe('packageOf', () => {
  const nm = (...parts: string[]) => path.join(path.sep, 'app', 'node_modules', ...parts);

  it('names the package of a file and its directory, scoped or not', () => {
    expect(packageOf(nm('@nestjs', 'core', 'injector', 'injector.js'))).toEqual({
      name: '@nestjs/core',
      dir: nm('@nestjs', 'core'),
    });
    expect(packageOf(nm('tsyringe', 'dist', 'cjs', 'index.js'))).toEqual({ name: 'tsyringe', dir: nm('tsyringe') });
  });

  it('takes the innermost node_modules (a nested copy, pnpm) and nothing outside node_modules', () => {
    const nested = path.join(nm('a', 'node_modules', 'awilix', 'lib', 'container.js'));
    expect(packageOf(nested)).toEqual({ name: 'awilix', dir: path.join(nm('a', 'node_modules', 'awilix')) });
    expect(packageOf(path.join(path.sep, 'app', 'src', 'main.js'))).toBeUndefined();
    expect(packageOf(nm('@scope'))).toBeUndefined();
  });
});

describe('wrapMethod', () => {
  class Service {
    greet(who: string): string {
      return `hello ${who}`;
    }
  }

  afterEach(() => unwrapMethod(Service.prototype, 'greet'));

  it('wraps with the markers OpenTelemetry recognises, keeps the method non-enumerable, and unwraps', () => {
    const original = Service.prototype.greet;
    wrapMethod(
      Service.prototype,
      'greet',
      (orig: (who: string) => string) =>
        function (this: Service, who: string) {
          return orig.call(this, who).toUpperCase();
        },
    );
    expect(new Service().greet('you')).toBe('HELLO YOU');
    expect(isWrapped(Service.prototype.greet)).toBe(true);
    expect(Object.keys(Service.prototype)).toEqual([]);
    unwrapMethod(Service.prototype, 'greet');
    expect(Service.prototype.greet).toBe(original);
  });

  it('never stacks two wrappers of its own, and leaves a later wrapper on top in place', () => {
    const wrapper = (orig: (who: string) => string) =>
      function (this: Service, who: string) {
        return `${orig.call(this, who)}!`;
      };
    wrapMethod(Service.prototype, 'greet', wrapper);
    wrapMethod(Service.prototype, 'greet', wrapper);
    expect(new Service().greet('x')).toBe('hello x!');
    const ours = Service.prototype.greet;
    const theirs = function (this: Service, who: string) {
      return ours.call(this, who) + '?';
    };
    Service.prototype.greet = theirs;
    (ours as unknown as { __unwrap(): void }).__unwrap();
    expect(Service.prototype.greet).toBe(theirs);
    Service.prototype.greet = ours;
  });

  it('says so when there is no function to wrap', () => {
    expect(() => wrapMethod({}, 'missing', (o) => o)).toThrow('no function missing to wrap');
  });
});
