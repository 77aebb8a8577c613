/**
 * tsyringe's container, observed: every registration (`register`, `registerSingleton`, `@singleton()`,
 * `@injectable({ token })`, `@registry`) becomes a binding, every class decorated `@injectable()` one too (tsyringe
 * constructs those without registration), and `resolve` / `resolveAll` say which were handed out.
 *
 * tsyringe offers per-token interceptors (`beforeResolution`/`afterResolution`) but none for every token, and
 * resolves a class's parameters through `this.resolve`: so `resolve` on the container's prototype, shared by
 * the global container and its children, is the one place that sees every resolution.
 */
import {
  LazyContainerLedger,
  bookkeeping,
  bookkeepingFailed,
  lazyBinding,
  lazyTokenName,
  type LazyBinding,
} from '../bindings';
import type { GhostDetector } from '../../../ghost/detector';
import type { BeanKind, BeanScope } from '../../../ghost/analysis/bean-graph';
import { routingControllersEntryPoints } from './entry-points';

/** tsyringe's `Lifecycle` enum, by value. */
const LIFECYCLE_SINGLETON = 1;
const LIFECYCLE_CONTAINER_SCOPED = 3;

type Token = unknown;
type AnyFunction = (...args: unknown[]) => unknown;

interface Provider {
  useClass?: unknown;
  useValue?: unknown;
  useFactory?: unknown;
  useToken?: unknown;
}

/** What `dependency-container.js` exports: the global container and the parameters of every injectable class. */
export interface TsyringeDependencyContainerModule {
  instance?: object;
  typeInfo?: Map<Function, unknown[]>;
}

/** The wrap and unwrap the observer patches through (`src/patching/wrap.ts`). */
export interface TsyringePatcher {
  wrap(target: object, name: string, wrapper: (original: never) => unknown): void;
  unwrap(target: object, name: string): void;
}

export class TsyringeObserver {
  private ledger: LazyContainerLedger<Token> | undefined;
  private typeInfo: Map<Function, unknown[]> | undefined;
  private patched: object | undefined;
  private version: string | undefined;
  /** Token → the class its registration constructs, for edges and entry points. */
  private readonly classBindings = new Map<Token, Function>();
  /**
   * With Phase 2 off, registrations before ready are described at ready (`collect`), and the tokens resolved before
   * it told then: a description per registration and a ledger look-up per resolution on the way to ready, for what
   * only ready reads (docs/benchmarks.md). With Phase 2 on, a singleton resolved while the application starts is
   * tracked at once, which needs its binding then.
   */
  private readonly registrations: Array<[Token, BeanKind, BeanScope, Function | undefined]> = [];
  private readonly resolvedEarly = new Set<Token>();
  /** Until ready, with Phase 2 off: what happens is told to the ledger at ready (one field read per resolution). */
  private describeAtReady: boolean;

  constructor(private readonly detector: GhostDetector) {
    this.describeAtReady = detector.tracker === undefined;
  }

  /** Patches the container's prototype (once per copy of tsyringe); returns the module unchanged. */
  patch(
    exports: TsyringeDependencyContainerModule,
    version: string | undefined,
    patcher: TsyringePatcher,
  ): TsyringeDependencyContainerModule {
    const proto =
      exports?.instance !== undefined
        ? (Object.getPrototypeOf(exports.instance) as Record<string, unknown>)
        : undefined;
    if (proto === undefined || typeof proto.register !== 'function' || typeof proto.resolve !== 'function')
      return exports;
    this.version = version;
    this.typeInfo = exports.typeInfo instanceof Map ? exports.typeInfo : undefined;
    this.ledger ??= new LazyContainerLedger<Token>({
      framework: 'tsyringe',
      container: () => ({ name: 'tsyringe', ...(this.version !== undefined ? { version: this.version } : {}) }),
      detector: this.detector,
      entryPoints: (token) =>
        routingControllersEntryPoints(
          this.classBindings.get(token) ?? (typeof token === 'function' ? token : undefined),
        ),
      collect: () => this.collect(),
    });
    const observer = this;
    patcher.wrap(
      proto,
      'register',
      (original: AnyFunction) =>
        function register(this: unknown, token: Token, provider: unknown, options?: { lifecycle?: number }) {
          const result = Reflect.apply(original, this, arguments);
          try {
            observer.registered(token, provider, options?.lifecycle);
          } catch (err) {
            bookkeepingFailed('tsyringe', err);
          }
          return result;
        },
    );
    patcher.wrap(
      proto,
      'resolve',
      (original: AnyFunction) =>
        function resolve(this: unknown, token: Token) {
          const result = Reflect.apply(original, this, arguments);
          // every resolution passes here: caught inline, no closure per call
          try {
            if (observer.describeAtReady) observer.resolvedEarly.add(token);
            else if (!observer.ledger!.resolved(token, result)) observer.resolvedUnregistered(token, result);
          } catch (err) {
            bookkeepingFailed('tsyringe', err);
          }
          return result;
        },
    );
    patcher.wrap(
      proto,
      'resolveAll',
      (original: AnyFunction) =>
        function resolveAll(this: unknown, token: Token) {
          const result = Reflect.apply(original, this, arguments);
          bookkeeping('tsyringe', () =>
            observer.describeAtReady ? observer.resolvedEarly.add(token) : observer.ledger!.resolved(token, result),
          );
          return result;
        },
    );
    this.patched = proto;
    return exports;
  }

  unpatch(patcher: TsyringePatcher): void {
    if (this.patched === undefined) return;
    for (const name of ['register', 'resolve', 'resolveAll']) patcher.unwrap(this.patched, name);
    this.patched = undefined;
  }

  private registered(token: Token, providerOrClass: unknown, lifecycle: number | undefined): void {
    const provider: Provider = isProvider(providerOrClass) ? providerOrClass : { useClass: providerOrClass };
    let kind: BeanKind = 'class';
    let cls: unknown = provider.useClass;
    if ('useValue' in provider) {
      kind = 'value';
      cls = undefined;
    } else if ('useFactory' in provider) {
      kind = 'factory';
    } else if ('useToken' in provider) {
      kind = 'alias';
      this.ledger!.dependsOn(token, provider.useToken, 'alias');
    }
    if (kind === 'class' && typeof cls === 'function') this.classBindings.set(token, cls);
    const scope: BeanScope =
      kind === 'value' || lifecycle === LIFECYCLE_SINGLETON || lifecycle === LIFECYCLE_CONTAINER_SCOPED
        ? 'singleton'
        : 'transient';
    const constructs = typeof cls === 'function' ? cls : undefined;
    if (this.describeAtReady) this.registrations.push([token, kind, scope, constructs]);
    else this.ledger!.bind(token, this.binding(token, kind, scope, constructs));
  }

  /** A class resolved without registration (tsyringe constructs any `@injectable()` class): a transient binding. */
  private resolvedUnregistered(token: Token, value: unknown): void {
    if (typeof token !== 'function') return;
    this.ledger!.bind(token, this.binding(token, 'class', 'transient', token));
    this.ledger!.resolved(token, value);
  }

  private binding(token: Token, kind: BeanKind, scope: BeanScope, cls: Function | undefined): LazyBinding {
    const owner = cls ?? (typeof token === 'function' ? token : undefined);
    const name = lazyTokenName(token);
    return lazyBinding(
      name,
      kind,
      scope,
      false,
      owner,
      cls !== undefined && cls.name !== '' && cls.name !== name ? cls.name : undefined,
    );
  }

  /**
   * At ready: the `@injectable()` classes nobody registered or resolved are bindings too, and every class's
   * constructor parameters are edges from each binding that builds it.
   */
  private collect(): void {
    const ledger = this.ledger!;
    this.describeAtReady = false;
    for (const [token, kind, scope, cls] of this.registrations) {
      // One registration that cannot be described is left out, not the container.
      try {
        ledger.bind(token, this.binding(token, kind, scope, cls));
      } catch (err) {
        bookkeepingFailed('tsyringe', err);
      }
    }
    this.registrations.length = 0;
    for (const token of this.resolvedEarly) {
      try {
        if (!ledger.resolved(token, undefined)) this.resolvedUnregistered(token, undefined);
      } catch (err) {
        bookkeepingFailed('tsyringe', err);
      }
    }
    this.resolvedEarly.clear();
    const typeInfo = this.typeInfo;
    if (typeInfo === undefined) return;
    // a class registered under another token (`register('Repo', { useClass: SqlRepo })`) is that binding
    const registered = new Set(this.classBindings.values());
    for (const cls of typeInfo.keys()) {
      if (!ledger.has(cls) && !registered.has(cls)) ledger.bind(cls, this.binding(cls, 'class', 'transient', cls));
    }
    const buildersOf = this.buildersByClass();
    for (const [cls, params] of typeInfo) {
      const builders = buildersOf.get(cls) ?? [cls];
      for (const param of params ?? []) {
        const dep = parameterToken(param);
        if (dep === undefined) continue;
        for (const from of builders) ledger.dependsOn(from, dep, 'constructor');
      }
    }
  }

  /** For each class, the tokens whose binding constructs it: itself, and every token registered `useClass` it. */
  private buildersByClass(): Map<Function, Token[]> {
    const out = new Map<Function, Token[]>();
    for (const [token, cls] of this.classBindings) {
      const list = out.get(cls);
      if (list === undefined) out.set(cls, [token]);
      else list.push(token);
    }
    return out;
  }
}

function isProvider(x: unknown): x is Provider {
  return (
    typeof x === 'object' && x !== null && ('useClass' in x || 'useValue' in x || 'useFactory' in x || 'useToken' in x)
  );
}

/** A constructor parameter as tsyringe records it: a token, `{ token, multiple }`, `{ token, transform }`, or `delay()`. */
function parameterToken(param: unknown): Token | undefined {
  if (typeof param === 'function' || typeof param === 'string' || typeof param === 'symbol') {
    // design:paramtypes of an interface or a primitive is Object, String, Number…: not a binding
    return param === Object || param === String || param === Number || param === Boolean ? undefined : param;
  }
  if (typeof param === 'object' && param !== null) {
    const p = param as { token?: unknown; wrap?: unknown };
    if (p.token !== undefined) return parameterToken(p.token);
    // delay(() => X): a DelayedConstructor whose wrap() names the class without constructing it
    if (typeof p.wrap === 'function') {
      try {
        return parameterToken((p.wrap as () => unknown)());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
