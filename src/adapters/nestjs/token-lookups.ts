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
 * Lookups can sit on a request path, so once the analysis has run a lookup costs one call and a map look-up
 * (a `size` test when nothing is a candidate); what is watched is the candidates' instances alone, each
 * dropped at its first lookup. Nothing changes what Nest returns or throws.
 */
export class TokenLookups {
  /** The candidates' instances, watched until their first lookup. */
  private readonly watched = new Map<unknown, string>();
  /**
   * Candidates whose value is a string, a number or a boolean (`useValue: 'foobar'`): no instance identifies
   * them, so their token does (`app.get('MyDynamicProvider')`). Each token's candidates, until its first lookup.
   */
  private readonly watchedTokens = new Map<unknown, string[]>();
  /**
   * Instances looked up while a container bootstraps and before its analysis can name them (an
   * `onApplicationBootstrap` hook's `moduleRef.get`), with how; handed to the analysis, then dropped.
   */
  private early: Map<unknown, string> | undefined = new Map();

  constructor(private readonly detector: GhostDetector) {}

  wrapFind(original: Method): Method {
    const lookups = this;
    return function find(this: unknown, ...args: unknown[]) {
      const found = original.apply(this, args);
      if (lookups.watched.size > 0 || lookups.watchedTokens.size > 0 || lookups.early !== undefined) lookups.seen(this, 'get', args[0], found);
      return found;
    };
  }

  wrapResolve(original: Method): Method {
    const lookups = this;
    return function resolvePerContext(this: unknown, ...args: unknown[]) {
      const resolved = original.apply(this, args);
      if ((lookups.watched.size > 0 || lookups.watchedTokens.size > 0 || lookups.early !== undefined) && resolved instanceof Promise) {
        // Observed beside the caller's own await: the caller gets Nest's very promise.
        const resolver = this;
        const token = args[0];
        resolved.then(
          (instance) => lookups.seen(resolver, 'resolve', token, instance),
          () => undefined,
        );
      }
      return resolved;
    };
  }

  /** A container starts bootstrapping: its lookups are kept until its analysis. */
  bootstrapStarted(): void {
    this.early ??= new Map();
  }

  /**
   * The analysis has named the beans: lookups made before it go to the detector (before the report is built),
   */
  beforeReport(beans: ApplicationBeans): void {
    const early = this.early;
    this.early = undefined;
    if (early === undefined) return;
    for (const [key, how] of early) {
      const name = beans.byInstance.get(key);
      if (name !== undefined) this.detector.beanLookedUp(name, how);
      for (const named of beans.byValueToken.get(key) ?? []) this.detector.beanLookedUp(named, how);
    }
  }

  /** After the report: the candidates are watched, by instance or, for a plain value, by token. */
  watch(beans: ApplicationBeans): void {
    const candidates = new Set(this.detector.ghostCandidateNames());
    if (candidates.size === 0) return;
    for (const [instance, name] of beans.byInstance) if (candidates.has(name)) this.watched.set(instance, name);
    for (const [token, names] of beans.byValueToken) {
      const watched = names.filter((name) => candidates.has(name));
      if (watched.length > 0) this.watchedTokens.set(token, watched);
    }
  }

  private seen(resolver: unknown, method: 'get' | 'resolve', token: unknown, found: unknown): void {
    try {
      if (this.early !== undefined) {
        // Before the analysis, by instance and by token alike: it tells which names they stand for.
        if (!this.early.has(token)) this.early.set(token, via(resolver, method));
      } else {
        const names = this.watchedTokens.get(token);
        if (names !== undefined) {
          this.watchedTokens.delete(token);
          for (const name of names) this.detector.beanLookedUp(name, via(resolver, method));
        }
      }
      // `{ each: true }` returns every instance of the token.
      const instances = Array.isArray(found) ? found : [found];
      for (const instance of instances) {
        if (instance === null || (typeof instance !== 'object' && typeof instance !== 'function')) continue;
        if (this.early !== undefined) {
          if (!this.early.has(instance)) this.early.set(instance, via(resolver, method));
          continue;
        }
        const name = this.watched.get(instance);
        if (name === undefined) continue;
        this.watched.delete(instance);
        this.detector.beanLookedUp(name, via(resolver, method));
      }
    } catch (err) {
      safeLog('debug', `a lookup by token was not recorded: ${String(err)}`);
    }
  }
}

/** The application's beans as a lookup can find them, from the analysis's read of the container. */
export interface ApplicationBeans {
  /** Each bean's instance (an object or a function) to its name. */
  readonly byInstance: ReadonlyMap<unknown, string>;
  /** The token of each bean whose value is a string, a number, a boolean (…) to the names it stands for. */
  readonly byValueToken: ReadonlyMap<unknown, readonly string[]>;
}

/** How the application asked: an application context (`app`, or one `app.select()` returned) or a ModuleRef. */
function via(resolver: unknown, method: 'get' | 'resolve'): string {
  const owner = resolver !== null && typeof resolver === 'object' && 'contextModule' in resolver ? 'app' : 'moduleRef';
  return `${owner}.${method}`;
}
