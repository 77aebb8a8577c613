/**
 * Bean and class names as the reports print them: stable across runs and processes, so that reports compare,
 * merge across replicas, fit in a baseline and make stable metric labels.
 */
import type * as DeclaredClassModule from '../../ghost/origins/declared-class';
import { looksMangled } from '../../ghost/origins/mangled';
import { GLOBAL_ENHANCER_TOKEN } from './nest-types';

/**
 * The name Nest's `mixin()` gives the classes that `AuthGuard('jwt')`, `FileInterceptor('file')` and their like
 * build: a fresh random id per process (`uid(21)`, hex; a UUID in older releases), useless for comparing runs.
 */
const MIXIN_NAME = /^(?:[0-9a-f]{21}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
const DECLARED_CLASS_NAME = /^class\s+([A-Za-z_$][\w$]*)/;

/**
 * Whether `cls` is a class Nest's `mixin()` renamed: made at run time by a factory, almost always a library's
 * (`AuthGuard('jwt')`, `FileInterceptor('file')`, `PassportStrategy(Strategy)`), so its methods are that library's
 * code, not the application's. An application's own `mixin()` classes are taken for a library's too: their
 * methods are then left out of the findings, the safe side.
 */
export function isNestMixin(cls: Function): boolean {
  try {
    const name: unknown = cls.name;
    return typeof name === 'string' && MIXIN_NAME.test(name);
  } catch {
    return false; // a static `name` getter that throws: the application's class, whatever it is
  }
}
const fnToString = Function.prototype.toString;

/**
 * A class's name, stable across runs: for a class renamed by `mixin()`, the name its source declares
 * (`MixinAuthGuard`, `MixinInterceptor`); the graph adds `#2`, `#3` in registration order to several of one kind.
 */
export function className(cls: Function): string {
  const name = cls.name;
  if (typeof name !== 'string' || name === '') return '<anonymous class>';
  // A minified build (`C3`): the name its source gives, through the bundle's source map when there is one.
  if (looksMangled(name)) {
    // Required for a minified build's names only: the bundle's map is read after ready, never for a plain build.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const declared = require('../../ghost/origins/declared-class') as typeof DeclaredClassModule;
    return declared.originalClassName(cls) ?? name;
  }
  if (!MIXIN_NAME.test(name)) return name;
  try {
    return DECLARED_CLASS_NAME.exec(fnToString.call(cls))?.[1] ?? 'mixin';
  } catch {
    return 'mixin';
  }
}

/**
 * A Nest token as the reports name it: `Symbol(foo)` → `foo`; classes by {@link className}; strings as they are,
 * but a global enhancer's (`APP_GUARD (UUID: …)`) without its per-run UUID.
 */
export function nestTokenName(token: unknown): string {
  if (typeof token === 'function') return className(token);
  if (typeof token === 'symbol') return token.description ?? 'Symbol()';
  if (typeof token === 'string') {
    // Global enhancers get a random UUID per run; a name must be stable across runs to compare reports.
    const m = GLOBAL_ENHANCER_TOKEN.exec(token);
    return m ? m[1] : token;
  }
  try {
    return String(token);
  } catch {
    return '<unnamed>';
  }
}
