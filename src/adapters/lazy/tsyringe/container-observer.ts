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

/**
 * A token's second (third…) class: tsyringe keeps every registration of a token, `resolve` hands out the last and
 * `resolveAll` all of them (a list of plugins or endpoints, `register('Endpoint', …)` once per file), so each class
 * registered under one token is a binding of its own. The first is keyed by the token itself.
 */
class LaterClass {
  constructor(
    readonly token: Token,
    readonly cls: Function,
  ) {}
}

/** What the ledger keys a binding by: its token, or the token's later class. */
type Key = Token | LaterClass;

/** The classes registered under one token, each with its binding's key, the first keyed by the token. */
type ClassRegistrations = Array<{ readonly key: Key; readonly cls: Function }>;

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
  private ledger: LazyContainerLedger<Key> | undefined;
  private typeInfo: Map<Function, unknown[]> | undefined;
  private patched: object | undefined;
  private version: string | undefined;
  /**
   * Token → the class its registrations construct, for edges and entry points, or once it has several, each with
   * its binding's key. Registering a class its token already has (`@singleton()` and `registerSingleton` of one
   * class, a child container per request) is the same binding again; only a new class adds one, so the ledger
   * grows with the application's classes, never with time.
   */
  private readonly classesOf = new Map<Token, Function | ClassRegistrations>();
  /**
   * Whether any token has several classes: until one has, a resolution's binding is its token's without a look-up
   * (tsyringe resolves a transient's dependencies again at each resolution: 4,219 resolutions on the way to ready of
   * the 1,000-binding app, where the look-up in each counted +5 M instructions).
   */
  private severalClasses = false;
  /**
   * With Phase 2 off, registrations before ready are described at ready (`collect`), and the tokens resolved before
   * it told then: a description per registration and a ledger look-up per resolution on the way to ready, for what
   * only ready reads (docs/benchmarks.md). With Phase 2 on, a singleton resolved while the application starts is
   * tracked at once, which needs its binding then.
   */
  private readonly registrations: Array<[Key, Token, BeanKind, BeanScope, Function | undefined]> = [];
  private readonly resolvedEarly = new Set<Key>();
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
    this.ledger ??= new LazyContainerLedger<Key>({
      framework: 'tsyringe',
      container: () => ({ name: 'tsyringe', ...(this.version !== undefined ? { version: this.version } : {}) }),
      detector: this.detector,
      entryPoints: (key) => routingControllersEntryPoints(this.classOf(key)),
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
            const key = observer.severalClasses ? observer.keyOf(token, result) : token;
            if (observer.describeAtReady) observer.resolvedEarly.add(key);
            else if (!observer.ledger!.resolved(key, result)) observer.resolvedUnregistered(token, result);
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
          bookkeeping('tsyringe', () => observer.resolvedAll(token, result));
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
    const key = kind === 'class' && typeof cls === 'function' ? this.classRegistered(token, cls) : token;
    const scope: BeanScope =
      kind === 'value' || lifecycle === LIFECYCLE_SINGLETON || lifecycle === LIFECYCLE_CONTAINER_SCOPED
        ? 'singleton'
        : 'transient';
    const constructs = typeof cls === 'function' ? cls : undefined;
    if (this.describeAtReady) this.registrations.push([key, token, kind, scope, constructs]);
    else this.ledger!.bind(key, this.binding(token, kind, scope, constructs));
  }

  /** The key of the binding that registering `cls` under `token` makes or makes again (see {@link LaterClass}). */
  private classRegistered(token: Token, cls: Function): Key {
    const known = this.classesOf.get(token);
    if (known === undefined) {
      this.classesOf.set(token, cls);
      return token;
    }
    if (typeof known === 'function') {
      if (known === cls) return token;
      const key = new LaterClass(token, cls);
      this.severalClasses = true;
      this.classesOf.set(token, [
        { key: token, cls: known },
        { key, cls },
      ]);
      return key;
    }
    for (const registered of known) if (registered.cls === cls) return registered.key;
    const key = new LaterClass(token, cls);
    known.push({ key, cls });
    return key;
  }

  /**
   * The binding of a token with several classes that handed out `value`: the one whose class made it, else the
   * token's last (tsyringe's `resolve` takes the last registration; a factory's value has no class of ours).
   */
  private keyOf(token: Token, value: unknown): Key {
    const classes = this.classesOf.get(token);
    if (classes === undefined || typeof classes === 'function') return token;
    const proto = typeof value === 'object' && value !== null ? Object.getPrototypeOf(value) : undefined;
    for (const registered of classes) if (registered.cls.prototype === proto) return registered.key;
    return classes[classes.length - 1]!.key;
  }

  /** `resolveAll` handed out one value per registration of `token`: each tells its own binding. */
  private resolvedAll(token: Token, values: unknown): void {
    const list = Array.isArray(values) ? values : [];
    if (list.length === 0) {
      if (this.describeAtReady) this.resolvedEarly.add(token);
      else this.ledger!.resolved(token, values);
      return;
    }
    for (const value of list) {
      const key = this.keyOf(token, value);
      if (this.describeAtReady) this.resolvedEarly.add(key);
      else this.ledger!.resolved(key, value);
    }
  }

  /** The class the binding keyed `key` constructs, if any. */
  private classOf(key: Key): Function | undefined {
    const classes = this.classesOf.get(key);
    if (classes !== undefined) return typeof classes === 'function' ? classes : classes[0]!.cls;
    if (key instanceof LaterClass) return key.cls;
    return typeof key === 'function' ? key : undefined;
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
    for (const [key, token, kind, scope, cls] of this.registrations) {
      // One registration that cannot be described is left out, not the container.
      try {
        ledger.bind(key, this.binding(token, kind, scope, cls));
      } catch (err) {
        bookkeepingFailed('tsyringe', err);
      }
    }
    this.registrations.length = 0;
    for (const key of this.resolvedEarly) {
      try {
        if (!ledger.resolved(key, undefined) && !(key instanceof LaterClass)) this.resolvedUnregistered(key, undefined);
      } catch (err) {
        bookkeepingFailed('tsyringe', err);
      }
    }
    this.resolvedEarly.clear();
    const typeInfo = this.typeInfo;
    if (typeInfo === undefined) return;
    const buildersOf = this.buildersByClass();
    // a class registered under another token (`register('Repo', { useClass: SqlRepo })`) is that binding
    for (const cls of typeInfo.keys()) {
      if (!ledger.has(cls) && !buildersOf.has(cls)) ledger.bind(cls, this.binding(cls, 'class', 'transient', cls));
    }
    for (const [cls, params] of typeInfo) {
      const builders = buildersOf.get(cls) ?? [cls];
      for (const param of params ?? []) {
        const dep = parameterToken(param);
        if (dep === undefined) continue;
        // a parameter of a token with several classes may get any of them (`@injectAll` gets them all)
        const classes = this.classesOf.get(dep);
        const targets = Array.isArray(classes) ? classes.map((registered) => registered.key) : [dep];
        for (const from of builders) for (const to of targets) ledger.dependsOn(from, to, 'constructor');
      }
    }
  }

  /** For each class, the keys whose binding constructs it: itself, and every token registered `useClass` it. */
  private buildersByClass(): Map<Function, Key[]> {
    const out = new Map<Function, Key[]>();
    for (const [token, classes] of this.classesOf) {
      for (const { key, cls } of typeof classes === 'function' ? [{ key: token, cls: classes }] : classes) {
        const list = out.get(cls);
        if (list === undefined) out.set(cls, [key]);
        else list.push(key);
      }
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
