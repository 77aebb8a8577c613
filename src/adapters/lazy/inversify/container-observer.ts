/**
 * InversifyJS's container, observed through its binding objects. Every binding passes one method when it is
 * added (InversifyJS 6: `Container#_bind`, which `bind`, `rebind` and container modules all call; 7: the
 * `BindingService#set` of @inversifyjs/core), and every value InversifyJS creates for a binding passes the
 * binding's own activation handler (`binding.onActivation`, read when the value is created: once for a
 * singleton). So the binding's `onActivation` becomes an accessor: until the first activation it hands out a
 * handler that notes the resolution and then calls the application's own, if it set one; from then on it hands
 * out the application's handler, or none, as if nothing had been there.
 */
import path from 'node:path';
import { CODE_ROOT } from '../../../shared/package-root';

import type { BeanKind, BeanScope } from '../../../ghost/analysis/bean-graph';
import { LazyContainerLedger, bookkeepingFailed, lazyBinding, lazyTokenName, type LazyBinding } from '../bindings';
import { captureStack, readCapturedStack, type CapturedStack } from '../../../ghost/origins/call-sites';
import type { GhostDetector } from '../../../ghost/detector';
import { inversifyEntryPoints, usedByControllers } from './entry-points';

/** The fields InversifyJS 6 and 7 bindings share. */
interface InversifyBinding {
  serviceIdentifier: unknown;
  /** InversifyJS 7's `toService()`: the service this binding redirects to. */
  targetServiceIdentifier?: unknown;
  type?: string;
  scope?: string;
  implementationType?: unknown;
  onActivation?: unknown;
}

type Activation = (context: unknown, value: unknown) => unknown;
type AnyFunction = (...args: any[]) => any;

/** Reads a class's constructor and property injections: InversifyJS 7's getClassMetadata, or 6's metadata keys. */
type DependenciesOf = (cls: Function) => unknown[];

/** The wrap and unwrap the observer patches through (`src/patching/wrap.ts`). */
export interface InversifyPatcher {
  wrap(target: object, name: string, wrapper: (original: never) => unknown): void;
  unwrap(target: object, name: string): void;
}

export class InversifyObserver {
  private ledger: LazyContainerLedger<InversifyBinding> | undefined;
  private version: string | undefined;
  private dependenciesOf: DependenciesOf | undefined;
  /** InversifyJS 7's own version (the hook is on @inversifyjs/core, whose version differs). */
  private inversifyVersion: (() => string | undefined) | undefined;
  private readonly patched: Array<{ proto: object; name: string }> = [];
  /** Bindings whose activation accessor still waits for the first activation, with the handler to restore. */
  private readonly pending = new Map<InversifyBinding, unknown>();
  /** Every binding added, to read again at ready (its fluent calls came after it was added). */
  private readonly seen = new Set<InversifyBinding>();
  /**
   * InversifyJS 7's redirections (`toService()`) have no activation of their own: InversifyJS activates the
   * binding they lead to. One counts as resolved once a binding of its target service is (an over-estimate:
   * the target may have been resolved directly, so a dead redirection to a live service goes unseen).
   */
  private readonly redirections: InversifyBinding[] = [];
  private readonly resolvedServices = new Set<unknown>();
  /**
   * Bindings first activated before ready with Phase 2 off, told to the ledger at ready (`collect`), which describes
   * every binding then: describing each at its addition and again at its activation counted ~15 M instructions of
   * the 1,000-binding app's start (docs/benchmarks.md), for a description only ready reads.
   */
  private readonly resolvedEarly: InversifyBinding[] = [];
  /** Bindings a library's code added (inversify-express-utils binds its HttpContext, say). */
  private readonly libraryBound = new WeakSet<InversifyBinding>();
  /** The service identifiers the controllers' decorators name, and why (see {@link entryPointsOf}). */
  private usedByControllers: Map<unknown, string> | undefined;
  /** The classes whose decorators {@link usedByControllers} has read: each is read once, not at each question. */
  private readonly controllersRead = new WeakSet<Function>();
  /** Who added a value or a factory binding, captured at its `bind` and read at ready ({@link settleBinders}). */
  private readonly binders = new Map<InversifyBinding, CapturedStack>();

  constructor(private readonly detector: GhostDetector) {}

  private ensureLedger(): LazyContainerLedger<InversifyBinding> {
    return (this.ledger ??= new LazyContainerLedger<InversifyBinding>({
      framework: 'inversify',
      container: () => ({ name: 'inversify', ...(this.version !== undefined ? { version: this.version } : {}) }),
      detector: this.detector,
      entryPoints: (binding) => this.entryPointsOf(binding),
      collect: () => this.collect(),
      classes: () => this.classesToDescribe(),
      // as added: with Phase 2 on, a binding first activated before ready is bound then, before the others
      order: () => this.seen,
    }));
  }

  /** InversifyJS 6: `Container.prototype._bind(binding)` of the package's exports. */
  patchContainer6(exports: Record<string, unknown>, version: string | undefined, patcher: InversifyPatcher): void {
    const proto = (exports?.Container as { prototype?: Record<string, unknown> } | undefined)?.prototype;
    if (proto === undefined || typeof proto._bind !== 'function') return;
    this.version ??= version;
    this.dependenciesOf ??= dependencies6;
    this.wrapAdder(proto, '_bind', patcher);
  }

  /** InversifyJS 7: `BindingService.prototype.set(binding)` of @inversifyjs/core, and its class metadata reader. */
  patchCore7(
    exports: Record<string, unknown>,
    patcher: InversifyPatcher,
    inversifyVersion: () => string | undefined,
  ): void {
    const proto = (exports?.BindingService as { prototype?: Record<string, unknown> } | undefined)?.prototype;
    if (proto === undefined || typeof proto.set !== 'function') return;
    const getClassMetadata = exports.getClassMetadata;
    if (typeof getClassMetadata === 'function')
      this.dependenciesOf ??= (cls) => dependencies7(getClassMetadata as AnyFunction, cls);
    this.inversifyVersion = inversifyVersion;
    this.wrapAdder(proto, 'set', patcher);
  }

  unpatch(patcher: InversifyPatcher): void {
    for (const { proto, name } of this.patched.splice(0)) patcher.unwrap(proto, name);
    for (const [binding, handler] of this.pending) {
      Object.defineProperty(binding, 'onActivation', {
        value: handler,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    this.pending.clear();
  }

  private wrapAdder(proto: Record<string, unknown>, name: string, patcher: InversifyPatcher): void {
    const observer = this;
    patcher.wrap(
      proto,
      name,
      (original: AnyFunction) =>
        function (this: unknown, binding: InversifyBinding) {
          const result = Reflect.apply(original, this, arguments);
          try {
            observer.added(binding);
          } catch (err) {
            bookkeepingFailed('inversify', err);
          }
          return result;
        },
    );
    this.patched.push({ proto, name });
  }

  private added(binding: InversifyBinding): void {
    if (typeof binding !== 'object' || binding === null || this.seen.has(binding)) return;
    this.seen.add(binding);
    // Only a value or a factory is judged by who bound it (see describe): InversifyJS 7+ hands over class
    // bindings complete, so they skip the stack capture; 6 adds each binding before `.to()` says what it is.
    // The frames are read at ready, where the answer is first needed.
    if (binding.type !== 'Instance') this.binders.set(binding, captureStack(captureStack, BINDER_DEPTH));
    this.version ??= this.inversifyVersion?.();
    const ledger = this.ensureLedger();
    // What the binding is becomes known over the fluent calls that follow (`.to()`, `.inSingletonScope()`): before
    // ready it is described at ready (`collect`), after ready now.
    if (ledger.readyDone) {
      this.settleBinders();
      ledger.bind(binding, this.describe(binding));
    }
    if (binding.type === 'ServiceRedirection') {
      this.redirections.push(binding);
      if (ledger.readyDone && this.resolvedServices.has(binding.targetServiceIdentifier))
        ledger.resolved(binding, undefined);
      return;
    }
    this.watchActivation(binding, ledger);
  }

  /** A binding of `serviceIdentifier` was first resolved: so were the redirections to it (before ready: at `collect`). */
  private serviceResolved(serviceIdentifier: unknown, ledger: LazyContainerLedger<InversifyBinding>): void {
    if (this.resolvedServices.has(serviceIdentifier)) return;
    this.resolvedServices.add(serviceIdentifier);
    if (!ledger.readyDone) return;
    for (const redirection of this.redirections) {
      if (redirection.targetServiceIdentifier === serviceIdentifier) ledger.resolved(redirection, undefined);
    }
  }

  private describe(binding: InversifyBinding): LazyBinding {
    const kind = kindOf(binding.type);
    const cls =
      kind === 'class' && typeof binding.implementationType === 'function' ? binding.implementationType : undefined;
    const token = lazyTokenName(binding.serviceIdentifier);
    return lazyBinding(
      token,
      kind,
      kind === 'value' ? 'singleton' : scopeOf(binding.scope),
      // a class says where it comes from (the ledger asks at ready); a value or a factory, who bound it
      cls === undefined && this.libraryBound.has(binding),
      cls,
      cls !== undefined && cls.name !== '' && cls.name !== token ? cls.name : undefined,
    );
  }

  private watchActivation(binding: InversifyBinding, ledger: LazyContainerLedger<InversifyBinding>): void {
    let own: unknown = binding.onActivation;
    let first = true;
    const pending = this.pending;
    const observer = this;
    const noteFirst: Activation = function (this: unknown, context, value) {
      if (first) {
        first = false;
        pending.delete(binding);
        try {
          // After ready, or with Phase 2 on before it (a singleton resolved while the application starts is tracked
          // now, before the code that resolved it calls it), told now: its fluent calls (`.inSingletonScope()`)
          // are all made by now. Otherwise at ready.
          if (ledger.readyDone || observer.detector.tracker !== undefined) {
            ledger.bind(binding, observer.describe(binding));
            ledger.resolved(binding, value);
          } else {
            observer.resolvedEarly.push(binding);
          }
          observer.serviceResolved(binding.serviceIdentifier, ledger);
        } catch (err) {
          bookkeepingFailed('inversify', err);
        }
      }
      return typeof own === 'function' ? Reflect.apply(own as Activation, this, [context, value]) : value;
    };
    pending.set(binding, own);
    Object.defineProperty(binding, 'onActivation', {
      get: () => (first ? noteFirst : own),
      set: (handler: unknown) => {
        own = handler;
        pending.set(binding, handler);
      },
      enumerable: true,
      configurable: true,
    });
  }

  /**
   * Why the web layer calls a binding: a controller or an error filter of its own, or a guard, interceptor,
   * middleware or error filter a controller names by its service identifier or its class ({@link usedByControllers},
   * read from every class once, at ready; a controller bound after ready adds its own).
   */
  private entryPointsOf(binding: InversifyBinding): readonly string[] {
    const cls = binding.implementationType;
    const own = inversifyEntryPoints(cls);
    if (this.usedByControllers === undefined) {
      const classes = [...this.classesToDescribe()];
      this.usedByControllers = usedByControllers(classes);
      for (const seen of classes) if (typeof seen === 'function') this.controllersRead.add(seen);
    } else if (typeof cls === 'function' && !this.controllersRead.has(cls)) {
      // a class bound after the first read: its decorators are read once, if it is a controller
      this.controllersRead.add(cls);
      for (const [used, why] of usedByControllers([cls])) this.usedByControllers.set(used, why);
    }
    if (own.length > 0) return own;
    // named by its service identifier (`Symbol.for('TokenCheckInterceptor')` bound to the class), or by its class
    const why =
      this.usedByControllers.get(binding.serviceIdentifier) ??
      (typeof cls === 'function' ? this.usedByControllers.get(cls) : undefined);
    return why === undefined ? [] : [why];
  }

  /** The classes of the bindings added so far, which `collect` describes at ready. */
  private *classesToDescribe(): Iterable<unknown> {
    for (const binding of this.seen) yield binding.implementationType;
  }

  /** Reads who added each binding captured so far: a binding a library's code added is the framework's. */
  private settleBinders(): void {
    for (const [binding, captured] of this.binders) {
      if (boundByLibrary(readCapturedStack(captured))) this.libraryBound.add(binding);
    }
    this.binders.clear();
  }

  /** At ready: each binding as its fluent calls left it, and the injections of each class binding as edges. */
  private collect(): void {
    const ledger = this.ledger!;
    this.settleBinders();
    const byService = new Map<unknown, InversifyBinding[]>();
    const bindings = [...this.seen];
    for (const binding of bindings) {
      // One binding that cannot be described (a class whose `name` throws) is left out, not the container.
      try {
        ledger.bind(binding, this.describe(binding));
      } catch (err) {
        bookkeepingFailed('inversify', err);
      }
      const list = byService.get(binding.serviceIdentifier);
      if (list === undefined) byService.set(binding.serviceIdentifier, [binding]);
      else list.push(binding);
    }
    for (const binding of this.resolvedEarly) ledger.resolved(binding, undefined);
    this.resolvedEarly.length = 0;
    for (const redirection of this.redirections) {
      for (const target of byService.get(redirection.targetServiceIdentifier) ?? [])
        ledger.dependsOn(redirection, target, 'alias');
      if (this.resolvedServices.has(redirection.targetServiceIdentifier)) ledger.resolved(redirection, undefined);
    }
    const dependenciesOf = this.dependenciesOf;
    if (dependenciesOf === undefined) return;
    for (const binding of bindings) {
      if (typeof binding.implementationType !== 'function' || kindOf(binding.type) !== 'class') continue;
      for (const id of dependenciesOf(binding.implementationType)) {
        for (const target of byService.get(id) ?? []) ledger.dependsOn(binding, target, 'constructor');
      }
    }
  }
}

/**
 * Frames of InversifyJS itself (the container and the packages it is built of) and of Node, skipped when looking for
 * who bound a binding. Not every `@inversifyjs/*` package: @inversifyjs/http-core binds its own `application` while
 * the application builds its server, and an outside trial saw that binding as the application's, a ghost candidate
 * it could not delete.
 */
const INVERSIFY_FRAMES =
  /[\\/]node_modules[\\/](?:inversify|@inversifyjs[\\/](?:common|container|core|plugin|prototype-utils|reflect-metadata-utils))[\\/]|node:internal/;
/** This package's own code (dist/), wherever it is installed. */
const OWN_CODE = CODE_ROOT + path.sep;

/** Frames kept of who added a binding: InversifyJS's own fluent calls sit between the adder and the caller. */
const BINDER_DEPTH = 12;

/**
 * Whether the code that called `bind` is a library's: the first stack frame outside InversifyJS and this
 * package lies in a node_modules folder. Read once per binding from the call sites captured when it was added.
 */
function boundByLibrary(sites: readonly NodeJS.CallSite[]): boolean {
  for (const site of sites) {
    const file = site.getFileName() ?? '';
    if (file === '' || INVERSIFY_FRAMES.test(file) || file.includes(OWN_CODE)) continue;
    return /[\\/]node_modules[\\/]/.test(file);
  }
  return false;
}

function kindOf(type: string | undefined): BeanKind {
  switch (type) {
    case 'Instance':
      return 'class';
    case 'ConstantValue':
    case 'Function':
    case 'Constructor':
      return 'value';
    case 'ServiceRedirection':
      return 'alias';
    default:
      return 'factory';
  }
}

function scopeOf(scope: string | undefined): BeanScope {
  if (scope === 'Singleton') return 'singleton';
  if (scope === 'Request') return 'request';
  return 'transient';
}

type Reflector = { getMetadata?(key: string, target: object): unknown };

/** InversifyJS 6: `@inject()` per constructor parameter (`inversify:tagged`), else its design type; `inversify:tagged_props`. */
function dependencies6(cls: Function): unknown[] {
  const r = Reflect as Reflector;
  if (typeof r.getMetadata !== 'function') return [];
  const out: unknown[] = [];
  const tagged = (r.getMetadata('inversify:tagged', cls) ?? {}) as Record<
    string,
    Array<{ key: unknown; value: unknown }>
  >;
  const designTypes = (r.getMetadata('design:paramtypes', cls) ?? []) as unknown[];
  const count = Math.max(designTypes.length, ...Object.keys(tagged).map((k) => Number(k) + 1));
  for (let i = 0; i < count; i++) {
    const inject = tagged[String(i)]?.find((m) => m.key === 'inject' || m.key === 'multi_inject');
    out.push(inject !== undefined ? inject.value : designTypes[i]);
  }
  const props = (r.getMetadata('inversify:tagged_props', cls) ?? {}) as Record<
    string,
    Array<{ key: unknown; value: unknown }>
  >;
  for (const list of Object.values(props)) {
    const inject = list.find((m) => m.key === 'inject' || m.key === 'multi_inject');
    if (inject !== undefined) out.push(inject.value);
  }
  return out.map(unwrapLazy);
}

/** InversifyJS 7: the class metadata @inversifyjs/core keeps (constructor arguments and properties). */
function dependencies7(getClassMetadata: AnyFunction, cls: Function): unknown[] {
  const metadata = getClassMetadata(cls) as {
    constructorArguments?: Array<{ value?: unknown } | undefined>;
    properties?: Map<unknown, { value?: unknown }>;
  };
  const out: unknown[] = [];
  for (const arg of metadata?.constructorArguments ?? []) if (arg?.value !== undefined) out.push(arg.value);
  for (const prop of metadata?.properties?.values() ?? []) if (prop?.value !== undefined) out.push(prop.value);
  return out.map(unwrapLazy);
}

/** A `LazyServiceIdentifier` names its service through `unwrap()`. */
function unwrapLazy(id: unknown): unknown {
  if (typeof id === 'object' && id !== null && typeof (id as { unwrap?: unknown }).unwrap === 'function') {
    try {
      return (id as { unwrap(): unknown }).unwrap();
    } catch {
      return id;
    }
  }
  return id;
}
