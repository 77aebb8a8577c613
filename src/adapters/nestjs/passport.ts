/**
 * Passport strategies no guard uses. A strategy registers itself with passport under a name
 * (`PassportStrategy(Strategy, 'anonymous')`) and is alive only if some guard authenticates with that name
 * (`AuthGuard('anonymous')`, or a guard class extending it). The start-up rules keep every strategy as an entry
 * point (passport collects it through its base class); this module tells which of them no guard names, so
 * they can be candidates instead — and says nothing when it cannot be sure.
 *
 * The guard side: `AuthGuard` of `@nestjs/passport` is memoised by its argument, so `AuthGuard(name)` returns
 * the very class the application's `AuthGuard(name)` made, if it made one. The reference to `AuthGuard` comes
 * from the package's exports as the application loads it (read, never patched).
 */
import { originalOf } from '../../ghost/tracking/originals';
import { safeLog } from '../../shared/logger';
import { dataProperty, inspectable } from './inert-read';
import { className } from './names';

/** The part of a `@nestjs/passport` strategy instance this module reads. */
interface StrategyInstance {
  getPassportInstance(): { _strategies?: Record<string, unknown> };
}

/** What the analysis knows of one bean. */
export interface PassportBeanFacts {
  readonly token: unknown;
  readonly metatype: unknown;
  readonly instance: unknown;
}

/**
 * The strategy's `getPassportInstance` when `instance` is a `@nestjs/passport` strategy. Every bean of the
 * container is asked, library ones included, so the question runs no getter and no Proxy trap.
 */
function passportInstanceGetter(instance: unknown): StrategyInstance['getPassportInstance'] | undefined {
  if (typeof instance !== 'object' || instance === null) return undefined;
  const method = dataProperty(instance, 'getPassportInstance');
  return typeof method === 'function' ? (method as StrategyInstance['getPassportInstance']) : undefined;
}

/** The class and every class it extends. */
function lineage(cls: unknown, into: Set<unknown>): void {
  for (let c = cls; typeof c === 'function' && c !== Function.prototype && inspectable(c); c = Object.getPrototypeOf(c))
    into.add(c);
}

export class PassportStrategies {
  private authGuard: ((type?: unknown) => unknown) | undefined;

  /** Called with `@nestjs/passport`'s exports when the application loads the package. */
  packageLoaded(exports: unknown): void {
    const guard = (exports as { AuthGuard?: unknown } | undefined)?.AuthGuard;
    if (typeof guard === 'function') this.authGuard = guard as (type?: unknown) => unknown;
  }

  /**
   * The strategy instances among `beans` whose every registered name no guard among `beans` authenticates
   * with. Undefined when that cannot be told for certain: `AuthGuard` never seen, a strategy whose name is
   * unknown, a passport guard that is none of `AuthGuard(name)` (an array of names, or another copy of the
   * package), or `AuthGuard()` with no default strategy to read.
   */
  unused(beans: Iterable<PassportBeanFacts>): Set<object> | undefined {
    const all = [...beans];
    const strategies = new Map<object, string[]>();
    for (const { instance } of all) {
      const getPassportInstance = passportInstanceGetter(instance);
      if (getPassportInstance === undefined) continue;
      // Through the original: the analysis asking must not count as the application touching the strategy.
      const registry = originalOf(getPassportInstance).call(instance)?._strategies ?? {};
      const names = Object.keys(registry).filter((name) => registry[name] === instance);
      if (names.length === 0) return undefined;
      strategies.set(instance as object, names);
    }
    if (strategies.size === 0) return new Set();
    const authGuard = this.authGuard;
    if (authGuard === undefined) return undefined;

    const present = new Set<unknown>();
    for (const { metatype, instance } of all) {
      lineage(metatype, present);
      if (typeof instance === 'object' && instance !== null) lineage(dataProperty(instance, 'constructor'), present);
    }

    const identified = new Set<unknown>();
    const used = new Set<string>();
    for (const names of strategies.values()) {
      for (const name of names) {
        // Memoised: the application's own class for this name when it made one, else a new, unused one.
        const guard = authGuard(name);
        identified.add(guard);
        if (present.has(guard)) used.add(name);
      }
    }
    const byDefault = authGuard();
    identified.add(byDefault);
    if (present.has(byDefault)) {
      const defaults = this.defaultStrategies(all);
      if (defaults === undefined) return undefined;
      for (const name of defaults) used.add(name);
    }
    for (const cls of present) {
      if (typeof cls === 'function' && className(cls) === 'MixinAuthGuard' && !identified.has(cls)) {
        safeLog(
          'debug',
          'a passport guard authenticates with names this analysis cannot read; every strategy stays an entry point',
        );
        return undefined;
      }
    }

    const unused = new Set<object>();
    for (const [strategy, names] of strategies) if (names.every((name) => !used.has(name))) unused.add(strategy);
    return unused;
  }

  /** `defaultStrategy` of `PassportModule.register(...)`, from its options bean. */
  private defaultStrategies(beans: readonly PassportBeanFacts[]): string[] | undefined {
    for (const { token, instance } of beans) {
      // PassportModule.register(options) provides the options object under the AuthModuleOptions class.
      if (typeof token !== 'function' || token.name !== 'AuthModuleOptions') continue;
      const value = dataProperty(instance, 'defaultStrategy');
      if (typeof value === 'string') return [value];
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
    }
    return undefined;
  }
}
