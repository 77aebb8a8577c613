import { BeanGraph, type BeanKind, type BeanRole, type BeanScope } from '../../ghost/bean-graph';
import type { ClassOriginIndex } from '../../origins/class-origin';
import type { NestBeanFacts } from './entry-points';
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

/** `Symbol(foo)` → `foo`; classes by name; strings as they are. */
export function tokenName(token: unknown): string {
  if (typeof token === 'function') return token.name || '<anonymous class>';
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

function kindOf(wrapper: NestInstanceWrapper): BeanKind {
  if (wrapper.isAlias) return 'alias';
  if (wrapper.inject !== undefined && wrapper.inject !== null) return 'factory';
  if (typeof wrapper.metatype !== 'function') return 'value';
  return 'class';
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

/**
 * A framework bean is registered by a library module (or Nest's own InternalCoreModule), or is an instance
 * of a library class (ModuleRef, ApplicationConfig and their like are added to every module by Nest itself).
 */
export function isFrameworkWrapper(wrapper: NestInstanceWrapper, origins: ClassOriginIndex): boolean {
  const host = wrapper.host;
  if (host?.name === 'InternalCoreModule' || origins.originOf(host?.metatype) === 'library') return true;
  return origins.originOf(wrapper.metatype) === 'library' || origins.originOf(wrapper.token) === 'library';
}

const COLLECTIONS: ReadonlyArray<[keyof NestModule, BeanRole]> = [
  ['providers', 'provider'],
  ['controllers', 'controller'],
  ['injectables', 'injectable'],
  ['middlewares', 'middleware'],
];

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
  const modules = [...container.getModules().values()];

  for (const mod of modules) {
    const moduleClass = mod.metatype;
    const moduleName = mod.name ?? tokenName(moduleClass);
    for (const [collection, role] of COLLECTIONS) {
      const map = mod[collection] as Map<unknown, NestInstanceWrapper> | undefined;
      if (!(map instanceof Map)) continue;
      for (const wrapper of map.values()) {
        // An exported provider is the same wrapper in every importing module: one bean.
        if (!wrapper || ids.has(wrapper)) continue;
        const token = wrapper.token ?? wrapper.name;
        const isModuleClass = role === 'provider' && token === moduleClass && typeof moduleClass === 'function';
        const beanRole: BeanRole = isModuleClass ? 'module' : role;
        const seen = instantiations.get(wrapper);
        const kind = kindOf(wrapper);
        const scope = scopeOf(wrapper);
        const cls = typeof wrapper.metatype === 'function' && kind === 'class' ? wrapper.metatype : undefined;
        const framework = isFrameworkWrapper(wrapper, origins);
        let instance: unknown;
        try {
          instance = wrapper.instance;
        } catch {
          instance = undefined;
        }
        // useValue providers never pass through instantiateClass: their value exists from the start.
        const eager = seen ? seen.eager : kind === 'value' && scope === 'singleton' && instance !== undefined;
        const enhancer = typeof token === 'string' ? GLOBAL_ENHANCER_TOKEN.exec(token)?.[1] : undefined;
        // `APP_GUARD(RolesGuard)`: the token alone repeats for every global guard and says nothing.
        const displayToken = enhancer && cls ? `${enhancer}(${tokenName(cls)})` : tokenName(token);
        const id = graph.addBean({
          token: displayToken,
          module: moduleName,
          kind,
          scope,
          role: beanRole,
          framework,
          eager,
          ...(seen ? { instantiationMs: seen.ms } : {}),
          // Application classes only: where a library class lives says nothing the user can act on.
          ...(cls && !framework && cls.name ? { className: cls.name, ...sourceOf(cls, origins) } : {}),
        });
        ids.set(wrapper, id);
        wrappers.set(id, wrapper);
        facts.set(id, {
          role: beanRole,
          token,
          metatype: cls,
          instance,
          ...(enhancer ? { globalEnhancer: enhancer } : {}),
        });
      }
    }
  }

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
    for (const dep of ctorDeps ?? []) {
      const to = dep ? ids.get(dep) : undefined;
      if (to !== undefined) graph.addEdge(from, to, ctorKind);
    }
    for (const prop of propDeps ?? []) {
      const to = prop?.wrapper ? ids.get(prop.wrapper) : undefined;
      if (to !== undefined) graph.addEdge(from, to, 'property');
    }
  }
  return { graph, facts, wrappers };
}

function sourceOf(cls: unknown, origins: ClassOriginIndex): { source?: string } {
  const file = origins.fileOf(cls);
  return file !== undefined ? { source: file } : {};
}
