import type { DiagRuntime } from '../../runtime';
import { safeLog } from '../../logger';

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Lookups by token after start-up: `app.get(AppService)`, `app.select(Module).get('TOKEN')`, `moduleRef.get`,
 * `moduleRef.resolve`. Phase 1 reads the graph of injections and cannot see them, so a bean used only that
 * way (a standalone application context's `main.ts`, a plugin framework calling its resolvers) was a false
 * candidate. The process sees them when they happen: Nest's `AbstractInstanceResolver#find` (every `get`) and
 * `#resolvePerContext` (every `resolve`) return the instance, and a candidate's instance returned there takes the
 * bean off the candidates with the reason recorded (`DiagRuntime.beanLookedUp`).
 *
 * Lookups can sit on a request path, so once the analysis has run a lookup costs one call and a map look-up
 * (a `size` test when nothing is a candidate); what is watched is the candidates' instances alone, each
 * dropped at its first lookup. Nothing changes what Nest returns or throws.
 */
export class TokenLookups {
  /** The candidates' instances, watched until their first lookup. */
  private readonly watched = new Map<unknown, string>();
  /**
   * Instances looked up while a container bootstraps and before its analysis can name them (an
   * `onApplicationBootstrap` hook's `moduleRef.get`), with how; handed to the analysis, then dropped.
   */
  private early: Map<unknown, string> | undefined = new Map();

  constructor(private readonly runtime: DiagRuntime) {}

  wrapFind(original: Method): Method {
    const lookups = this;
    return function find(this: unknown, ...args: unknown[]) {
      const found = original.apply(this, args);
      if (lookups.watched.size > 0 || lookups.early !== undefined) lookups.seen(this, 'get', found);
      return found;
    };
  }

  wrapResolve(original: Method): Method {
    const lookups = this;
    return function resolvePerContext(this: unknown, ...args: unknown[]) {
      const resolved = original.apply(this, args);
      if ((lookups.watched.size > 0 || lookups.early !== undefined) && resolved instanceof Promise) {
        // Observed beside the caller's own await: the caller gets Nest's very promise.
        const resolver = this;
        resolved.then(
          (instance) => lookups.seen(resolver, 'resolve', instance),
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
   * The analysis has named the beans: lookups made before it go to the runtime (before the report is built),
   * `names` maps each application bean's instance to its name.
   */
  beforeReport(names: ReadonlyMap<unknown, string>): void {
    const early = this.early;
    this.early = undefined;
    if (early === undefined) return;
    for (const [instance, via] of early) {
      const name = names.get(instance);
      if (name !== undefined) this.runtime.beanLookedUp(name, via);
    }
  }

  /** After the report: the candidates' instances (`names` maps every bean's instance to its name). */
  watch(names: ReadonlyMap<unknown, string>): void {
    const candidates = new Set(this.runtime.ghostCandidateNames());
    if (candidates.size === 0) return;
    for (const [instance, name] of names) if (candidates.has(name)) this.watched.set(instance, name);
  }

  private seen(resolver: unknown, method: 'get' | 'resolve', found: unknown): void {
    try {
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
        this.runtime.beanLookedUp(name, via(resolver, method));
      }
    } catch (err) {
      safeLog('debug', `a lookup by token was not recorded: ${String(err)}`);
    }
  }
}

/** How the application asked: an application context (`app`, or one `app.select()` returned) or a ModuleRef. */
function via(resolver: unknown, method: 'get' | 'resolve'): string {
  const owner = resolver !== null && typeof resolver === 'object' && 'contextModule' in resolver ? 'app' : 'moduleRef';
  return `${owner}.${method}`;
}
