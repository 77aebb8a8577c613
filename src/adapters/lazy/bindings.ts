/**
 * What every lazy container's adapter (InversifyJS, tsyringe, awilix) needs beside its own hooks: the
 * bindings it saw registered, which of them were resolved, and at "ready" (the first HTTP server listening, or
 * `diagReady()`) the graph handed to the detector, whose Phase 1 lists the bindings never resolved so far. From
 * then on the Phase 2 tracker keeps `neverResolved` current and first touches of the resolved instances.
 *
 * Knows no container: an adapter names its bindings by a key of its own (a token, a registration object).
 */
import type { Bean, BeanInput, EdgeKind } from '../../ghost/analysis/bean-graph';
import type * as BeanGraphModule from '../../ghost/analysis/bean-graph';
import { safeLog } from '../../shared/logger';
import { errorText } from '../../shared/errors';
import { whenReady } from './ready';
import { SCAN_TURN_BUDGET_MS } from '../../ghost/origins/class-origin';
import type { GhostDetector } from '../../ghost/detector';
import type { GhostTracker } from '../../ghost/tracking/tracker';

const warned = new Set<string>();

/**
 * Runs an adapter's bookkeeping inside the application's own call (a resolve, a register) so that a fault of
 * ours never reaches it: the call's result stands, and the fault is logged once per framework.
 */
export function bookkeeping(framework: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    bookkeepingFailed(framework, err);
  }
}

/** What {@link bookkeeping} does with a fault, for a hot path that catches inline rather than allocate a closure. */
export function bookkeepingFailed(framework: string, err: unknown): void {
  if (warned.has(framework)) return;
  warned.add(framework);
  safeLog(
    'warn',
    `${framework}: ghost bookkeeping failed, the container's answer is unchanged: ${err instanceof Error ? err.message : String(err)}`,
  );
}

/**
 * A lazy container's token as the user wrote it: a class's name, the string, or the symbol's description. Not
 * nestjs/names.ts's `nestTokenName`, which also undoes what Nest randomises per run (mixin class names, the
 * global enhancers' UUID tokens); nothing in inversify, tsyringe or awilix does that.
 */
export function lazyTokenName(token: unknown): string {
  if (typeof token === 'function') return token.name || 'anonymous class';
  if (typeof token === 'string') return token;
  if (typeof token === 'symbol') return token.description ?? token.toString();
  return String(token);
}

/** What an adapter knows of one binding (everything a bean is, but when it was created and whether it was). */
export type LazyBinding = Omit<BeanInput, 'eager' | 'resolved' | 'instantiationMs'> & {
  /**
   * The class or function whose origin makes the binding the framework's (a library's, or a builtin's) and
   * whose file is its `source`, looked up when the ledger first needs them: at ready, not inside the
   * application's register or resolve calls, since the first origin lookup indexes every module loaded so far.
   * `framework: true` given by the adapter stands whatever the origin says.
   */
  readonly definedBy?: Function;
};

/**
 * An application binding as an adapter describes it at registration. Built with plain assignments: these run
 * once per registration in code the engine has not optimised yet, where copying spread objects is a runtime
 * call each (bench/startup/instructions.js).
 */
export function lazyBinding(
  token: string,
  kind: BeanInput['kind'],
  scope: BeanInput['scope'],
  framework: boolean,
  definedBy: Function | undefined,
  className: string | undefined,
): LazyBinding {
  const binding: { -readonly [K in keyof LazyBinding]: LazyBinding[K] } = {
    token,
    kind,
    scope,
    role: 'provider',
    framework,
  };
  if (definedBy !== undefined) binding.definedBy = definedBy;
  if (className !== undefined) binding.className = className;
  return binding;
}

/** Why the framework calls into a binding on its own (a controller of the web layer), empty when it does not. */
export type LazyEntryPoints<K> = (key: K, binding: LazyBinding) => readonly string[];

export interface LazyLedgerOptions<K> {
  /** `inversify`, `tsyringe`, `awilix`: the reports' `framework`. */
  readonly framework: string;
  readonly container: () => { name: string; version?: string };
  readonly detector: GhostDetector;
  readonly entryPoints: LazyEntryPoints<K>;
  /**
   * The classes the adapter's `collect` will describe (its bindings are described at ready only): their origins are
   * read a turn before the analysis, so that the turn that builds the report does not read each class's file and
   * source map as well (~2.5 ms of a small tsyringe application's, docs/benchmarks.md).
   */
  readonly classes?: () => Iterable<unknown>;
  /** Runs first at ready: the adapter adds what it only finds by looking (classes decorated but never registered). */
  readonly collect?: () => void;
  /**
   * The order the bindings take in the graph (the rest after, as bound), when the adapter binds them in another:
   * an adapter describing bindings at ready binds some earlier (a singleton tracked at its first resolution), and a
   * binding's name among others of the same token (`Plugin#2`) follows the graph's order, so that it must not
   * depend on what resolved before ready.
   */
  readonly order?: () => Iterable<K>;
}

interface Entry {
  binding: LazyBinding;
  resolved: boolean;
  /**
   * A binding resolved before ready whose token is on the tracker's `exclude` list, held until then to be told
   * under its name (never wrapped); every other one is tracked unnamed at its resolution (see `trackBeforeReady`).
   */
  instance?: unknown;
  hasInstance: boolean;
  /** Name in the report, once ready. */
  name?: string;
  entryPoint: boolean;
}

export class LazyContainerLedger<K> {
  private readonly entries = new Map<K, Entry>();
  private readonly edges: Array<{ from: K; to: K; kind: EdgeKind }> = [];
  private isReady = false;
  /** While the adapter's collect runs: its bindings and edges still belong to the report. */
  private collecting = false;
  /** The analysis, run at the process's exit if its turns had not come yet (see {@link readyInTurns}). */
  private finishAtExit: (() => void) | undefined;

  constructor(private readonly options: LazyLedgerOptions<K>) {
    // after the turn that made the process ready: the application's own `listening` callbacks run first
    whenReady(() => {
      // armed now: an application may end in its own `listening` callback, before any turn of ours
      this.finishAtExit = () => this.readyNow();
      process.once('exit', this.finishAtExit);
      setImmediate(() => this.readyInTurns());
    });
  }

  /**
   * {@link ready} on turns of its own, so that a request that reached the process meanwhile (a readiness probe's)
   * is served between two: the scan of `require.cache` a few milliseconds at a time, the origins of the bindings'
   * classes on the next turn, then the rest. In one turn it held a small tsyringe application's first answer behind
   * the scan's 5-11 ms and the report's ~4 ms (docs/benchmarks.md). Not unref'd, and finished at once if the process
   * exits before: a process ending right after its ready still gets its report.
   */
  private readyInTurns(warmed = false): void {
    if (this.isReady || this.collecting) return;
    try {
      if (!this.options.detector.origins.scanRequireCache(SCAN_TURN_BUDGET_MS)) {
        setImmediate(() => this.readyInTurns(warmed));
        return;
      }
      if (!warmed) {
        this.warmOrigins();
        setImmediate(() => this.readyInTurns(true));
        return;
      }
    } catch (err) {
      // `ready` scans and settles again
      safeLog('debug', `${this.options.framework}: the analysis's first turns failed: ${errorText(err)}`);
    }
    this.readyNow();
  }

  /** Settles the bindings seen so far, and reads the origins of the classes `collect` will describe. */
  private warmOrigins(): void {
    for (const entry of this.entries.values()) this.settle(entry);
    const origins = this.options.detector.origins;
    for (const cls of this.options.classes?.() ?? []) {
      origins.originOf(cls);
      origins.fileOf(cls);
    }
  }

  /** {@link ready}, from a turn or at exit; what fails is one warning, never the application's. */
  private readyNow(): void {
    if (this.finishAtExit !== undefined) process.removeListener('exit', this.finishAtExit);
    this.finishAtExit = undefined;
    try {
      this.ready();
    } catch (err) {
      safeLog('warn', `${this.options.framework}: the analysis after ready failed: ${errorText(err)}`);
    }
  }

  /** Whether the application is ready (Phase 1 written). */
  get readyDone(): boolean {
    return this.isReady;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Records a binding; registering the same key again updates what it is and keeps whether it was resolved. */
  bind(key: K, binding: LazyBinding): void {
    const known = this.entries.get(key);
    if (known !== undefined) {
      known.binding = binding;
      if (this.isReady) this.settle(known);
      return;
    }
    const entry: Entry = { binding, resolved: false, hasInstance: false, entryPoint: false };
    this.entries.set(key, entry);
    if (this.isReady) this.lateBinding(key, entry);
  }

  /** `from` needs `to` (a constructor parameter, an injected property, an alias's target). */
  dependsOn(from: K, to: K, kind: EdgeKind): void {
    if (!this.isReady) this.edges.push({ from, to, kind });
  }

  /**
   * The container handed out `key`'s value. Cheap when it already was (a lookup): this runs on every resolve.
   * Returns false for a key never bound, which the adapter binds and reports again.
   */
  resolved(key: K, value: unknown): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    if (entry.resolved) return true;
    entry.resolved = true;
    if (!this.isReady) {
      const tracker = this.options.detector.tracker;
      if (tracker !== undefined && entry.binding.scope === 'singleton') this.trackBeforeReady(tracker, entry, value);
      return true;
    }
    this.firstResolution(entry, value);
    return true;
  }

  /**
   * A singleton resolved before ready is tracked now, before the code that resolved it calls it: a bean used only
   * while the application starts (a migration run before the server listens) is touched, where tracking it at
   * ready would report a bean that was called as never called. Its name and whether a library registered it are
   * known at ready only (the graph names the bindings, the origins need require.cache), so it is tracked unnamed
   * and named then: a library's gets its methods back, and so does one whose name at ready (another binding of
   * the same token, told apart) is excluded. One whose token is excluded is held and told under its name at ready,
   * never wrapped.
   */
  private trackBeforeReady(tracker: GhostTracker, entry: Entry, value: unknown): void {
    if (tracker.excludes(entry.binding.token)) {
      entry.instance = value;
      entry.hasInstance = true;
      return;
    }
    tracker.trackUnnamed(entry, value, {
      owner: this,
      framework: entry.binding.framework,
      infrastructure: entry.binding.kind === 'factory' && (typeof value !== 'object' || value === null),
    });
  }

  /** Phase 1 over the bindings seen so far; then Phase 2 follows the resolutions ({@link readyNow} catches). */
  ready(): void {
    if (this.isReady || this.collecting) return;
    this.collecting = true;
    try {
      this.options.collect?.();
    } catch (err) {
      safeLog(
        'warn',
        `${this.options.framework}: reading its bindings failed: ${(err as Error)?.message ?? String(err)}`,
      );
    }
    this.isReady = true;
    // CommonJS modules say where their classes come from only through `require.cache`, read here, after the
    // application is listening (ESM namespaces were noted as they loaded).
    this.options.detector.origins.scanRequireCache();
    // Required here, after ready: no start pays for loading the graph before it has one to build.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see the line above
    const { BeanGraph } = require('../../ghost/analysis/bean-graph') as typeof BeanGraphModule;
    const graph = new BeanGraph();
    const ids = new Map<K, number>();
    const byId: Entry[] = [];
    for (const [key, entry] of this.ordered()) {
      this.settle(entry);
      entry.entryPoint = this.entryPointsOf(key, entry).length > 0;
      const id = graph.addBean({ ...entry.binding, eager: false, resolved: entry.resolved });
      ids.set(key, id);
      byId[id] = entry;
    }
    for (const { from, to, kind } of this.edges) {
      const a = ids.get(from);
      const b = ids.get(to);
      if (a !== undefined && b !== undefined && a !== b) graph.addEdge(a, b, kind);
    }
    this.edges.length = 0;
    for (const bean of graph.beans()) byId[bean.id]!.name = bean.name;
    const keyOf = new Map<number, K>();
    for (const [key, id] of ids) keyOf.set(id, key);
    this.options.detector.containerReady({
      graph,
      classify: (bean: Bean) => this.entryPointsOf(keyOf.get(bean.id)!, byId[bean.id]!),
      framework: this.options.framework,
      container: this.options.container(),
    });
    // Ready came before this turn: the start-up timeline is complete.
    this.options.detector.startupReady();
    const tracker = this.options.detector.tracker;
    if (tracker === undefined) return;
    tracker.setFramework(this.options.framework);
    const unresolved: string[] = [];
    for (const entry of this.entries.values()) {
      if (!entry.resolved && this.counts(entry)) unresolved.push(entry.name!);
    }
    tracker.expectResolution(unresolved);
    tracker.nameTracked((key) => {
      const entry = key as Entry;
      return { name: entry.name ?? entry.binding.token, framework: entry.binding.framework };
    }, this);
    for (const entry of this.entries.values()) {
      if (entry.hasInstance) {
        const instance = entry.instance;
        entry.instance = undefined;
        entry.hasInstance = false;
        this.track(entry, instance);
      } else if (entry.resolved && entry.binding.scope !== 'singleton') {
        // A transient or request-scoped binding resolved before ready is told why it is not tracked
        // (`non-singleton`) here: on the way to ready it cost a record per first resolution (tsyringe's
        // unregistered classes: +9 M instructions on 1,000 bindings).
        this.track(entry, undefined);
      }
    }
  }

  /** The entries in the adapter's {@link LazyLedgerOptions.order}, then the others as bound. */
  private *ordered(): Iterable<[K, Entry]> {
    const first = this.options.order?.();
    if (first === undefined) {
      yield* this.entries;
      return;
    }
    const done = new Set<K>();
    for (const key of first) {
      const entry = this.entries.get(key);
      if (entry === undefined || done.has(key)) continue;
      done.add(key);
      yield [key, entry];
    }
    for (const pair of this.entries) if (!done.has(pair[0])) yield pair;
  }

  private entryPointsOf(key: K, entry: Entry): readonly string[] {
    try {
      return this.options.entryPoints(key, entry.binding);
    } catch {
      return [];
    }
  }

  /** Whether a binding belongs in `neverResolved`: the application's own, and not called by the framework. */
  private counts(entry: Entry): boolean {
    return !entry.binding.framework && !entry.entryPoint;
  }

  /** Gives the binding its origin-dependent fields (see {@link LazyBinding.definedBy}), once. */
  private settle(entry: Entry): void {
    const { definedBy, ...binding } = entry.binding;
    if (definedBy === undefined) return;
    const origins = this.options.detector.origins;
    const origin = origins.originOf(definedBy);
    const source = origins.fileOf(definedBy);
    entry.binding = {
      ...binding,
      framework: binding.framework || origin === 'library' || origin === 'builtin',
      ...(source !== undefined ? { source } : {}),
    };
  }

  /** A binding registered after ready: named by its token, expected to be resolved like the others. */
  private lateBinding(key: K, entry: Entry): void {
    this.settle(entry);
    entry.name = entry.binding.token;
    entry.entryPoint = this.entryPointsOf(key, entry).length > 0;
    if (this.counts(entry)) this.options.detector.tracker?.expectResolution([entry.name]);
  }

  private firstResolution(entry: Entry, value: unknown): void {
    const tracker = this.options.detector.tracker;
    if (tracker === undefined || entry.name === undefined) return;
    tracker.noteResolved(entry.name);
    this.track(entry, value);
  }

  private track(entry: Entry, instance: unknown): void {
    const tracker = this.options.detector.tracker!;
    const { binding } = entry;
    tracker.track(entry.name!, instance, {
      scope: binding.scope,
      framework: binding.framework,
      infrastructure: binding.kind === 'factory' && (typeof instance !== 'object' || instance === null),
    });
  }
}
