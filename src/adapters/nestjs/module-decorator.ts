/**
 * Where each `@Module()` class is defined, read when the decorator is applied: the code that calls
 * `Module(...)` is the file that declares the class (TypeScript, SWC and Babel all evaluate a decorator's
 * factory there). With it, Phase 2 tells a library's modules from the application's before the first
 * instance exists without scanning `require.cache` on the application's boot path (15 ms on 1,500 modules,
 * more on real applications; the scan still runs, off the path, with the rest of the analysis).
 */
import { callSites } from '../../origins/call-sites';
import type { ClassOriginIndex } from '../../origins/class-origin';

type Decorator = (...args: unknown[]) => unknown;
type ModuleFactory = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Wraps `@nestjs/common`'s `Module` decorator factory: Nest's own factory runs first and unchanged (it
 * validates the metadata and throws as before); the decorator it returns records its target's file in
 * `origins`, then decorates exactly as Nest's does.
 */
export function wrapModuleDecorator(original: ModuleFactory, origins: ClassOriginIndex): ModuleFactory {
  return function Module(this: unknown, ...args: unknown[]): unknown {
    const decorate = Reflect.apply(original, this, args);
    // Undefined for code without a file (eval): nothing is recorded then.
    const file = callSites(Module, 1)[0]?.getFileName() ?? undefined;
    if (file === undefined || typeof decorate !== 'function') return decorate;
    return function (this: unknown, ...targetArgs: unknown[]): unknown {
      try {
        origins.recordDefinition(targetArgs[0], file);
      } catch {
        /* the application's decorator must never fail because of us */
      }
      return Reflect.apply(decorate as Decorator, this, targetArgs);
    };
  };
}
