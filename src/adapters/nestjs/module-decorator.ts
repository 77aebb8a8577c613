/**
 * Where each `@Module()` class is defined, read when the decorator is applied, so that Phase 2 tells a
 * library's modules from the application's before the first instance exists without scanning `require.cache`
 * on the application's boot path (15 ms on 1,500 modules, more on real applications; the scan still runs,
 * off the path, with the rest of the analysis).
 *
 * Usually the code that calls `Module(...)` is the file that declares the class (TypeScript, SWC and Babel all
 * evaluate a decorator's factory there). Plugin frameworks break that: Vendure's `@VendurePlugin()` calls
 * `Module()` from inside `@vendure/core` when it is applied, so the caller is the library for the
 * application's own plugins as much as for the framework's. Then the class is defined by the module whose
 * evaluation applied the decorator, the innermost frame of a module still loading, provided that module's
 * source declares a class of that name: a library factory the application calls while it loads
 * (`@nestjs/observe`'s `createObserveModule()`) decorates a class of its own, and the library stays its origin.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { callSites } from '../../ghost/origins/call-sites';
import { isLibraryFile, type ClassOriginIndex } from '../../ghost/origins/class-origin';

type Decorator = (...args: unknown[]) => unknown;
type ModuleFactory = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Frames read when a library calls `Module()` for its own decorator. Vendure 3 with reflect-metadata's
 * `Reflect.decorate` needs six (Nest's decorator, the plugin decorator, two of reflect-metadata, `__decorate`,
 * the plugin's file); the rest is room for other frameworks' helpers.
 */
const LIBRARY_DECORATOR_DEPTH = 16;

/**
 * Wraps `@nestjs/common`'s `Module` decorator factory: Nest's own factory runs first and unchanged (it
 * validates the metadata and throws as before); the decorator it returns records its target's file in
 * `origins`, then decorates exactly as Nest's does.
 */
export function wrapModuleDecorator(original: ModuleFactory, origins: ClassOriginIndex): ModuleFactory {
  return function Module(this: unknown, ...args: unknown[]): unknown {
    const decorate = Reflect.apply(original, this, args);
    if (typeof decorate !== 'function') return decorate;
    // Undefined for code without a file (eval): nothing is recorded then.
    const caller = callSites(Module, 1)[0]?.getFileName() ?? undefined;
    if (caller === undefined) return decorate;
    const libraryCaller = isLibraryFile(caller);
    return function decorateModule(this: unknown, ...targetArgs: unknown[]): unknown {
      try {
        // Read while the decorator is applied: that stack holds the module that defines the class.
        const target = targetArgs[0];
        const file = libraryCaller ? definingModule(decorateModule, caller, target) : caller;
        if (file !== undefined) origins.recordDefinition(target, file);
      } catch {
        /* the application's decorator must never fail because of us */
      }
      return Reflect.apply(decorate as Decorator, this, targetArgs);
    };
  };
}

/**
 * The file of the innermost module on the stack that is still being evaluated: a CommonJS module whose
 * `require.cache` entry is not `loaded` yet, or an ES module's body (a `file:` URL in a frame with no function
 * name, not awaited) other than the library's decorator itself. Undefined when the class is decorated after every module on the stack has loaded (a framework
 * building a module class at run time): the analysis's `require.cache` scan answers for it then, from the
 * module that exports it.
 */
function definingModule(below: Function, decoratorFile: string, target: unknown): string | undefined {
  const cache = require.cache;
  for (const site of callSites(below, LIBRARY_DECORATOR_DEPTH)) {
    // An awaited caller is no module evaluating: V8 lists a loaded ES module's frames as async ones.
    if (site.isAsync()) continue;
    const file = site.getFileName();
    if (file === undefined || file === null || file.startsWith('node:')) continue;
    // An ES module has no `loaded` flag: its body (no function name) is what evaluates it.
    const loading = file.startsWith('file:')
      ? file !== decoratorFile && !site.getFunctionName()
      : cache[file]?.loaded === false;
    if (!loading) continue;
    return isLibraryFile(file) || declaresClass(file, target) ? file : decoratorFile;
  }
  return undefined;
}

/**
 * A class name as JavaScript allows it, built at its first use: V8 checks a regular expression literal when it
 * parses the module, and a `\p{L}` class makes it build ICU's set of every letter, on every start whether or
 * not a plugin class is ever checked (2-3 M instructions of the Nest app's Phase 1, counted side by side).
 */
let identifier: RegExp | undefined;

/**
 * Whether the source of `file` declares a class named as `target` is (`class GreetingPlugin`, in TypeScript as
 * in what a compiler made of it). Read only when a library's decorator is applied while an application module
 * loads: once per plugin class. An unreadable source gives the application the benefit of the doubt.
 */
function declaresClass(file: string, target: unknown): boolean {
  const name = typeof target === 'function' ? target.name : '';
  if (!(identifier ??= new RegExp('^[\\p{L}_$][\\p{L}\\p{N}_$]*$', 'u')).test(name)) return false;
  let source: string;
  try {
    source = fs.readFileSync(file.startsWith('file:') ? fileURLToPath(file) : file, 'utf8');
  } catch {
    return true;
  }
  // Not `\\b` after the name: a name may end in `$`, which is no word character.
  return new RegExp(`\\bclass\\s+${name.replace(/\$/g, '\\$')}(?![\\p{L}\\p{N}_$])`, 'u').test(source);
}
