import type { GhostDetector } from '../../ghost/detector';
import { safeLog } from '../../shared/logger';

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Lookups by token after start-up: `app.get(AppService)`, `app.select(Module).get('TOKEN')`, `moduleRef.get`,
 * `moduleRef.resolve`. Phase 1 reads the graph of injections and cannot see them, so a bean used only that
 * way (a standalone application context's `main.ts`, a plugin framework calling its resolvers) was a false
 * candidate. The process sees them when they happen: Nest's `AbstractInstanceResolver#find` (every `get`) and
 * `#resolvePerContext` (every `resolve`) return the instance, and a candidate's instance returned there takes the
 * bean off the candidates with the reason recorded (`GhostDetector.beanLookedUp`).
 *
 * Lookups can sit on a request path, so once the analysis has run a lookup costs one call, a test of two counts
 * and, while candidates are watched, two map look-ups (bench/tracker/lookups.js); each candidate is dropped at
 * its first lookup. Nothing changes what Nest returns or throws.
 */
export class TokenLookups {
  /**
   * The candidates' instances, watched until their first lookup. Weakly held, so that a closed application's
   * beans can go; `watching` counts the entries for the fast path.
   */
  private readonly watched = new WeakMap<object, string>();
  private watching = 0;
  /**
   * Candidates whose value is a string, a number or a boolean (`useValue: 'foobar'`): no instance identifies
   * them, so their token does (`app.get('MyDynamicProvider')`). Each token's candidates, until its first lookup.
   */
  private readonly watchedTokens = new Map<unknown, string[]>();
  /**
   * Lookups made while a container bootstraps, before its analysis can name them (an `onApplicationBootstrap`
   * hook's `moduleRef.get`), by instance and by token, with how: handed to the analysis, dropped at its end or
   * when the bootstrap fails. Undefined outside a bootstrap, when nothing is kept.
   */
  private early: { readonly instances: Map<unknown, string>; readonly tokens: Map<unknown, string> } | undefined;

  constructor(private readonly detector: GhostDetector) {}

  wrapFind(original: Method): Method {
    const lookups = this;
    // `arguments`, not a rest array: nothing allocated per lookup (lookups sit on request paths).
    return function find(this: unknown) {
      const found = Reflect.apply(original, this, arguments);
      if (lookups.watching > 0 || lookups.watchedTokens.size > 0 || lookups.early !== undefined) {
        lookups.seen(this, 'get', arguments[0], arguments[1], found);
      }
      return found;
    };
  }

  wrapResolve(original: Method): Method {
    const lookups = this;
    return function resolvePerContext(this: unknown, ...args: unknown[]) {
      const resolved = original.apply(this, args);
      if (!(lookups.watching > 0 || lookups.watchedTokens.size > 0 || lookups.early !== undefined)) return resolved;
      if (!(resolved instanceof Promise)) return resolved;
      // The caller gets a promise of the same outcome: a rejection it never handles is still an unhandled
      // rejection (a handler added to Nest's own promise would have silenced it). `resolvePerContext` is an
      // async method, so its promise was a fresh one anyway.
      const resolver = this;
      return resolved.then((instance: unknown) => {
        lookups.seen(resolver, 'resolve', args[0], args[3], instance);
        return instance;
      });
    };
  }

  /** A container starts bootstrapping: its lookups are kept until its analysis (a failed one's are dropped). */
  bootstrapStarted(): void {
    this.early = { instances: new Map(), tokens: new Map() };
  }

  bootstrapFailed(): void {
    this.early = undefined;
  }

  /**
   * The analysis has named the beans: the lookups made before it go to the detector, before the report is
   * built.
   */
  beforeReport(beans: ApplicationBeans): void {
    const early = this.early;
    this.early = undefined;
    if (early === undefined) return;
    for (const [instance, how] of early.instances) {
      const name = beans.byInstance.get(instance);
      if (name !== undefined) this.detector.beanLookedUp(name, how);
    }
    for (const [token, how] of early.tokens) {
      for (const name of beans.byValueToken.get(token) ?? []) this.detector.beanLookedUp(name, how);
    }
  }

  /** After the report: the candidates are watched, by instance or, for a plain value, by token. */
  watch(beans: ApplicationBeans): void {
    const candidates = new Set(this.detector.ghostCandidateNames());
    if (candidates.size === 0) return;
    for (const [instance, name] of beans.byInstance) {
      if (!candidates.has(name) || this.watched.has(instance as object)) continue;
      this.watched.set(instance as object, name);
      this.watching += 1;
    }
    for (const [token, names] of beans.byValueToken) {
      const watched = names.filter((name) => candidates.has(name));
      if (watched.length > 0) this.watchedTokens.set(token, watched);
    }
  }

  /** One lookup: `how` is worked out only when something is recorded, off the common path of a plain miss. */
  private seen(resolver: unknown, method: 'get' | 'resolve', token: unknown, options: unknown, found: unknown): void {
    try {
      const early = this.early;
      if (early !== undefined && !early.tokens.has(token)) early.tokens.set(token, via(resolver, method));
      if (this.watchedTokens.size > 0) {
        const names = this.watchedTokens.get(token);
        if (names !== undefined) {
          this.watchedTokens.delete(token);
          for (const name of names) this.detector.beanLookedUp(name, via(resolver, method));
        }
      }
      // `{ each: true }` returns every instance of the token; otherwise the value is the bean's, an array too.
      if (eachOf(options) && Array.isArray(found)) {
        for (const instance of found) this.seenInstance(resolver, method, instance);
      } else {
        this.seenInstance(resolver, method, found);
      }
    } catch (err) {
      safeLog('debug', `a lookup by token was not recorded: ${String(err)}`);
    }
  }

  private seenInstance(resolver: unknown, method: 'get' | 'resolve', instance: unknown): void {
    if (instance === null || (typeof instance !== 'object' && typeof instance !== 'function')) return;
    const early = this.early;
    if (early !== undefined && !early.instances.has(instance)) early.instances.set(instance, via(resolver, method));
    if (this.watching === 0) return;
    const name = this.watched.get(instance);
    if (name === undefined) return;
    this.watched.delete(instance);
    this.watching -= 1;
    this.detector.beanLookedUp(name, via(resolver, method));
  }
}

/** The application's beans as a lookup can find them, from the analysis's read of the container. */
export interface ApplicationBeans {
  /** Each bean's instance (an object or a function) to its name. */
  readonly byInstance: ReadonlyMap<unknown, string>;
  /**
   * The token of each bean whose value is a string, a number, a boolean (…), and of each `useExisting` alias (whose
   * instance is its target's), to the names it stands for.
   */
  readonly byValueToken: ReadonlyMap<unknown, readonly string[]>;
}

/** `{ each: true }` among a lookup's options. */
function eachOf(options: unknown): boolean {
  return options !== null && typeof options === 'object' && (options as { each?: unknown }).each === true;
}

/** How the application asked: an application context (`app`, or one `app.select()` returned) or a ModuleRef. */
function via(resolver: unknown, method: 'get' | 'resolve'): string {
  const owner = resolver !== null && typeof resolver === 'object' && 'contextModule' in resolver ? 'app' : 'moduleRef';
  return `${owner}.${method}`;
}
