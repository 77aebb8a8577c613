/**
 * "Rare on purpose": methods and endpoints a team keeps although a quiet week will show them never called (a
 * partner's quarterly call, a webhook, a disaster-recovery route), marked in code with {@link Kept} or in the
 * settings (`diag.ghost-tracking.kept`). A kept method or endpoint keeps the verdict its evidence gives and is
 * shown with its reason, but is never a finding: not in SARIF, not failing a gate.
 *
 * The decorator costs nothing at run time: it returns the method untouched and records one entry in a registry
 * shared by every copy of this package in the process (a global symbol), read only when a report is built.
 */

/** Where marks live: by class prototype, method name to reason. */
type KeptRegistry = WeakMap<object, Map<string, string>>;

const REGISTRY_KEY = Symbol.for('diag-instrumentation.kept');

function registry(): KeptRegistry {
  const g = globalThis as { [REGISTRY_KEY]?: KeptRegistry };
  return (g[REGISTRY_KEY] ??= new WeakMap());
}

/** The reason given when none was. */
const NO_REASON = 'kept on purpose';

/** The whole class: every method of it. */
const WHOLE_CLASS = '*';

/**
 * Marks a method (or every method of a class) as called rarely on purpose, with the reason a reader will see:
 * `@Kept('partner quarterly reconciliation, called by Acme each quarter')`. The method stays exactly what it was
 * (no wrapper, nothing at start-up); the ghost report, the ledger and the page show it with its reason and
 * never as a finding. For TypeScript's `experimentalDecorators` (what NestJS uses).
 */
export function Kept(reason: string = NO_REASON): ClassDecorator & MethodDecorator {
  return ((target: object, key?: string | symbol) => {
    const proto = typeof target === 'function' ? (target as { prototype: object }).prototype : target;
    const name = key === undefined ? WHOLE_CLASS : typeof key === 'string' ? key : undefined;
    if (name === undefined || proto === null || typeof proto !== 'object') return undefined;
    const marks = registry();
    let own = marks.get(proto);
    if (own === undefined) marks.set(proto, (own = new Map()));
    own.set(name, reason);
    return undefined;
  }) as ClassDecorator & MethodDecorator;
}

/**
 * Why `method` of the class whose prototype is `proto` is kept, if it is: a mark on the method where the call
 * reaches it, or on the class or an ancestor class.
 */
export function keptReason(proto: object | null | undefined, method: string): string | undefined {
  const marks = registry();
  for (let p = proto; p !== null && p !== undefined && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    const own = marks.get(p);
    const reason = own?.get(method) ?? own?.get(WHOLE_CLASS);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/** One entry of `diag.ghost-tracking.kept`: `pattern=reason`, the pattern a glob (`*`) over a member's names. */
export interface KeptPattern {
  readonly pattern: string;
  readonly reason: string;
  readonly test: RegExp;
}

/**
 * Parses `diag.ghost-tracking.kept`'s entries. A pattern matches a method as `Bean#method` and an endpoint by its
 * route (`GET /api/partners/*`, `Query.items`) or as `kind:route` (`cron:nightly-*`), a GraphQL field also with its
 * API's path (`/shop-api Query.product`, see {@link keptNames}); `*` matches anything.
 */
export function keptPatterns(entries: readonly string[]): KeptPattern[] {
  return entries.map((entry) => {
    const eq = entry.indexOf('=');
    const pattern = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    const reason = eq < 0 ? 'kept by diag.ghost-tracking.kept' : entry.slice(eq + 1).trim() || NO_REASON;
    const source = pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    return { pattern, reason, test: new RegExp(`^${source}$`) };
  });
}

/**
 * The names a `diag.ghost-tracking.kept` pattern may give an endpoint: its route (`GET /webhooks/stripe`,
 * `Query.product`) and `kind:route`, and for a GraphQL field that says its API also `path route` and
 * `kind:path route` (`/shop-api Query.product`), so that a pattern can keep one API's field and not the other's.
 */
export function keptNames(e: { readonly kind: string; readonly route: string; readonly path?: string }): string[] {
  const names = [e.route, `${e.kind}:${e.route}`];
  if (e.path !== undefined) names.push(`${e.path} ${e.route}`, `${e.kind}:${e.path} ${e.route}`);
  return names;
}

/** The reason of the first pattern matching any of `names`, if one does. */
export function keptBy(patterns: readonly KeptPattern[], ...names: string[]): string | undefined {
  for (const p of patterns) if (names.some((n) => p.test.test(n))) return p.reason;
  return undefined;
}

/** A GraphQL field as the endpoint inventory names it (EndpointRecord's `kind`, `route`, `path`, handler). */
interface GraphqlEndpoint {
  readonly kind: string;
  readonly route: string;
  readonly path?: string;
  readonly bean: string;
  readonly method: string;
}

/**
 * What a GraphQL schema cannot lose, kept whatever its calls: an API whose resolvers declare a single `Query` field
 * does not build without it, since a schema needs a query type with at least one field (`Query root type must be
 * provided` in code first, `Type Query must define one or more fields` schema first). An API used only for its
 * mutations often has one placeholder query nobody calls; deleting it as never called stops the application at
 * its next start. Counted over every resolver of `endpoints`, the framework's included, per API path.
 */
export function schemaKeeps(endpoints: readonly GraphqlEndpoint[] | undefined): {
  readonly endpoint: (e: Pick<GraphqlEndpoint, 'kind' | 'route' | 'path'>) => string | undefined;
  readonly method: (bean: string, method: string) => string | undefined;
} {
  // A field by its API's path and its route (`/shop-api\0Query.product`): the same route of two APIs is two fields.
  const field = (e: Pick<GraphqlEndpoint, 'route' | 'path'>) => `${e.path ?? ''}\0${e.route}`;
  const graphql = (endpoints ?? []).filter((e) => e.kind === 'graphql');
  const queries = new Map<string, Set<string>>();
  for (const e of graphql) {
    if (!e.route.startsWith('Query.')) continue;
    const api = e.path ?? '';
    queries.set(api, (queries.get(api) ?? new Set()).add(field(e)));
  }
  const sole = new Map<string, string>();
  for (const [api, fields] of queries) {
    if (fields.size !== 1) continue;
    const where = api === '' ? 'the GraphQL API' : api;
    sole.set(
      [...fields][0]!,
      `the only Query field of ${where}: a GraphQL schema needs one, so without it the schema does not build and the application does not start`,
    );
  }
  const byHandler = new Map<string, string>();
  for (const e of graphql) {
    const reason = sole.get(field(e));
    if (reason !== undefined) byHandler.set(`${e.bean}\0${e.method}`, reason);
  }
  return {
    endpoint: (e) => (e.kind === 'graphql' ? sole.get(field(e)) : undefined),
    method: (bean, method) => byHandler.get(`${bean}\0${method}`),
  };
}
