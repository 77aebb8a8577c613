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
 * A token's second (third…) registration: tsyringe keeps every registration of a token, `resolve` hands out the last
 * and `resolveAll` all of them (a list of plugins or endpoints, `register('Endpoint', …)` once per file), so each
 * class registered under one token is a binding of its own, and so are its values, factories and aliases together.
 * The first is keyed by the token itself.
 */
class LaterRegistration {
  constructor(
    readonly token: Token,
    /** The class it constructs; undefined for a value, a factory or an alias. */
    readonly cls: Function | undefined,
  ) {}
}

/** What the ledger keys a binding by: its token, or the token's later registration. */
type Key = Token | LaterRegistration;

/** What a registration makes: a class, or anything else (a value, a factory, an alias), all one binding. */
const NOT_A_CLASS = Symbol('not a class');
type Makes = Function | typeof NOT_A_CLASS;

/** A token's registrations with their bindings' keys, the first keyed by the token, once it has more than one. */
type Registrations = Array<{ readonly key: Key; readonly makes: Makes }>;

/**
 * Bindings one token may have: a class generated at run time and registered per request (a child container per
 * request) would otherwise add one for ever. Past it, a registration is the token's last binding again.
 */
const MAX_BINDINGS_PER_TOKEN = 32;

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
   * Token → what its registrations make (a class, or not), for edges and entry points, or once it has several, each
   * with its binding's key. Registering what a token already has (`@singleton()` and `registerSingleton` of one
   * class, a value again in a child container per request) is the same binding again; only a new class adds one,
   * at most MAX_BINDINGS_PER_TOKEN, so the ledger grows with the application's classes, never with time.
   */
  private readonly registrationsOf = new Map<Token, Makes | Registrations>();
  /**
   * Whether any token has several bindings: until one has, a resolution's binding is its token's without a look-up
   * (tsyringe resolves a transient's dependencies again at each resolution: 4,219 resolutions on the way to ready of
   * the 1,000-binding app, where the look-up in each counted +5 M instructions). Once one has, every resolution
   * looks its token up.
   */
  private severalBindings = false;
  /** Aliases registered before ready (`useToken`), made edges at ready to every binding of their target. */
  private readonly aliases: Array<[Key, Token]> = [];
  /**
   * With Phase 2 off, registrations before ready are described at ready (`collect`), and the tokens resolved before
   * it told then: a description per registration and a ledger look-up per resolution on the way to ready, for what
   * only ready reads (docs/benchmarks.md). With Phase 2 on, a singleton resolved while the application starts is
   * tracked at once, which needs its binding then.
   */
  private readonly registrations: Array<[Key, Token, BeanKind, BeanScope, Function | undefined]> = [];
  private readonly resolvedEarly = new Set<Key>();
  /** Until ready, with Phase 2 off: what happens is told to the ledger at ready (a set insert per resolution). */
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
      classes: () => this.classesToDescribe(),
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
            const key = observer.severalBindings ? observer.keyOf(token, result) : token;
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
    }
    const key = this.registrationKey(token, kind === 'class' && typeof cls === 'function' ? cls : NOT_A_CLASS);
    if (kind === 'alias' && !this.ledger!.readyDone) this.aliases.push([key, provider.useToken]);
    const scope: BeanScope =
      kind === 'value' || lifecycle === LIFECYCLE_SINGLETON || lifecycle === LIFECYCLE_CONTAINER_SCOPED
        ? 'singleton'
        : 'transient';
    const constructs = typeof cls === 'function' ? cls : undefined;
    if (this.describeAtReady) this.registrations.push([key, token, kind, scope, constructs]);
    else this.ledger!.bind(key, this.binding(token, kind, scope, constructs));
  }

  /** The key of the binding a registration under `token` that `makes` makes, or makes again (see LaterRegistration). */
  private registrationKey(token: Token, makes: Makes): Key {
    const known = this.registrationsOf.get(token);
    if (known === undefined) {
      this.registrationsOf.set(token, makes);
      return token;
    }
    if (!Array.isArray(known)) {
      if (known === makes) return token;
      const key = new LaterRegistration(token, makes === NOT_A_CLASS ? undefined : makes);
      this.severalBindings = true;
      this.registrationsOf.set(token, [
        { key: token, makes: known as Makes },
        { key, makes },
      ]);
      return key;
    }
    for (const registered of known) if (registered.makes === makes) return registered.key;
    if (known.length >= MAX_BINDINGS_PER_TOKEN) return known[known.length - 1]!.key;
    const key = new LaterRegistration(token, makes === NOT_A_CLASS ? undefined : makes);
    known.push({ key, makes });
    return key;
  }

  /**
   * The binding of a token with several that handed out `value`: the one whose class made it (or an ancestor of
   * its class), else the token's value, factory or alias, else its last (tsyringe's `resolve` takes the last).
   */
  private keyOf(token: Token, value: unknown): Key {
    const known = this.registrationsOf.get(token);
    if (known === undefined || !Array.isArray(known)) return token;
    if (typeof value === 'object' && value !== null) {
      const proto: unknown = Object.getPrototypeOf(value);
      for (const { key, makes } of known) if (makes !== NOT_A_CLASS && makes.prototype === proto) return key;
      for (const { key, makes } of known)
        if (makes !== NOT_A_CLASS && value instanceof (makes as new () => unknown)) return key;
    }
    for (const { key, makes } of known) if (makes === NOT_A_CLASS) return key;
    return known[known.length - 1]!.key;
  }

  /** `resolveAll` handed out one value per registration of `token`: each tells its own binding. */
  private resolvedAll(token: Token, values: unknown): void {
    const list = Array.isArray(values) ? values : [];
    // none: an optional token never registered, which tsyringe allows for strings and symbols only
    for (const value of list) {
      const key = this.severalBindings ? this.keyOf(token, value) : token;
      if (this.describeAtReady) this.resolvedEarly.add(key);
      else if (!this.ledger!.resolved(key, value) && !(key instanceof LaterRegistration))
        this.resolvedUnregistered(token, value);
    }
  }

  /** The class the binding keyed `key` constructs, if any. */
  private classOf(key: Key): Function | undefined {
    if (key instanceof LaterRegistration) return key.cls;
    const known = this.registrationsOf.get(key);
    const first = Array.isArray(known) ? known[0]!.makes : known;
    if (first !== undefined) return first === NOT_A_CLASS ? undefined : first;
    return typeof key === 'function' ? key : undefined;
  }

  /** The classes `collect` describes at ready, whose origins the analysis reads a turn before (LazyLedgerOptions). */
  private *classesToDescribe(): Iterable<unknown> {
    for (const registration of this.registrations) yield registration[4];
    if (this.typeInfo !== undefined) yield* this.typeInfo.keys();
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
        if (!ledger.resolved(key, undefined) && !(key instanceof LaterRegistration))
          this.resolvedUnregistered(key, undefined);
      } catch (err) {
        bookkeepingFailed('tsyringe', err);
      }
    }
    this.resolvedEarly.clear();
    // an alias may be handed any binding of its target
    for (const [key, target] of this.aliases) for (const to of this.keysOf(target)) ledger.dependsOn(key, to, 'alias');
    this.aliases.length = 0;
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
        // a parameter of a token with several bindings may get any of them (`@injectAll` gets them all)
        const targets = this.keysOf(dep);
        for (const from of builders) for (const to of targets) ledger.dependsOn(from, to, 'constructor');
      }
    }
  }

  /** The keys of `token`'s bindings: the token itself, and its later registrations'. */
  private keysOf(token: Token): Key[] {
    const known = this.registrationsOf.get(token);
    return Array.isArray(known) ? known.map((registered) => registered.key) : [token];
  }

  /** For each class, the keys whose binding constructs it: itself, and every token registered `useClass` it. */
  private buildersByClass(): Map<Function, Key[]> {
    const out = new Map<Function, Key[]>();
    for (const [token, known] of this.registrationsOf) {
      for (const { key, makes } of Array.isArray(known) ? known : [{ key: token, makes: known }]) {
        if (typeof makes !== 'function') continue;
        const list = out.get(makes);
        if (list === undefined) out.set(makes, [key]);
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
