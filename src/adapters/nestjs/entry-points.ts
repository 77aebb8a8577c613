import type { ClassOriginIndex } from '../../ghost/origins/class-origin';
import type { BeanRole } from '../../ghost/analysis/bean-graph';
import { isDataAccessBase } from './data-access-bases';
import { dataProperty, inspectable } from './inert-read';
import { className } from './names';

/**
 * Signs that NestJS, or a Nest library, calls into a bean on its own. Detection errs broad on purpose: a false
 * match only shortens a LOW-confidence list, a miss puts a working bean on it.
 *
 * Keys are the libraries' own metadata constants, written out here so that none of those packages has to be
 * installed (or loaded) for the check to run.
 */
const METADATA_ENTRY_POINTS: ReadonlyMap<string, string> = new Map([
  // @nestjs/common
  ['__controller__', 'controller'],
  ['__filterCatchExceptions__', 'exception-filter'],
  // @nestjs/schedule
  ['SCHEDULER_TYPE', 'scheduled'],
  ['SCHEDULE_CRON_OPTIONS', 'scheduled:cron'],
  ['SCHEDULE_INTERVAL_OPTIONS', 'scheduled:interval'],
  ['SCHEDULE_TIMEOUT_OPTIONS', 'scheduled:timeout'],
  // @nestjs/event-emitter
  ['EVENT_LISTENER_METADATA', 'event-listener'],
  // @nestjs/microservices (also Kafka, RabbitMQ, NATS... transports)
  ['microservices:pattern', 'message-handler'],
  ['microservices:handler_type', 'message-handler'],
  // @nestjs/websockets
  ['websockets:is_gateway', 'websocket-gateway'],
  ['websockets:message_mapping', 'websocket-handler'],
  // @nestjs/graphql
  ['graphql:resolver_type', 'graphql-resolver'],
  ['graphql:resolver_name', 'graphql-resolver'],
  ['graphql:resolve_property', 'graphql-resolver'],
  ['graphql:resolve_reference', 'graphql-resolver'],
  // @nestjs/cqrs
  ['__commandHandler__', 'cqrs-command-handler'],
  ['__queryHandler__', 'cqrs-query-handler'],
  ['__eventsHandler__', 'cqrs-events-handler'],
  ['__saga__', 'cqrs-saga'],
  // @nestjs/bull
  ['bull:module_queue', 'bull-processor'],
  ['bull:module_queue_process', 'bull-processor'],
  ['bull:module_on_queue_event', 'bull-processor'],
  // @nestjs/bullmq
  ['bullmq:processor_metadata', 'bullmq-processor'],
  ['bullmq:worker_metadata', 'bullmq-processor'],
  ['bullmq:queue_events_listener_metadata', 'bullmq-listener'],
  ['bullmq:worker_events_metadata', 'bullmq-listener'],
  ['bullmq:queue_events_metadata', 'bullmq-listener'],
  // nestjs-console (`@Console()`); nest-commander's keys are all `CommandBuilder:` (below)
  ['nests-console.Console', 'cli-command'],
]);

/** Namespaces whose every key marks a framework-invoked handler, for keys added after this list was written. */
const METADATA_PREFIXES: ReadonlyArray<[string, string]> = [
  ['microservices:', 'message-handler'],
  ['websockets:', 'websocket-handler'],
  ['graphql:', 'graphql-resolver'],
  ['bull:', 'bull-processor'],
  ['bullmq:', 'bullmq-processor'],
  ['CommandBuilder:', 'cli-command'],
];

/** Symbol-keyed metadata, matched by description (@golevelup/nestjs-rabbitmq uses `Symbol('RABBIT_HANDLER')`). */
const SYMBOL_ENTRY_POINTS: ReadonlyMap<string, string> = new Map([['RABBIT_HANDLER', 'rabbitmq-subscriber']]);

/** Methods the framework calls by name: lifecycle hooks and the enhancer and health indicator contracts. */
const DUCK_TYPED: ReadonlyMap<string, string> = new Map([
  ['onModuleInit', 'lifecycle:onModuleInit'],
  ['onApplicationBootstrap', 'lifecycle:onApplicationBootstrap'],
  ['onModuleDestroy', 'lifecycle:onModuleDestroy'],
  ['beforeApplicationShutdown', 'lifecycle:beforeApplicationShutdown'],
  ['onApplicationShutdown', 'lifecycle:onApplicationShutdown'],
  ['canActivate', 'guard'],
  ['intercept', 'interceptor'],
  ['transform', 'pipe'],
  ['catch', 'exception-filter'],
  ['use', 'middleware'],
  ['isHealthy', 'health-indicator'],
]);

/**
 * The reasons that speak of an enhancer's shape (a `canActivate`, an `intercept`, a `@Catch()`...). Nest calls an
 * enhancer through the registration that installs it, never through its shape: `APP_GUARD` and its siblings build
 * their own instance, `@UseGuards()` and its like resolve theirs from the module's `injectables`, `apply()` from
 * its `middlewares`. The same class listed in `providers` as well is another instance nothing calls (a real
 * monorepo's `AppUserStatusGuard`, issue #44): on a plain provider these reasons are no entry point, and nothing
 * injecting it leaves it a candidate.
 */
const ENHANCER_SHAPES: ReadonlySet<string> = new Set([
  'guard',
  'interceptor',
  'pipe',
  'exception-filter',
  'middleware',
]);

const ROLE_ENTRY_POINTS: Partial<Record<BeanRole, string>> = {
  controller: 'controller',
  module: 'module',
  injectable: 'enhancer',
  middleware: 'middleware',
};

type ReflectWithMetadata = typeof Reflect & { getMetadataKeys?: (target: object, key?: string | symbol) => unknown[] };

function metadataKeys(target: object): unknown[] {
  const getKeys = (Reflect as ReflectWithMetadata).getMetadataKeys;
  return typeof getKeys === 'function' ? getKeys.call(Reflect, target) : [];
}

function reasonForKey(key: unknown): string | undefined {
  if (typeof key === 'string') {
    const exact = METADATA_ENTRY_POINTS.get(key);
    if (exact) return exact;
    for (const [prefix, reason] of METADATA_PREFIXES) if (key.startsWith(prefix)) return reason;
    return undefined;
  }
  if (typeof key === 'symbol' && key.description !== undefined) return SYMBOL_ENTRY_POINTS.get(key.description);
  return undefined;
}

/** What the classifier needs about one Nest bean. */
export interface NestBeanFacts {
  readonly role: BeanRole;
  /** The raw injection token (class, string, symbol). */
  readonly token: unknown;
  /** The class Nest instantiated, for class providers. */
  readonly metatype: unknown;
  /** The live value, when the container holds one. */
  readonly instance: unknown;
  /** Set for `APP_GUARD` and its siblings. */
  readonly globalEnhancer?: string;
  /**
   * A `useExisting` alias: its value is its target's instance, whose entry points are the target's own. An alias is
   * used when something resolves the alias's token (an edge to it, a lookup), never through its target's shape.
   */
  readonly alias?: boolean;
}

/**
 * Returns the entry-point reasons for one bean, sorted and without repeats; empty when none was found.
 * Throws whatever reading the bean throws (a hostile getter, a revoked proxy): the core then excludes the bean.
 */
export function nestEntryPoints(facts: NestBeanFacts, origins: ClassOriginIndex): string[] {
  const reasons = new Set<string>();
  const roleReason = ROLE_ENTRY_POINTS[facts.role];
  if (roleReason) reasons.add(roleReason);
  if (facts.globalEnhancer) reasons.add(`global-enhancer:${facts.globalEnhancer}`);
  if (facts.alias === true) return [...reasons].sort();

  const classes = new Set<object>();
  if (typeof facts.metatype === 'function') classes.add(facts.metatype);
  // A Proxy is not looked into (its traps are the application's code, and may throw or resolve a request's
  // context), nor is a getter run: the bean is then judged by its role, token and class alone.
  const instance = typeof facts.instance === 'object' && inspectable(facts.instance) ? facts.instance : undefined;
  if (instance !== undefined) {
    const ctor = dataProperty(instance, 'constructor');
    if (typeof ctor === 'function' && ctor !== Object) classes.add(ctor);
  }

  for (const cls of classes) {
    // Reflect.getMetadataKeys on a class walks its base classes too.
    for (const key of metadataKeys(cls)) {
      const reason = reasonForKey(key);
      if (reason) reasons.add(reason);
    }
    // A library base is collected by its library (a passport strategy, a queue's WorkerHost), except an ORM's
    // repository, which only its injectors use.
    const base = origins.libraryAncestor(cls);
    if (base && !isDataAccessBase(base)) reasons.add(`extends-library-class:${className(base)}`);
  }

  // Methods along the whole prototype chain: a @Cron on an inherited method is still registered by Nest.
  const seenProtos = new Set<object>();
  const starts: object[] = [];
  if (instance !== undefined) starts.push(instance);
  for (const cls of classes) {
    const proto = dataProperty(cls, 'prototype');
    if (proto && typeof proto === 'object') starts.push(proto);
  }
  for (const start of starts) {
    for (
      let proto: object | null = start;
      proto && proto !== Object.prototype && inspectable(proto);
      proto = Object.getPrototypeOf(proto)
    ) {
      if (seenProtos.has(proto)) break;
      seenProtos.add(proto);
      for (const name of Object.getOwnPropertyNames(proto)) {
        if (name === 'constructor') continue;
        const d = Object.getOwnPropertyDescriptor(proto, name);
        // An own field may hold an injected Proxy of a function: not a method, and its metadata is read through traps.
        if (!d || !('value' in d) || typeof d.value !== 'function' || !inspectable(d.value)) continue;
        const duckTyped = DUCK_TYPED.get(name);
        if (duckTyped) reasons.add(duckTyped);
        for (const key of metadataKeys(d.value)) {
          const reason = reasonForKey(key);
          if (reason) reasons.add(reason);
        }
      }
    }
  }
  // Nest calls an enhancer through its registration (a global enhancer, an injectable, a middleware), not its shape.
  if (facts.role === 'provider' && !facts.globalEnhancer) for (const shape of ENHANCER_SHAPES) reasons.delete(shape);
  return [...reasons].sort();
}
