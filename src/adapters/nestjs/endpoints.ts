/**
 * The inventory of every entry point of a NestJS application, each tied to its handler (the bean and the method
 * the framework invokes): HTTP routes as served, GraphQL fields, microservice patterns, WebSocket messages,
 * `@OnEvent` listeners, `@Cron` / `@Interval` / `@Timeout` jobs, CQRS and queue handlers. Read after ready with
 * the analysis, never on the boot path, from the metadata each library itself reads to wire its handlers: the
 * keys are written out here, so that none of those packages is loaded (or needed) to read them. A library that
 * is not installed simply has no metadata to find.
 */
import type { EndpointRecord } from '../../ghost/analysis/bean-graph';
import { nextCronTime } from '../../ghost/analysis/cron';
import type { MetadataApi } from '../../shared/reflect-metadata';
import { controllerRouting, httpSettings, methodRoutes, modulePath, type HttpSettings } from './http-routes';
import { dataProperty, inspectable } from './inert-read';
import { className } from './names';
import type { NestContainer, NestInstanceWrapper, NestModule } from './nest-types';

// @nestjs/graphql
const RESOLVER_TYPE = 'graphql:resolver_type';
const RESOLVER_NAME = 'graphql:resolver_name';
const RESOLVER_PROPERTY = 'graphql:resolve_property';
const RESOLVER_REFERENCE = 'graphql:resolve_reference';
const GRAPHQL_ROOT_TYPES: ReadonlySet<unknown> = new Set(['Query', 'Mutation', 'Subscription']);
/** The token of each `GraphQLModule.forRoot…()`'s options (`GRAPHQL_MODULE_OPTIONS`): one per GraphQL API served. */
const GRAPHQL_MODULE_OPTIONS = 'GqlModuleOptions';
/** `@nestjs/graphql`'s default path, when the options name none. */
const GRAPHQL_DEFAULT_PATH = '/graphql';
// @nestjs/microservices
const PATTERN = 'microservices:pattern';
// @nestjs/websockets
const GATEWAY = 'websockets:is_gateway';
const MESSAGE_MAPPING = 'websockets:message_mapping';
const MESSAGE = 'message';
// @nestjs/event-emitter
const EVENT_LISTENER = 'EVENT_LISTENER_METADATA';
// @nestjs/schedule: SchedulerType 1 CRON, 2 TIMEOUT, 3 INTERVAL
const SCHEDULER_TYPE = 'SCHEDULER_TYPE';
const SCHEDULER_NAME = 'SCHEDULER_NAME';
const CRON_OPTIONS = 'SCHEDULE_CRON_OPTIONS';
const INTERVAL_OPTIONS = 'SCHEDULE_INTERVAL_OPTIONS';
// @nestjs/cqrs: the handler's class carries what it handles; Nest calls `execute` (commands, queries) or `handle`.
const CQRS_HANDLERS: ReadonlyArray<readonly [key: string, method: string]> = [
  ['__commandHandler__', 'execute'],
  ['__queryHandler__', 'execute'],
  ['__eventsHandler__', 'handle'],
];
// Command lines: nestjs-console's `@Console()` class and its `@Command()` methods (metadata on the prototype and
// the method's name); nest-commander's `@Command()` / `@SubCommand()` class, whose `run` the runner calls.
const CONSOLE = 'nests-console.Console';
const CONSOLE_COMMAND = 'nests-console.Command:';
const COMMANDER_COMMANDS: readonly string[] = ['CommandBuilder:Command:Meta', 'CommandBuilder:Subcommand:Meta'];
// @nestjs/bullmq: a `WorkerHost` whose `process` the worker calls; @nestjs/bull: `@Process()` methods.
const BULLMQ_PROCESSOR = 'bullmq:processor_metadata';
const BULL_QUEUE = 'bull:module_queue';
const BULL_PROCESS = 'bull:module_queue_process';

/** The order the inventory lists kinds in: what a person reads first. */
const KIND_ORDER: readonly EndpointRecord['kind'][] = [
  'http',
  'graphql',
  'rpc',
  'ws',
  'event',
  'cron',
  'interval',
  'timeout',
  'cqrs',
  'queue',
  'command',
];

/** A bean's class and its methods, as one reader sees them. */
interface HandlerClass {
  readonly bean: string;
  readonly cls: Function;
  readonly role: 'controller' | 'provider';
  readonly host: NestModule;
  /** Method name → the function on the prototype chain (the nearest one), in declaration order. */
  readonly methods: ReadonlyMap<string, Function>;
  /**
   * The methods that carry metadata of their own: the only ones a decorator made a handler. Asked once per
   * method, so that the dozen keys are read only where a decorator wrote something (on 1,000 providers of a
   * few methods each, most have none).
   */
  readonly decorated: ReadonlyMap<string, Function>;
}

/**
 * A GraphQL API the application serves: the path it is served at and the modules whose resolvers make its schema
 * (undefined: every module's). Vendure serves two (`/shop-api`, `/admin-api`), where `Query.product` of one is not
 * `Query.product` of the other.
 */
interface GraphqlApi {
  readonly path: string;
  readonly modules: ReadonlySet<NestModule> | undefined;
}

interface InventoryContext {
  readonly meta: MetadataApi;
  readonly http: HttpSettings | undefined;
  /** The GraphQL APIs, when the container has readable `GraphQLModule` options; empty when it has none. */
  readonly graphqlApis: readonly GraphqlApi[];
  /** A cron job's next fire time as `@nestjs/schedule` planned it, by job name, when its registry is readable. */
  readonly plannedCron: (name: string) => string | undefined;
  readonly now: Date;
}

/**
 * The transports a process serves its container's endpoints through, from the applications built on it: an HTTP
 * application (`NestFactory.create`) serves routes, GraphQL and gateways, and patterns when a microservice is
 * connected to it (`connectMicroservice`); a microservice (`createMicroservice`) serves patterns and gateways; an
 * application context (`createApplicationContext`: a worker, a CLI) serves none of them. Told apart by their
 * methods, not their class names (a minified bundle renames classes). Each kind is the reason it is not served,
 * undefined when it is.
 */
export interface ServedTransports {
  readonly http?: string;
  readonly rpc?: string;
  readonly ws?: string;
  /** Command lines run in an application context (nestjs-console, nest-commander), never beside a server. */
  readonly command?: string;
}

/**
 * What `apps` (the applications whose `onModuleInit` phase ran on one container) serve; undefined when none is
 * known, when nothing is said to be unserved. Read when the inventory is, after ready: a microservice connected
 * after the first `listen()` is not seen, and its patterns read as not served (no verdict, never a finding).
 */
export function servedTransports(apps: readonly unknown[]): ServedTransports | undefined {
  if (apps.length === 0) return undefined;
  const fn = (app: unknown, name: string): boolean =>
    typeof (app as Record<string, unknown> | null)?.[name] === 'function';
  const http = apps.filter((app) => fn(app, 'getHttpAdapter') && fn(app, 'getMicroservices'));
  const microservice = apps.some((app) => fn(app, 'registerListeners'));
  const connected = http.some((app) => {
    const list = safely(() => (app as { getMicroservices(): unknown }).getMicroservices());
    return Array.isArray(list) && list.length > 0;
  });
  const context = 'this process runs an application context (createApplicationContext), which serves no';
  return {
    ...(http.length > 0
      ? {}
      : { http: microservice ? 'this process runs a microservice, which serves no HTTP' : `${context} HTTP` }),
    ...(microservice || connected
      ? {}
      : {
          rpc:
            http.length > 0
              ? 'its HTTP application connects no microservice (app.connectMicroservice)'
              : `${context} microservice transport`,
        }),
    ...(http.length > 0 || microservice ? {} : { ws: `${context} WebSocket gateway` }),
    ...(http.length > 0 || microservice
      ? {
          command: `this process runs ${http.length > 0 ? 'an HTTP application' : 'a microservice'}, not the command line`,
        }
      : {}),
  };
}

/** Why `kind` is not served by `transports`, when it is not. */
function unservedReason(kind: EndpointRecord['kind'], transports: ServedTransports): string | undefined {
  switch (kind) {
    case 'http':
    case 'graphql':
      return transports.http;
    case 'rpc':
      return transports.rpc;
    case 'ws':
      return transports.ws;
    case 'command':
      return transports.command;
    default:
      // Listeners, jobs, CQRS and queue handlers are wired inside the container, whatever the application.
      return undefined;
  }
}

/**
 * Every entry point of the container, sorted by kind, route, bean and method. `beanNames` gives the report's
 * name of each wrapper (a wrapper without one is not in the report and is skipped). `transports`, when known,
 * marks what the process does not serve (`unserved`).
 */
export function readEndpoints(
  container: NestContainer,
  meta: MetadataApi,
  beanNames: ReadonlyMap<NestInstanceWrapper, string>,
  now = new Date(),
  transports?: ServedTransports,
): EndpointRecord[] {
  const classes = handlerClasses(container, meta, beanNames);
  const ctx: InventoryContext = {
    meta,
    // A process known to serve no HTTP still lists its controllers' routes, as declared (no prefix, no version:
    // nothing serves them), so that their handlers' silence is said to be no evidence.
    http:
      httpSettings(container) ??
      (transports?.http !== undefined
        ? { globalPrefix: '', exclude: [], versioning: undefined, applicationId: container.getModules().applicationId }
        : undefined),
    graphqlApis: graphqlApis(container),
    plannedCron: cronRegistry(container),
    now,
  };
  const out: EndpointRecord[] = [];
  const seen = new Set<string>();
  const add = (record: EndpointRecord): void => {
    const key = `${record.kind}\u0000${record.path ?? ''}\u0000${record.route}\u0000${record.bean}\u0000${record.method}`;
    if (seen.has(key)) return;
    seen.add(key);
    const unserved = transports === undefined ? undefined : unservedReason(record.kind, transports);
    out.push(unserved === undefined ? record : { ...record, unserved });
  };
  for (const handler of classes) {
    if (handler.role === 'controller') {
      httpEndpoints(ctx, handler, add);
      rpcEndpoints(ctx, handler, add);
    }
    graphqlEndpoints(ctx, handler, add);
    if (handler.role === 'provider') wsEndpoints(ctx, handler, add);
    eventEndpoints(ctx, handler, add);
    jobEndpoints(ctx, handler, add);
    if (handler.role === 'provider') {
      cqrsEndpoints(ctx, handler, add);
      queueEndpoints(ctx, handler, add);
      commandEndpoints(ctx, handler, add);
    }
  }
  return out.sort(
    (a, b) =>
      KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) ||
      compare(a.route, b.route) ||
      compare(a.path ?? '', b.path ?? '') ||
      compare(a.bean, b.bean) ||
      compare(a.method, b.method),
  );
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Controllers and class providers of every module, each wrapper once, with their methods. */
function handlerClasses(
  container: NestContainer,
  meta: MetadataApi,
  beanNames: ReadonlyMap<NestInstanceWrapper, string>,
): HandlerClass[] {
  const out: HandlerClass[] = [];
  const seen = new Set<NestInstanceWrapper>();
  for (const mod of container.getModules().values()) {
    for (const [collection, role] of [
      ['controllers', 'controller'],
      ['providers', 'provider'],
    ] as const) {
      const map = mod[collection];
      if (!(map instanceof Map)) continue;
      for (const wrapper of map.values()) {
        if (!wrapper || seen.has(wrapper)) continue;
        seen.add(wrapper);
        const bean = beanNames.get(wrapper);
        const cls = wrapper.metatype;
        // A factory's or a value's metatype is no class whose methods the framework calls.
        if (bean === undefined || typeof cls !== 'function' || wrapper.inject != null || !inspectable(cls)) continue;
        const methods = methodsOf(cls);
        const decorated = new Map([...methods].filter(([, fn]) => meta.getOwnMetadataKeys(fn).length > 0));
        out.push({ bean, cls, role, host: wrapper.host ?? mod, methods, decorated });
      }
    }
  }
  return out;
}

/**
 * The methods of a class's prototype chain, as the libraries scan them (Nest's `MetadataScanner`): data
 * properties holding functions, the nearest one of each name, the constructor left out. No getter is run.
 */
function methodsOf(cls: Function): Map<string, Function> {
  const methods = new Map<string, Function>();
  let proto = dataProperty(cls, 'prototype');
  for (; inspectable(proto) && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || methods.has(name)) continue;
      const d = Object.getOwnPropertyDescriptor(proto, name);
      if (d && 'value' in d && typeof d.value === 'function' && inspectable(d.value)) {
        methods.set(name, d.value as Function);
      }
    }
  }
  return methods;
}

type Add = (record: EndpointRecord) => void;

function httpEndpoints(ctx: InventoryContext, h: HandlerClass, add: Add): void {
  if (ctx.http === undefined) return;
  const routing = controllerRouting(ctx.meta, ctx.http, h.cls, modulePath(ctx.meta, ctx.http, h.host));
  if (routing === undefined) return;
  for (const [method, fn] of h.decorated) {
    for (const route of methodRoutes(ctx.meta, ctx.http, routing, fn))
      add({ kind: 'http', route, bean: h.bean, method });
  }
}

/**
 * `Type.field` as the schema names it, by the rules of `@nestjs/graphql`'s resolver explorer: the method's
 * type or else the class's (`@Resolver('Item')`, `@Resolver(() => Item)`), the decorator's name or else the
 * method's; a plain method counts on a root type (`Query`, `Mutation`, `Subscription`) only.
 */
function graphqlEndpoints(ctx: InventoryContext, h: HandlerClass, add: Add): void {
  const classType = ctx.meta.getMetadata(RESOLVER_TYPE, h.cls);
  const paths = graphqlPaths(ctx, h);
  // On a resolver class every method counts (a plain one on `@Resolver('Query')` resolves a field); elsewhere only
  // a decorated one can.
  for (const [method, fn] of classType !== undefined ? h.methods : h.decorated) {
    const type = ctx.meta.getMetadata(RESOLVER_TYPE, fn) || classType;
    if (typeof type !== 'string') continue;
    const reference = !!ctx.meta.getMetadata(RESOLVER_REFERENCE, fn);
    const property = !!ctx.meta.getMetadata(RESOLVER_PROPERTY, fn);
    if (!reference && !property && !GRAPHQL_ROOT_TYPES.has(type)) continue;
    const name = reference ? '__resolveReference' : ctx.meta.getMetadata(RESOLVER_NAME, fn) || method;
    const route = `${type}.${String(name)}`;
    if (paths.length === 0) add({ kind: 'graphql', route, bean: h.bean, method });
    for (const path of paths) add({ kind: 'graphql', route, path, bean: h.bean, method });
  }
}

/**
 * The paths of the APIs whose schema a resolver class's module feeds, by `@nestjs/graphql`'s own rule (its
 * explorer's `getModules`): an API without `include` takes every module's resolvers, one with `include` those of
 * the modules named and, transitively, of what they import. Empty when no API is known (the field then says no
 * path), and when none takes this module (a resolver outside every `include`: listed as before, without a path).
 */
function graphqlPaths(ctx: InventoryContext, h: HandlerClass): string[] {
  return ctx.graphqlApis.filter((api) => api.modules === undefined || api.modules.has(h.host)).map((api) => api.path);
}

/**
 * Every `GraphQLModule` of the container with the path it serves: the module's own `completeOptions.path` once it
 * started (normalized, the global prefix in when `useGlobalPrefix` asks), else the options' `path` or the default.
 * Read from data properties only: a factory's options object is the application's.
 */
function graphqlApis(container: NestContainer): GraphqlApi[] {
  const modules = [...container.getModules().values()];
  const apis: GraphqlApi[] = [];
  // One API per options object, should a module other than its GraphQLModule hold the same provider.
  const seen = new Set<object>();
  for (const mod of modules) {
    const options = mod.providers?.get(GRAPHQL_MODULE_OPTIONS)?.instance;
    if (!inspectable(options) || seen.has(options)) continue;
    seen.add(options);
    const started = dataProperty(mod.providers?.get(mod.metatype)?.instance, 'completeOptions');
    const path = dataProperty(started, 'path') ?? dataProperty(options, 'path');
    const include = dataProperty(options, 'include');
    apis.push({
      path: typeof path === 'string' && path !== '' ? `/${path.replace(/^\/+|\/+$/g, '')}` : GRAPHQL_DEFAULT_PATH,
      modules: Array.isArray(include) && include.length > 0 ? includedModules(modules, include) : undefined,
    });
  }
  return apis;
}

/** The modules `include` names and, transitively, those they import (as `@nestjs/graphql` 13 explores them). */
function includedModules(modules: readonly NestModule[], include: readonly unknown[]): Set<NestModule> {
  const out = new Set<NestModule>();
  const toCheck = modules.filter((m) => include.includes(m.metatype));
  for (let next = toCheck.pop(); next !== undefined; next = toCheck.pop()) {
    if (out.has(next)) continue;
    out.add(next);
    for (const imported of next.imports ?? []) toCheck.push(imported);
  }
  return out;
}

/** `@MessagePattern` and `@EventPattern`: the pattern, an object one as the JSON Nest routes by (keys sorted). */
function rpcEndpoints(ctx: InventoryContext, h: HandlerClass, add: Add): void {
  for (const [method, fn] of h.decorated) {
    const patterns = ctx.meta.getMetadata(PATTERN, fn);
    if (!Array.isArray(patterns)) continue;
    for (const pattern of patterns) add({ kind: 'rpc', route: patternRoute(pattern), bean: h.bean, method });
  }
}

function patternRoute(pattern: unknown): string {
  if (typeof pattern === 'string' || typeof pattern === 'number') return String(pattern);
  try {
    return JSON.stringify(pattern, (_key, value: unknown) =>
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => compare(a, b)))
        : value,
    );
  } catch {
    return String(pattern);
  }
}

/** `@SubscribeMessage('chat')` on a `@WebSocketGateway()`: the message. */
function wsEndpoints(ctx: InventoryContext, h: HandlerClass, add: Add): void {
  if (!ctx.meta.getMetadata(GATEWAY, h.cls)) return;
  for (const [method, fn] of h.decorated) {
    if (!ctx.meta.getMetadata(MESSAGE_MAPPING, fn)) continue;
    add({ kind: 'ws', route: eventName(ctx.meta.getMetadata(MESSAGE, fn)), bean: h.bean, method });
  }
}

/** `@OnEvent('order.created')`: the event; a namespaced one (`['order', 'created']`) joined with dots. */
function eventEndpoints(ctx: InventoryContext, h: HandlerClass, add: Add): void {
  for (const [method, fn] of h.decorated) {
    const listeners = ctx.meta.getMetadata(EVENT_LISTENER, fn);
    if (!Array.isArray(listeners)) continue;
    for (const listener of listeners) {
      const event = (listener as { event?: unknown } | null)?.event;
      const events = Array.isArray(event) ? [event.map(eventName).join('.')] : [eventName(event)];
      for (const route of events) add({ kind: 'event', route, bean: h.bean, method });
    }
  }
}

function eventName(event: unknown): string {
  if (typeof event === 'symbol') return event.description ?? 'Symbol()';
  return String(event);
}

/**
 * `@Cron`, `@Interval`, `@Timeout`: the job's name (`Class.method` when it has none), with its schedule: the
 * cron expression and when it next fires, or the interval.
 */
function jobEndpoints(ctx: InventoryContext, h: HandlerClass, add: Add): void {
  for (const [method, fn] of h.decorated) {
    const type = ctx.meta.getMetadata(SCHEDULER_TYPE, fn);
    if (type !== 1 && type !== 2 && type !== 3) continue;
    const named = ctx.meta.getMetadata(SCHEDULER_NAME, fn);
    const route = typeof named === 'string' && named !== '' ? named : `${className(h.cls)}.${method}`;
    if (type === 1) {
      const cronTime = (ctx.meta.getMetadata(CRON_OPTIONS, fn) as { cronTime?: unknown } | undefined)?.cronTime;
      add({ kind: 'cron', route, bean: h.bean, method, schedule: cronSchedule(ctx, named, cronTime) });
    } else if (type === 3) {
      const every = (ctx.meta.getMetadata(INTERVAL_OPTIONS, fn) as { timeout?: unknown } | undefined)?.timeout;
      add({
        kind: 'interval',
        route,
        bean: h.bean,
        method,
        ...(typeof every === 'number' ? { schedule: { everyMs: every } } : {}),
      });
    } else {
      // A timeout fires once, its delay after start: no schedule to judge silence by (SCHEDULE_TIMEOUT_OPTIONS).
      add({ kind: 'timeout', route, bean: h.bean, method });
    }
  }
}

/**
 * A cron's expression and next fire time: as `@nestjs/schedule` planned it for a named job (its registry's
 * `CronJob`, which knows the job's time zone), else from the expression in local time. A `Date` (a one-off
 * job) fires at that date.
 */
function cronSchedule(ctx: InventoryContext, name: unknown, cronTime: unknown): EndpointRecord['schedule'] {
  if (cronTime instanceof Date) return { nextAt: cronTime.toISOString() };
  if (typeof cronTime !== 'string') return {};
  const planned = typeof name === 'string' ? ctx.plannedCron(name) : undefined;
  const next = planned ?? nextCronTime(cronTime, ctx.now)?.toISOString();
  return { cron: cronTime, ...(next !== undefined ? { nextAt: next } : {}) };
}

/**
 * `@nestjs/schedule`'s `SchedulerRegistry`, when the container has one: each named cron job's next date as its
 * `CronJob` (the `cron` package) computes it. Only a job's own `nextDate()` is called, and nothing it throws
 * goes further; a job not found (unnamed jobs are registered under a random id) is computed from its expression.
 */
function cronRegistry(container: NestContainer): (name: string) => string | undefined {
  let jobs: unknown;
  for (const mod of container.getModules().values()) {
    for (const wrapper of mod.providers?.values() ?? []) {
      const token = wrapper?.token;
      if (typeof token !== 'function' || token.name !== 'SchedulerRegistry') continue;
      const registry = wrapper.instance;
      const getJobs = inspectable(registry) ? dataProperty(registry, 'getCronJobs') : undefined;
      if (typeof getJobs === 'function') jobs = safely(() => getJobs.call(registry));
    }
  }
  if (!(jobs instanceof Map)) return () => undefined;
  const cronJobs = jobs;
  return (name) =>
    safely(() => {
      const job: unknown = cronJobs.get(name);
      const nextDate = inspectable(job) ? dataProperty(job, 'nextDate') : undefined;
      if (typeof nextDate !== 'function') return undefined;
      const next = (nextDate.call(job) as { toJSDate?: () => Date } | undefined)?.toJSDate?.();
      return next instanceof Date && !Number.isNaN(next.getTime()) ? next.toISOString() : undefined;
    });
}

function safely<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/** `@CommandHandler(CreateItem)`, `@QueryHandler(…)`, `@EventsHandler(A, B)`: the message class's name. */
function cqrsEndpoints(ctx: InventoryContext, h: HandlerClass, add: Add): void {
  for (const [key, method] of CQRS_HANDLERS) {
    const handled = ctx.meta.getMetadata(key, h.cls);
    if (handled === undefined || !h.methods.has(method)) continue;
    for (const message of Array.isArray(handled) ? handled : [handled]) {
      add({ kind: 'cqrs', route: messageName(message), bean: h.bean, method });
    }
  }
}

function messageName(message: unknown): string {
  if (typeof message === 'function') return className(message);
  if (typeof message === 'string') return message;
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : String(message);
}

/** `@Processor('emails')` (BullMQ: its `process`), `@Process('send')` (Bull): the queue, and the job's name. */
function queueEndpoints(ctx: InventoryContext, h: HandlerClass, add: Add): void {
  const processor = ctx.meta.getMetadata(BULLMQ_PROCESSOR, h.cls);
  if (processor !== undefined && h.methods.has('process')) {
    add({ kind: 'queue', route: queueName(processor), bean: h.bean, method: 'process' });
  }
  const queue = ctx.meta.getMetadata(BULL_QUEUE, h.cls);
  if (queue === undefined) return;
  for (const [method, fn] of h.decorated) {
    const process = ctx.meta.getMetadata(BULL_PROCESS, fn);
    if (process === undefined) continue;
    const job = (process as { name?: unknown } | null)?.name;
    add({
      kind: 'queue',
      route: typeof job === 'string' ? `${queueName(queue)}:${job}` : queueName(queue),
      bean: h.bean,
      method,
    });
  }
}

function queueName(options: unknown): string {
  if (typeof options === 'string') return options;
  const name = (options as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : 'default';
}

/** A command line's words up to its first argument: `user <email> [name]` is `user`. */
function commandWords(spec: unknown): string | undefined {
  if (typeof spec !== 'string') return undefined;
  const words: string[] = [];
  for (const word of spec.trim().split(/\s+/)) {
    if (word === '' || word.startsWith('<') || word.startsWith('[') || word.startsWith('-')) break;
    words.push(word);
  }
  return words.length > 0 ? words.join(' ') : undefined;
}

/** Command-line handlers: nestjs-console's `@Command()` methods, nest-commander's commands' `run`. */
function commandEndpoints(ctx: InventoryContext, h: HandlerClass, add: Add): void {
  const console = ctx.meta.getMetadata(CONSOLE, h.cls);
  const proto = console !== undefined ? dataProperty(h.cls, 'prototype') : undefined;
  if (proto !== null && typeof proto === 'object') {
    const group = commandWords((console as { command?: unknown } | null)?.command);
    for (const method of h.methods.keys()) {
      const command = commandWords(
        (ctx.meta.getMetadata(CONSOLE_COMMAND, proto, method) as { command?: unknown } | undefined)?.command,
      );
      if (command === undefined) continue;
      add({ kind: 'command', route: group !== undefined ? `${group} ${command}` : command, bean: h.bean, method });
    }
  }
  for (const key of COMMANDER_COMMANDS) {
    const name = commandWords((ctx.meta.getMetadata(key, h.cls) as { name?: unknown } | undefined)?.name);
    if (name !== undefined && h.methods.has('run')) add({ kind: 'command', route: name, bean: h.bean, method: 'run' });
  }
}
