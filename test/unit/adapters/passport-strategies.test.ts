import { PassportStrategies, type PassportBeanFacts } from '../../../src/adapters/nestjs/passport';

// The rule's logic on the shapes @nestjs/passport gives it (the real package runs end to end in
// test/e2e/precision.test.ts): AuthGuard memoised by its first argument, classes declared `MixinAuthGuard`,
// strategies registered with a passport instance under their names.

function passportPackage() {
  const registry: Record<string, unknown> = {};
  const passport = { _strategies: registry };
  const cache = new Map<string, Function>();
  const AuthGuard = (type?: unknown): Function => {
    const key = type === undefined ? 'default' : String(type);
    let cls = cache.get(key);
    if (!cls) {
      cls = class MixinAuthGuard {};
      cache.set(key, cls);
    }
    return cls;
  };
  class Strategy {
    constructor(name: string) {
      registry[name] = this;
    }
    getPassportInstance(): typeof passport {
      return passport;
    }
  }
  const AuthModuleOptions = class AuthModuleOptions {};
  return { AuthGuard, Strategy, AuthModuleOptions };
}

const bean = (
  instance: unknown,
  metatype: unknown = (instance as object).constructor,
  token: unknown = metatype,
): PassportBeanFacts => ({
  token,
  metatype,
  instance,
});

describe('passport strategies no guard uses', () => {
  it('a strategy is unused when no guard class in the container is AuthGuard(its name) or extends it', () => {
    const pkg = passportPackage();
    const strategies = new PassportStrategies();
    strategies.packageLoaded(pkg);
    const jwt = new pkg.Strategy('jwt');
    const anonymous = new pkg.Strategy('anonymous');
    class JwtAuthGuard extends (pkg.AuthGuard('jwt') as new () => object) {}
    const unused = strategies.unused([bean(jwt), bean(anonymous), bean(new JwtAuthGuard())]);
    expect(unused).toEqual(new Set([anonymous]));
  });

  it('AuthGuard() counts the default strategy of PassportModule.register', () => {
    const pkg = passportPackage();
    const strategies = new PassportStrategies();
    strategies.packageLoaded(pkg);
    const local = new pkg.Strategy('local');
    const Default = pkg.AuthGuard() as new () => object;
    const options = bean({ defaultStrategy: 'local' }, undefined, pkg.AuthModuleOptions);
    expect(strategies.unused([bean(local), bean(new Default()), options])).toEqual(new Set());
    // Without the options bean the default cannot be read: no verdict at all.
    expect(strategies.unused([bean(local), bean(new Default())])).toBeUndefined();
  });

  it('says nothing when a guard authenticates with names it cannot read, or AuthGuard was never seen', () => {
    const pkg = passportPackage();
    const strategies = new PassportStrategies();
    const jwt = new pkg.Strategy('jwt');
    expect(strategies.unused([bean(jwt)])).toBeUndefined();
    strategies.packageLoaded(pkg);
    const Both = pkg.AuthGuard(['jwt', 'anonymous']) as new () => object;
    expect(strategies.unused([bean(jwt), bean(new Both())])).toBeUndefined();
  });

  it('no strategies, nothing to say', () => {
    expect(new PassportStrategies().unused([bean(new (class Service {})())])).toEqual(new Set());
  });
});
