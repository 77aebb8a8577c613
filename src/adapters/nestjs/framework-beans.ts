/**
 * Whose bean a Nest wrapper is, and what kind: the questions Phase 2 asks of every bean while the container
 * starts (`kindOf`, `isCoreProvider`), kept apart from the container's reader (./container-reader.ts), which
 * the analysis loads after ready. Loading the reader, the entry-point classifier and the bean graph before
 * ready cost ~6 M instructions of every Nest start (docs/benchmarks.md, issue #46); nothing here imports a
 * module at run time.
 */
import type { BeanKind } from '../../ghost/analysis/bean-graph';
import type { ClassOrigin, ClassOriginIndex } from '../../ghost/origins/class-origin';
import type { NestContainer, NestInstanceWrapper, NestModule } from './nest-types';

export function kindOf(wrapper: NestInstanceWrapper): BeanKind {
  if (wrapper.isAlias) return 'alias';
  if (wrapper.inject !== undefined && wrapper.inject !== null) return 'factory';
  if (typeof wrapper.metatype !== 'function') return 'value';
  return 'class';
}

/** Providers Nest adds to every module itself, next to the module class: never the application's doing. */
const CORE_PROVIDER_NAMES: ReadonlySet<string> = new Set(['ModuleRef', 'ApplicationConfig']);

/**
 * A framework bean is one a library registered: its module (the `host`, or for middleware, which Nest gives no
 * host, the module that lists it) is Nest's InternalCoreModule or a library module, or it is one of the
 * providers Nest adds to every module. Who registered it decides, not where its class comes from: a library
 * class that the application lists in its own module's `providers` (`providers: [ConfigService]`) is the
 * application's bean, and a candidate like any other when nothing uses it.
 *
 * A module class that no module exports and no decorator recorded is one a framework built at run time to
 * host a plugin's beans (Vendure's `…DynamicShopModule` holds a plugin's GraphQL resolvers and imports the
 * plugin): it speaks for the plugin it imports. When one of its imports is the application's, so are its
 * beans; otherwise the module class itself is the framework's when it imports a library module, and each
 * other bean's class tells whose it is.
 */
export function isFrameworkWrapper(
  wrapper: NestInstanceWrapper,
  origins: ClassOriginIndex,
  listedIn?: NestModule,
): boolean {
  const host = wrapper.host ?? listedIn;
  // Without a module (not seen on Nest 10-12) the class's origin is the only signal left.
  if (host === undefined || host === null) return isLibraryClass(wrapper, origins);
  if (host.name === 'InternalCoreModule') return true;
  const hostOrigin = origins.originOf(host.metatype);
  if (hostOrigin === 'library') return true;
  if (hostOrigin === 'unknown') {
    const imported = importedOrigins(host, origins);
    if (!imported.has('app')) {
      return wrapper.token === host.metatype ? imported.has('library') : isLibraryClass(wrapper, origins);
    }
  }
  return isCoreProvider(wrapper.token, origins);
}

/** Whether `token` is one of the providers Nest adds to every module itself (`ModuleRef`, `ApplicationConfig`). */
export function isCoreProvider(token: unknown, origins: ClassOriginIndex): boolean {
  return typeof token === 'function' && CORE_PROVIDER_NAMES.has(token.name) && origins.originOf(token) === 'library';
}

function isLibraryClass(wrapper: NestInstanceWrapper, origins: ClassOriginIndex): boolean {
  return origins.originOf(wrapper.metatype) === 'library' || origins.originOf(wrapper.token) === 'library';
}

/**
 * The origins of the module classes `host` imports itself: the global modules (InternalCoreModule, every
 * `@Global()` module of the application or a library), which Nest binds into every module's imports, say
 * nothing of where `host` comes from.
 */
function importedOrigins(host: NestModule, origins: ClassOriginIndex): Set<ClassOrigin> {
  const found = new Set<ClassOrigin>();
  const imports = host.imports;
  if (!(imports instanceof Set)) return found;
  for (const imported of imports) {
    if (imported?.isGlobal === true || imported?.name === 'InternalCoreModule') continue;
    found.add(origins.originOf(imported?.metatype));
  }
  return found;
}

/**
 * Whether `origins` already knows every origin {@link isFrameworkWrapper} asks for in `container`: each
 * module's class (recorded as it was decorated, or from a hooked package's exports) and the core providers
 * Nest adds to every module. When it does, naming the beans needs no scan of `require.cache`.
 */
export function frameworkOriginsKnown(container: NestContainer, origins: ClassOriginIndex): boolean {
  for (const mod of container.getModules().values()) {
    if (mod.name !== 'InternalCoreModule' && !origins.knows(mod.metatype)) return false;
    const providers = mod.providers;
    if (!(providers instanceof Map)) continue;
    for (const token of providers.keys()) {
      if (typeof token === 'function' && CORE_PROVIDER_NAMES.has(token.name) && !origins.knows(token)) return false;
    }
  }
  return true;
}
