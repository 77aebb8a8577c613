import {
  BeanGraph,
  uniqueBeanNames,
  type BeanKind,
  type BeanRole,
  type BeanScope,
} from '../../ghost/analysis/bean-graph';
import type { ClassOriginIndex } from '../../ghost/origins/class-origin';
import {
  applicationPath,
  applicationRoots,
  looksMangled,
  sharedLibraryIn,
  type ApplicationRoots,
} from '../../ghost/origins/declared-class';
import { safeLog } from '../../shared/logger';
import type { NestBeanFacts } from './entry-points';
import { dataProperty, inspectable } from './inert-read';
import { isFrameworkWrapper, kindOf } from './framework-beans';
import { className, nestTokenName } from './names';
import {
  GLOBAL_ENHANCER_TOKEN,
  NEST_SCOPE,
  type NestContainer,
  type NestInstanceWrapper,
  type NestModule,
} from './nest-types';

/** What the injector hook saw of one wrapper's creation. */
export interface Instantiation {
  /** Created in the static context while the container bootstrapped. */
  readonly eager: boolean;
  readonly ms: number;
}

export interface ContainerSnapshot {
  readonly graph: BeanGraph;
  /** Per bean id: what the entry-point classifier reads. */
  readonly facts: ReadonlyMap<number, NestBeanFacts>;
  /** Per bean id: the wrapper, for Phase 2 bookkeeping. */
  readonly wrappers: ReadonlyMap<number, NestInstanceWrapper>;
}

function scopeOf(wrapper: NestInstanceWrapper): BeanScope {
  if (wrapper.scope === NEST_SCOPE.TRANSIENT) return 'transient';
  if (wrapper.scope === NEST_SCOPE.REQUEST) return 'request';
  // A singleton that depends on a request-scoped provider is implicitly request-scoped in Nest.
  try {
    if (typeof wrapper.isDependencyTreeStatic === 'function' && !wrapper.isDependencyTreeStatic()) return 'request';
  } catch {
    /* keep the declared scope */
  }
  return 'singleton';
}

const COLLECTIONS: ReadonlyArray<[keyof NestModule, BeanRole]> = [
  ['providers', 'provider'],
  ['controllers', 'controller'],
  ['injectables', 'injectable'],
  ['middlewares', 'middleware'],
];

/** One wrapper as the reports name it: its token's display name and its module's name. */
interface WrapperVisit {
  readonly wrapper: NestInstanceWrapper;
  /** The module whose collection lists the wrapper. */
  readonly listedIn: NestModule;
  readonly role: BeanRole;
  readonly moduleName: string;
  readonly token: unknown;
  readonly kind: BeanKind;
  /** The class the container instantiates, for class providers. */
  readonly cls: Function | undefined;
  /** `APP_GUARD` and its like, for a global enhancer's random token. */
  readonly enhancer: string | undefined;
  readonly displayToken: string;
}

/** A module as the reports name it: Nest's name, its class's; a minified build's `_3` through the source map. */
function moduleNameOf(mod: NestModule): string {
  const moduleClass = mod.metatype;
  return typeof moduleClass === 'function' && (mod.name === undefined || looksMangled(mod.name))
    ? className(moduleClass)
    : (mod.name ?? nestTokenName(moduleClass));
}

/**
 * Where each module is declared, for the modules whose name another module class shares (a monorepo's two
 * `CheckInModule`s read `CheckInModule/CheckInModule` and `…#2`, nothing telling which is which).
 */
function clashingModuleSources(container: NestContainer, origins: ClassOriginIndex): Map<NestModule, string> {
  const byName = new Map<string, Set<unknown>>();
  const modules = [...container.getModules().values()];
  for (const mod of modules) {
    const name = moduleNameOf(mod);
    const classes = byName.get(name) ?? new Set();
    classes.add(mod.metatype);
    byName.set(name, classes);
  }
  const out = new Map<NestModule, string>();
  for (const mod of modules) {
    if ((byName.get(moduleNameOf(mod))?.size ?? 0) < 2) continue;
    const file = origins.fileOf(mod.metatype);
    if (file !== undefined) out.set(mod, file);
  }
  return out;
}

let appRoots: ApplicationRoots | null | undefined;

/** The application's own source roots (see {@link applicationRoots}), read once per process. */
function ownRoot(): ApplicationRoots | undefined {
  if (appRoots === undefined) appRoots = applicationRoots() ?? null;
  return appRoots ?? undefined;
}

/**
 * Every wrapper of the container once, in the order the graph numbers beans: modules in the container's order,
 * then providers, controllers, injectables and middleware. An exported provider is the same wrapper in every
 * importing module: one bean.
 */
function visitWrappers(container: NestContainer, visit: (v: WrapperVisit) => void): void {
  const seen = new Set<NestInstanceWrapper>();
  for (const mod of container.getModules().values()) {
    const moduleClass = mod.metatype;
    const moduleName = moduleNameOf(mod);
    for (const [collection, role] of COLLECTIONS) {
      const map = mod[collection] as Map<unknown, NestInstanceWrapper> | undefined;
      if (!(map instanceof Map)) continue;
      for (const wrapper of map.values()) {
        if (!wrapper || seen.has(wrapper)) continue;
        seen.add(wrapper);
        const token = wrapper.token ?? wrapper.name;
        const isModuleClass = role === 'provider' && token === moduleClass && typeof moduleClass === 'function';
        const kind = kindOf(wrapper);
        const cls = typeof wrapper.metatype === 'function' && kind === 'class' ? wrapper.metatype : undefined;
        const enhancer = typeof token === 'string' ? GLOBAL_ENHANCER_TOKEN.exec(token)?.[1] : undefined;
        // `APP_GUARD(RolesGuard)`: the token alone repeats for every global guard and says nothing. An alias
        // (`{ provide: APP_GUARD, useExisting: RolesGuard }`) is named by its target, known from the scan on.
        const enhanced = enhancer ? (cls ?? (kind === 'alias' ? aliasTarget(wrapper) : undefined)) : undefined;
        const displayToken =
          enhancer && enhanced !== undefined ? `${enhancer}(${nestTokenName(enhanced)})` : nestTokenName(token);
        visit({
          wrapper,
          listedIn: mod,
          role: isModuleClass ? 'module' : role,
          moduleName,
          token,
          kind,
          cls,
          enhancer,
          displayToken,
        });
      }
    }
  }
}

/** The token a `useExisting` alias stands for: Nest registers it as a factory injecting that one token. */
function aliasTarget(wrapper: NestInstanceWrapper): unknown {
  const inject = wrapper.inject;
  return Array.isArray(inject) && inject.length === 1 ? inject[0] : undefined;
}

/**
 * The reports' name of every wrapper and whether a library registered it, without reading the rest of the
 * graph: what Phase 2 needs before the first instance exists, at a fraction of {@link readContainer}'s cost.
 */
export function readBeanNames(
  container: NestContainer,
  origins: ClassOriginIndex,
): Map<NestInstanceWrapper, { readonly name: string; readonly framework: boolean }> {
  const visits: WrapperVisit[] = [];
  visitWrappers(container, (v) => visits.push(v));
  const names = uniqueBeanNames(
    visits.map((v) => ({ token: v.displayToken, module: v.moduleName, namedLast: v.role === 'middleware' })),
  );
  const out = new Map<NestInstanceWrapper, { name: string; framework: boolean }>();
  visits.forEach((v, i) =>
    out.set(v.wrapper, { name: names[i], framework: isFrameworkWrapper(v.wrapper, origins, v.listedIn) }),
  );
  return out;
}

/**
 * Reads the finished container into a framework-neutral graph. Edges come from Nest's own resolution
 * metadata (constructor parameters, `@Inject()` properties, factory `inject` lists, `useExisting` aliases),
 * which the injector filled while it created each instance.
 */
export function readContainer(
  container: NestContainer,
  instantiations: WeakMap<object, Instantiation>,
  origins: ClassOriginIndex,
): ContainerSnapshot {
  const graph = new BeanGraph();
  const ids = new Map<NestInstanceWrapper, number>();
  const facts = new Map<number, NestBeanFacts>();
  const wrappers = new Map<number, NestInstanceWrapper>();

  const moduleSources = clashingModuleSources(container, origins);
  const root = ownRoot();
  visitWrappers(container, ({ wrapper, listedIn, role, moduleName, token, kind, cls, enhancer, displayToken }) => {
    const seen = instantiations.get(wrapper);
    const scope = scopeOf(wrapper);
    const framework = isFrameworkWrapper(wrapper, origins, listedIn);
    let instance: unknown;
    try {
      instance = wrapper.instance;
    } catch {
      instance = undefined;
    }
    // useValue providers never pass through instantiateClass: their value exists from the start. Nor does a
    // middleware's creation fall inside the bootstrap: Nest creates the middleware `configure()` applies in
    // `init()` (registerModules → MiddlewareResolver → Injector.loadMiddleware), after createInstancesOfDependencies
    // and before ready, each a singleton whose instance is there when the analysis reads it (issue #44: a real
    // monorepo's two applied middleware read "not created at start-up").
    const eager = seen
      ? seen.eager
      : (kind === 'value' || role === 'middleware') && scope === 'singleton' && instance !== undefined;
    const id = graph.addBean({
      token: displayToken,
      module: moduleName,
      kind,
      scope,
      role,
      framework,
      eager,
      // Nest adds middleware in init(), after the pre-read named (and Phase 2 tracked) every other bean.
      ...(role === 'middleware' ? { namedLast: true } : {}),
      ...(seen ? { instantiationMs: seen.ms } : {}),
      // Application classes only: where a library class lives says nothing the user can act on.
      ...(cls && !framework && cls.name
        ? applicationClassOf(cls, origins, root)
        : kind === 'factory' && !framework
          ? factoryClassOf(instance, origins, root)
          : {}),
      ...(moduleSources.has(listedIn) ? { moduleSource: moduleSources.get(listedIn) } : {}),
    });
    ids.set(wrapper, id);
    wrappers.set(id, wrapper);
    facts.set(id, {
      role,
      token,
      metatype: cls,
      instance,
      ...(enhancer ? { globalEnhancer: enhancer } : {}),
      ...(kind === 'alias' ? { alias: true } : {}),
    });
  });

  // Nest records a dependency on a `useExisting` alias as one on the alias's target: the declared token says
  // which of the two the class asked for, so that an injected alias is not taken for an unused one.
  const aliasesOf = new Map<NestInstanceWrapper, Array<{ token: unknown; id: number }>>();
  for (const [wrapper, id] of ids) {
    if (graph.bean(id).kind !== 'alias') continue;
    const target = safeCall(() => wrapper.getCtorMetadata?.()?.[0]);
    if (target) aliasesOf.set(target, [...(aliasesOf.get(target) ?? []), { token: wrapper.token, id }]);
  }
  const edgeTo = (dep: NestInstanceWrapper, declared: unknown): number | undefined => {
    if (declared !== undefined && declared !== dep.token) {
      const alias = aliasesOf.get(dep)?.find((a) => a.token === declared);
      if (alias !== undefined) return alias.id;
    }
    return ids.get(dep);
  };

  for (const [wrapper, from] of ids) {
    const kind = graph.bean(from).kind;
    const ctorKind = kind === 'alias' ? 'alias' : kind === 'factory' ? 'factory-inject' : 'constructor';
    let ctorDeps: ReadonlyArray<NestInstanceWrapper | undefined> | undefined;
    let propDeps: ReadonlyArray<{ key: unknown; wrapper: NestInstanceWrapper | undefined }> | undefined;
    try {
      ctorDeps = wrapper.getCtorMetadata?.();
      propDeps = wrapper.getPropertiesMetadata?.();
    } catch {
      continue;
    }
    const declaredCtor =
      kind === 'alias' || aliasesOf.size === 0 ? undefined : safeCall(() => declaredCtorTokens(wrapper));
    (ctorDeps ?? []).forEach((dep, i) => {
      const to = dep ? edgeTo(dep, declaredCtor?.[i]) : undefined;
      if (to !== undefined) graph.addEdge(from, to, ctorKind);
    });
    const declaredProps =
      aliasesOf.size === 0 || !propDeps?.length ? undefined : safeCall(() => declaredPropertyTokens(wrapper));
    for (const prop of propDeps ?? []) {
      const to = prop?.wrapper ? edgeTo(prop.wrapper, declaredProps?.get(prop.key)) : undefined;
      if (to !== undefined) graph.addEdge(from, to, 'property');
    }
  }
  return { graph, facts, wrappers };
}

let mangledWarned = false;

/**
 * Says once per process, with the fix, when the application's class names look minified and no source map gave
 * them back: a production build through Terser named a real monorepo's beans `C3` and its modules `_3`, with no
 * word (issue #44). Three such names, or half of the application's classes, is a minified build, not chance.
 */
export function warnIfMangled(graph: BeanGraph): void {
  if (mangledWarned) return;
  let classes = 0;
  const mangled: string[] = [];
  for (const bean of graph.beans()) {
    if (bean.framework || bean.className === undefined) continue;
    classes += 1;
    if (looksMangled(bean.className)) mangled.push(bean.className);
  }
  if (mangled.length < 3 && (mangled.length === 0 || mangled.length * 2 < classes)) return;
  mangledWarned = true;
  safeLog(
    'warn',
    `${mangled.length} of ${classes} application classes have minified names (${mangled.slice(0, 3).join(', ')}…) ` +
      'and no source map beside the bundle gives theirs back: the reports name them as they run. Build with ' +
      "Terser's keep_classnames: true (webpack: TerserPlugin({ terserOptions: { keep_classnames: true } }); " +
      'esbuild: --keep-names), or ship the bundle with its .map',
  );
}

/**
 * A factory provider's class and source, from the instance its factory returned: where the class of what it
 * made is declared, the file a reader opens to judge the bean (5 of a real monorepo's 20 dead registrations were
 * `useFactory` ones returning the application's own classes, and had no `source`; issue #44). The factory's own
 * location is not read: V8 gives a function's position only through the inspector, and a factory's text is
 * usually one line in a module's `providers` that says less than the class it builds. Read after ready, with
 * the instance in hand: one prototype read, no Proxy trap or getter run (inert-read.ts). A library's class, a
 * builtin (a Map, a promise's value) or a plain object give nothing.
 */
function factoryClassOf(
  instance: unknown,
  origins: ClassOriginIndex,
  root: ApplicationRoots | undefined,
): { className?: string; source?: string; sharedLibrary?: string } {
  if (typeof instance !== 'object' || !inspectable(instance)) return {};
  const made = dataProperty(instance, 'constructor');
  if (typeof made !== 'function' || made === Object || !inspectable(made) || !made.name) return {};
  const origin = origins.originOf(made);
  if (origin === 'library' || origin === 'builtin') return {};
  const found = sourceOf(made, origins, root);
  return found.source !== undefined || origin === 'app' ? { className: className(made), ...found } : {};
}

/** A class bean's name, file and whether the class is a library's, read from the class the application declared. */
function applicationClassOf(
  cls: Function,
  origins: ClassOriginIndex,
  root: ApplicationRoots | undefined,
): { className: string; source?: string; sharedLibrary?: string; libraryClass?: true } {
  const declared = declaredClassOf(cls, origins);
  return { className: className(cls), ...sourceOf(declared, origins, root), ...libraryClassOf(declared, origins) };
}

/**
 * The class the application declared for `cls`: `cls` itself, or, when Nest stands a subclass of its own under the
 * same name in its place (a middleware applied with `.exclude()`: `class extends LoggingMiddleware`, renamed), the
 * parent the origins know. Otherwise the bean would stand at its registration, its file "not found".
 */
function declaredClassOf(cls: unknown, origins: ClassOriginIndex): unknown {
  if (typeof cls !== 'function' || origins.knows(cls)) return cls;
  const parent: unknown = Object.getPrototypeOf(cls);
  return typeof parent === 'function' && parent.name === cls.name && origins.knows(parent) ? parent : cls;
}

/**
 * A library's (or Node's) class the application lists itself (`providers: [Logger]`): `libraryClass`, so that a
 * finding says to remove the registration, never to delete a class. A class of unknown origin (one no module exports)
 * is not one, though neither has a file.
 */
function libraryClassOf(cls: unknown, origins: ClassOriginIndex): { libraryClass?: true } {
  const origin = origins.originOf(cls);
  return origin === 'library' || origin === 'builtin' ? { libraryClass: true } : {};
}

function sourceOf(
  cls: unknown,
  origins: ClassOriginIndex,
  root: ApplicationRoots | undefined,
): { source?: string; sharedLibrary?: string } {
  const file = origins.sourceFileOf(cls);
  if (file === undefined) return {};
  const library = root === undefined ? undefined : sharedLibraryIn(file, root);
  return { source: applicationPath(file), ...(library !== undefined ? { sharedLibrary: library } : {}) };
}

function safeCall<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

type ReflectWithMetadata = typeof Reflect & { getMetadata?: (key: unknown, target: object) => unknown };

function metadata(key: string, target: object): unknown {
  const get = (Reflect as ReflectWithMetadata).getMetadata;
  return typeof get === 'function' ? get(key, target) : undefined;
}

/**
 * The tokens a bean asked for, by constructor position: a factory's `inject` list, or a class's parameter
 * types overlaid with its `@Inject(token)` parameters (the `self:paramtypes` metadata Nest reads itself).
 */
function declaredCtorTokens(wrapper: NestInstanceWrapper): unknown[] | undefined {
  if (Array.isArray(wrapper.inject)) {
    return wrapper.inject.map((t) =>
      t !== null && typeof t === 'object' && 'token' in t ? (t as { token: unknown }).token : t,
    );
  }
  const cls = wrapper.metatype;
  if (typeof cls !== 'function') return undefined;
  const types = [...((metadata('design:paramtypes', cls) as unknown[] | undefined) ?? [])];
  for (const entry of (metadata('self:paramtypes', cls) as Array<{ index: number; param: unknown }> | undefined) ??
    []) {
    types[entry.index] = entry.param;
  }
  return types;
}

/** The tokens of a class's `@Inject()` properties, by property key. */
function declaredPropertyTokens(wrapper: NestInstanceWrapper): Map<unknown, unknown> | undefined {
  const cls = wrapper.metatype;
  if (typeof cls !== 'function') return undefined;
  const entries =
    (metadata('self:properties_metadata', cls) as Array<{ key: unknown; type: unknown }> | undefined) ?? [];
  return new Map(entries.map((e) => [e.key, e.type]));
}
