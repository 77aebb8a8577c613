/**
 * The resolved dependency graph of one container, in terms any DI framework can produce: beans and the edges
 * "A needs B". Adapters fill it; the Phase 1 rules and the reports read it.
 */

/** How the container produces the bean's value. */
export type BeanKind = 'class' | 'factory' | 'value' | 'alias';

/** `request` and `transient` beans are created per request or per consumer, never as one startup singleton. */
export type BeanScope = 'singleton' | 'request' | 'transient';

/** What the bean is to its container: plain providers, HTTP/RPC controllers, enhancers, middleware, modules. */
export type BeanRole = 'provider' | 'controller' | 'injectable' | 'middleware' | 'module';

/** How a dependency reached its dependent. */
export type EdgeKind = 'constructor' | 'property' | 'factory-inject' | 'alias';

/** What an adapter knows about one bean. */
export interface BeanInput {
  /** The token's plain name: class name, string token, or symbol description. */
  readonly token: string;
  /** Name of the module (or other grouping) that registered the bean, if the container has one. */
  readonly module?: string;
  readonly kind: BeanKind;
  readonly scope: BeanScope;
  readonly role: BeanRole;
  /** Registered by the framework or a library rather than by the application. */
  readonly framework: boolean;
  /** Created as a static singleton while the container bootstrapped. */
  readonly eager: boolean;
  /** Wall time of the bean's creation (constructor or factory, awaited), when it was observed. */
  readonly instantiationMs?: number;
  /** Name of the class the container instantiates, when it is a class (may differ from the token). */
  readonly className?: string;
  /** File the application class was loaded from, relative to the working directory, when known. */
  readonly source?: string;
  /**
   * Where the bean's module is declared, when another module of the same name exists (a monorepo's two
   * `CheckInModule`s): the name alone, `CheckInModule` and `#2`, tells a reader nothing.
   */
  readonly moduleSource?: string;
  /**
   * The shared library the class lives in, when its file lies outside the application's own source root (a
   * monorepo's `libs/shared`, a workspace package): registered here and unused here, it may be used by a sibling
   * application, so the action is to remove the registration, not the class.
   */
  readonly sharedLibrary?: string;
  /**
   * The class is a library's (or Node's) that the application lists in its own providers (`providers: [Logger]`):
   * nothing of the application's to delete but the registration. Unset for a class of unknown origin (one no module
   * exports, a bundled library's): not known to be a library's.
   */
  readonly libraryClass?: boolean;
  /**
   * Registered after the container's bootstrap, once the other beans were named and tracked by name (NestJS's
   * middleware, which `configure()` applies in `init()`): named after every other bean, so that its clash with one
   * of them (`providers: [LoggerMiddleware]` beside `consumer.apply(LoggerMiddleware)`) renames it, never the bean
   * Phase 2 already tracks under its name.
   */
  readonly namedLast?: boolean;
  /**
   * For a lazy container, which creates a binding when it is first resolved rather than at start-up
   * (InversifyJS, tsyringe, awilix): whether the binding had been resolved by the time the application was
   * ready. Undefined for a container that creates its singletons while it starts (NestJS).
   */
  readonly resolved?: boolean;
}

/** An entry point the framework calls, tied to its handler: the bean and the method the framework invokes. */
export interface EndpointRecord {
  /** What calls it. */
  readonly kind:
    'http' | 'graphql' | 'rpc' | 'event' | 'ws' | 'cron' | 'interval' | 'timeout' | 'cqrs' | 'queue' | 'command';
  /**
   * As the user knows it: 'GET /api/v1/items/:id', 'Query.items', the event name, the job's name, the pattern, a
   * command line's words ('new user').
   */
  readonly route: string;
  /**
   * GraphQL only: the path of the API that serves the field (`/shop-api`), when the application's GraphQL modules
   * say it. An application serving two APIs (Vendure's shop and admin) has a `Query.product` in each: the path tells
   * them apart, and a resolver whose module feeds both APIs has one endpoint in each.
   */
  readonly path?: string;
  /** The handler bean's name, exactly as the report names beans (BeanGraph node name). */
  readonly bean: string;
  /** The handler's method name on the bean's class (a key of its prototype chain). */
  readonly method: string;
  /** Jobs only: how often it fires, to judge silence fairly (a yearly cron is never judged within a 14-day window). */
  readonly schedule?: { readonly everyMs?: number; readonly cron?: string; readonly nextAt?: string };
  /**
   * Why the process that read it does not serve it, when it does not: the transport its kind needs is not there
   * (an `@MessagePattern` in an HTTP application that connects no microservice, a route in an application context).
   * No call could reach it in that process, so its silence there is no evidence that it is dead.
   */
  readonly unserved?: string;
}

/**
 * How a person and a baseline name an endpoint: its kind, the API's path when it has one, and its route
 * (`http GET /items`, `graphql /shop-api Query.product`, `event order.created`). Unique within an inventory but for
 * the handler.
 */
export function endpointName(e: Pick<EndpointRecord, 'kind' | 'route' | 'path'>): string {
  return e.path !== undefined ? `${e.kind} ${e.path} ${e.route}` : `${e.kind} ${e.route}`;
}

/** A bean in the graph: its input plus the unique name the reports use. */
export interface Bean extends BeanInput {
  readonly id: number;
  /**
   * Unique within the graph: the token's plain name, or `<module>/<token>` when two beans in different
   * modules share a token name (`<token>[<class>]` without modules), with `#2`, `#3`... appended if even that
   * collides (see {@link uniqueBeanNames}).
   */
  name: string;
}

export interface Edge {
  readonly from: number;
  readonly to: number;
  readonly kind: EdgeKind;
}

export class BeanGraph {
  private readonly beanList: Bean[] = [];
  private readonly edgeList: Edge[] = [];
  private readonly edgeKeys = new Set<string>();
  private readonly inDegrees: number[] = [];
  private readonly outgoing: number[][] = [];
  private namesAssigned = false;
  /**
   * Every entry point the framework calls, each tied to its handler bean and method, when the adapter can read
   * them (NestJS: at the end of bootstrap, after ready, off the boot path). Undefined when it cannot.
   */
  endpoints?: readonly EndpointRecord[];

  /** Adds a bean and returns its id. */
  addBean(input: BeanInput): number {
    const id = this.beanList.length;
    this.beanList.push({ ...input, id, name: input.token });
    this.inDegrees.push(0);
    this.outgoing.push([]);
    this.namesAssigned = false;
    return id;
  }

  /** Adds the edge `from` needs `to`. Repeated edges (same pair and kind) count once. */
  addEdge(from: number, to: number, kind: EdgeKind): void {
    this.check(from);
    this.check(to);
    const key = `${from}>${to}>${kind}`;
    if (this.edgeKeys.has(key)) return;
    this.edgeKeys.add(key);
    this.edgeList.push({ from, to, kind });
    // In-degree counts distinct dependents, so one bean injecting another twice is still one dependent.
    if (!this.outgoing[from].includes(to)) {
      this.outgoing[from].push(to);
      this.inDegrees[to] += 1;
    }
  }

  get size(): number {
    return this.beanList.length;
  }

  bean(id: number): Bean {
    this.check(id);
    this.assignNames();
    return this.beanList[id];
  }

  beans(): readonly Bean[] {
    this.assignNames();
    return this.beanList;
  }

  edges(): readonly Edge[] {
    return this.edgeList;
  }

  /** Number of distinct beans that depend on `id`. */
  inDegree(id: number): number {
    this.check(id);
    return this.inDegrees[id];
  }

  /** Ids of the beans `id` depends on. */
  dependencies(id: number): readonly number[] {
    this.check(id);
    return this.outgoing[id];
  }

  /**
   * Groups of beans that depend on each other in a cycle (forwardRef in NestJS), each group sorted by name.
   * Tarjan's algorithm, iterative so that a deep chain cannot overflow the stack.
   */
  cycles(): string[][] {
    this.assignNames();
    const n = this.beanList.length;
    const index = new Array<number>(n).fill(-1);
    const low = new Array<number>(n).fill(0);
    const onStack = new Array<boolean>(n).fill(false);
    const stack: number[] = [];
    const out: string[][] = [];
    let counter = 0;
    for (let root = 0; root < n; root++) {
      if (index[root] !== -1) continue;
      const work: Array<[node: number, next: number]> = [[root, 0]];
      index[root] = low[root] = counter++;
      stack.push(root);
      onStack[root] = true;
      while (work.length > 0) {
        const frame = work[work.length - 1];
        const [v, i] = frame;
        const deps = this.outgoing[v];
        if (i < deps.length) {
          frame[1] = i + 1;
          const w = deps[i];
          if (index[w] === -1) {
            index[w] = low[w] = counter++;
            stack.push(w);
            onStack[w] = true;
            work.push([w, 0]);
          } else if (onStack[w]) {
            low[v] = Math.min(low[v], index[w]);
          }
          continue;
        }
        work.pop();
        if (work.length > 0) {
          const parent = work[work.length - 1][0];
          low[parent] = Math.min(low[parent], low[v]);
        }
        if (low[v] === index[v]) {
          const component: number[] = [];
          let w: number;
          do {
            w = stack.pop()!;
            onStack[w] = false;
            component.push(w);
          } while (w !== v);
          if (component.length > 1 || this.outgoing[v].includes(v)) {
            out.push(component.map((id) => this.beanList[id].name).sort());
          }
        }
      }
    }
    return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  private check(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.beanList.length) {
      throw new RangeError(`no bean with id ${id} (graph has ${this.beanList.length})`);
    }
  }

  /** Names are settled lazily, once every bean is known, so that a clash found late renames both sides. */
  private assignNames(): void {
    if (this.namesAssigned) return;
    this.namesAssigned = true;
    const names = uniqueBeanNames(this.beanList);
    for (let i = 0; i < names.length; i++) this.beanList[i].name = names[i];
  }
}

/**
 * The reports' unique bean names, in input order: the token's plain name, or `<module>/<token>` when two beans
 * share a token name (a lazy container's, which has no modules: `<token>[<class>]`, as tsyringe's `Endpoint`
 * registered once per endpoint class), with `#2`, `#3`... appended if even that collides. Qualified by what the
 * bean is rather than numbered by its order, a name stays when another bean of the token comes or goes, while two
 * or more remain (an outside trial's `Endpoint#2` became `#3` when an endpoint file was added). Beans `namedLast` are named in a second
 * round, after the others and around their names. Exported so that an adapter can name beans before it builds the
 * whole graph (the NestJS adapter, to track instances under the report's names).
 */
export function uniqueBeanNames(
  beans: ReadonlyArray<{
    readonly token: string;
    readonly module?: string;
    readonly className?: string;
    readonly namedLast?: boolean;
  }>,
): string[] {
  if (!beans.some((b) => b.namedLast === true)) return namesAround(beans, new Set());
  const last: number[] = [];
  const first: number[] = [];
  beans.forEach((b, i) => (b.namedLast === true ? last : first).push(i));
  const names = new Array<string>(beans.length);
  const firstNames = namesAround(
    first.map((i) => beans[i]),
    new Set(),
  );
  first.forEach((i, k) => (names[i] = firstNames[k]));
  const lastNames = namesAround(
    last.map((i) => beans[i]),
    new Set(firstNames),
  );
  last.forEach((i, k) => (names[i] = lastNames[k]));
  return names;
}

/** {@link uniqueBeanNames} for one round: `taken` holds the names an earlier round gave, which none may take. */
function namesAround(
  beans: ReadonlyArray<{ readonly token: string; readonly module?: string; readonly className?: string }>,
  taken: Set<string>,
): string[] {
  const count = new Map<string, number>();
  for (const bean of beans) count.set(bean.token, (count.get(bean.token) ?? 0) + 1);
  // A token already named in an earlier round clashes as if it were repeated here.
  for (const token of count.keys()) if (taken.has(token)) count.set(token, 2);
  for (const [token, n] of count) if (n === 1) taken.add(token);
  const names = new Array<string>(beans.length);
  // Clashing tokens in first-seen order, each group's beans in input order: the order the names were given in.
  const groups = new Map<string, number[]>();
  for (let i = 0; i < beans.length; i++) {
    const token = beans[i].token;
    if (count.get(token) === 1) {
      names[i] = token;
      continue;
    }
    const group = groups.get(token);
    if (group) group.push(i);
    else groups.set(token, [i]);
  }
  for (const [token, group] of groups) {
    for (const i of group) {
      const { module, className } = beans[i];
      const base =
        module !== undefined
          ? `${module}/${token}`
          : className !== undefined && className !== token
            ? `${token}[${className}]`
            : token;
      let name = base;
      for (let n = 2; taken.has(name); n++) name = `${base}#${n}`;
      taken.add(name);
      names[i] = name;
    }
  }
  return names;
}
