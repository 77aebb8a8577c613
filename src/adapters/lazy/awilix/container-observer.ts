/**
 * awilix's container, observed through its own resolver objects: `asClass`, `asFunction`, `asValue` and
 * `aliasTo` tag what they make (the tag rides along `.singleton()` and the other builders, which copy the
 * resolver), `container.register` records each registration as a binding, and each registered resolver's
 * `resolve`, which awilix calls only when it has no cached value, is wrapped until its first call: that call is
 * the binding's first resolution, and the resolutions nested in it are its dependencies (PROXY injection reads
 * them from the cradle while constructing). After its first call a resolver has its own `resolve` back.
 *
 * `container.resolve` itself is not patched: the cradle resolves through a closure that never goes through it.
 */
import type { BeanKind, BeanScope, EdgeKind } from '../../../ghost/analysis/bean-graph';
import {
  LazyContainerLedger,
  bookkeeping,
  bookkeepingFailed,
  lazyBinding,
  lazyTokenName,
  type LazyBinding,
} from '../bindings';
import type { GhostDetector } from '../../../ghost/detector';
import { awilixRouterEntryPoints } from './entry-points';

/** What the resolver factories make, as the tag on the resolver says. */
interface ResolverTag {
  readonly kind: BeanKind;
  /** The class (asClass) or function (asFunction); the target's name for aliasTo. */
  readonly target: unknown;
}

/** Enumerable, so that awilix's builders (`{ ...resolver, lifetime }`) carry it to the resolver they return. */
const TAG = Symbol('diag-instrumentation awilix resolver');

interface Resolver {
  resolve(container: unknown): unknown;
  lifetime?: string;
  [TAG]?: ResolverTag;
}

type AnyFunction = (...args: any[]) => any;

/** The wrap and unwrap the observer patches through (`src/patching/wrap.ts`). */
export interface AwilixPatcher {
  wrap(target: object, name: string, wrapper: (original: never) => unknown): void;
  unwrap(target: object, name: string): void;
}

const FACTORIES: ReadonlyArray<[name: string, kind: BeanKind]> = [
  ['asClass', 'class'],
  ['asFunction', 'factory'],
  ['asValue', 'value'],
  ['aliasTo', 'alias'],
];

export class AwilixObserver {
  private ledger: LazyContainerLedger<Resolver> | undefined;
  private version: string | undefined;
  /** Resolvers whose `resolve` is still the wrapper, with their own: put back on unpatch. */
  private readonly pending = new Map<Resolver, AnyFunction>();
  /** First resolutions in progress, innermost last: a nested one is a dependency of the one below it. */
  private readonly stack: Resolver[] = [];
  /** The resolver each registration name names (what an alias leads to). */
  private readonly byName = new Map<string | symbol, Resolver>();
  private readonly patchedExports = new Set<Record<string, unknown>>();

  constructor(private readonly detector: GhostDetector) {}

  private ensureLedger(): LazyContainerLedger<Resolver> {
    return (this.ledger ??= new LazyContainerLedger<Resolver>({
      framework: 'awilix',
      container: () => ({ name: 'awilix', ...(this.version !== undefined ? { version: this.version } : {}) }),
      detector: this.detector,
      entryPoints: (resolver) =>
        awilixRouterEntryPoints(resolver[TAG]?.kind === 'class' ? resolver[TAG].target : undefined),
      collect: () => this.collectAliases(),
    }));
  }

  /** `lib/resolvers.js` (CommonJS) or the ESM namespace: the factories tag what they make. */
  patchResolvers(exports: Record<string, unknown>, version: string | undefined, patcher: AwilixPatcher): void {
    this.version ??= version;
    for (const [name, kind] of FACTORIES) {
      if (typeof exports[name] !== 'function') continue;
      patcher.wrap(
        exports,
        name,
        (original: AnyFunction) =>
          function (this: unknown, target: unknown) {
            const resolver = Reflect.apply(original, this, arguments) as Resolver;
            if (typeof resolver === 'object' && resolver !== null && !(TAG in resolver)) {
              // An assignment, which makes the same enumerable, writable, configurable property as a
              // defineProperty through a store's inline cache: the descriptor's runtime call cost 5.7 M
              // instructions over 1,100 registrations (docs/benchmarks.md). A resolver someone froze keeps no tag.
              try {
                resolver[TAG] = { kind, target } satisfies ResolverTag;
              } catch {
                /* described as a factory, as an untagged resolver is */
              }
            }
            return resolver;
          },
      );
    }
    this.patchedExports.add(exports);
  }

  /** `lib/container.js` (CommonJS) or the ESM namespace: every container made records its registrations. */
  patchContainer(exports: Record<string, unknown>, version: string | undefined, patcher: AwilixPatcher): void {
    this.version ??= version;
    if (typeof exports.createContainer !== 'function') return;
    const observer = this;
    patcher.wrap(
      exports,
      'createContainer',
      (original: AnyFunction) =>
        function createContainer(this: unknown) {
          const container = Reflect.apply(original, this, arguments) as { register?: AnyFunction };
          bookkeeping('awilix', () => observer.observeContainer(container));
          return container;
        },
    );
    this.patchedExports.add(exports);
  }

  unpatch(patcher: AwilixPatcher): void {
    for (const exports of this.patchedExports) {
      for (const name of ['createContainer', ...FACTORIES.map(([n]) => n)]) {
        if (typeof exports[name] === 'function') patcher.unwrap(exports, name);
      }
    }
    this.patchedExports.clear();
    for (const [resolver, original] of this.pending) resolver.resolve = original as Resolver['resolve'];
    this.pending.clear();
  }

  private observeContainer(container: { register?: AnyFunction }): void {
    const register = container?.register;
    if (typeof register !== 'function') return;
    const observer = this;
    // awilix containers are plain objects: the wrapper is the container's own property, as register was
    container.register = function (this: unknown, nameOrMap: unknown, maybeResolver?: unknown) {
      const result = Reflect.apply(register, this, arguments);
      // caught inline: a closure per registration is measurable at start-up (bench/startup/instructions.js)
      try {
        if (typeof nameOrMap === 'string' || typeof nameOrMap === 'symbol') {
          observer.registered(nameOrMap, maybeResolver);
        } else if (typeof nameOrMap === 'object' && nameOrMap !== null) {
          for (const key of Reflect.ownKeys(nameOrMap))
            observer.registered(key, (nameOrMap as Record<string | symbol, unknown>)[key]);
        }
      } catch (err) {
        bookkeepingFailed('awilix', err);
      }
      return result;
    };
  }

  private registered(name: string | symbol, candidate: unknown): void {
    if (typeof candidate !== 'object' || candidate === null || typeof (candidate as Resolver).resolve !== 'function')
      return;
    const resolver = candidate as Resolver;
    const ledger = this.ensureLedger();
    this.byName.set(name, resolver);
    ledger.bind(resolver, this.binding(name, resolver));
    if (!this.pending.has(resolver)) this.wrapResolve(resolver, ledger);
  }

  private binding(name: string | symbol, resolver: Resolver): LazyBinding {
    const tag = resolver[TAG];
    const kind: BeanKind = tag?.kind ?? 'factory';
    const cls = kind === 'class' && typeof tag?.target === 'function' ? (tag.target as Function) : undefined;
    const owner = typeof tag?.target === 'function' ? (tag.target as Function) : undefined;
    return lazyBinding(
      lazyTokenName(name),
      kind,
      scopeOf(kind, resolver.lifetime),
      false,
      owner,
      cls !== undefined && cls.name !== '' ? cls.name : undefined,
    );
  }

  private wrapResolve(resolver: Resolver, ledger: LazyContainerLedger<Resolver>): void {
    const original = resolver.resolve;
    const stack = this.stack;
    const pending = this.pending;
    const wrapper = function diagFirstResolve(this: unknown, _container: unknown): unknown {
      const parent = stack[stack.length - 1];
      if (parent !== undefined) {
        try {
          ledger.dependsOn(parent, resolver, edgeKind(parent));
        } catch (err) {
          bookkeepingFailed('awilix', err);
        }
      }
      stack.push(resolver);
      let value: unknown;
      try {
        value = Reflect.apply(original, this, arguments);
      } finally {
        stack.pop();
      }
      // seen once: from now on awilix calls the resolver's own function
      if (resolver.resolve === wrapper) {
        resolver.resolve = original;
        pending.delete(resolver);
      }
      try {
        ledger.resolved(resolver, value);
      } catch (err) {
        bookkeepingFailed('awilix', err);
      }
      return value;
    };
    pending.set(resolver, original);
    resolver.resolve = wrapper;
  }

  /** At ready: each alias depends on the registration it names. */
  private collectAliases(): void {
    const ledger = this.ledger!;
    for (const resolver of this.byName.values()) {
      // One resolver whose tag cannot be read is left out, not the container's analysis.
      let tag: ResolverTag | undefined;
      try {
        tag = resolver[TAG];
      } catch (err) {
        bookkeepingFailed('awilix', err);
      }
      if (tag?.kind !== 'alias') continue;
      const target = this.byName.get(tag.target as string | symbol);
      if (target !== undefined) ledger.dependsOn(resolver, target, 'alias');
    }
  }
}

function edgeKind(parent: Resolver): EdgeKind {
  const kind = parent[TAG]?.kind;
  return kind === 'alias' ? 'alias' : kind === 'factory' ? 'factory-inject' : 'constructor';
}

/** awilix's lifetimes: SINGLETON, SCOPED (one per scope, usually a request), TRANSIENT (the default). */
function scopeOf(kind: BeanKind, lifetime: string | undefined): BeanScope {
  if (kind === 'value') return 'singleton';
  if (lifetime === 'SINGLETON') return 'singleton';
  if (lifetime === 'SCOPED') return 'request';
  return 'transient';
}
