import path from 'node:path';
import type { LoadRecord, StepRecord, BootMarks } from '../../shared/boot-clock';
import { STEP_KIND } from '../../shared/boot-clock';
import { packageOf } from '../../patching/module-hooks';
import { packageVersionAt } from '../../patching/package-version';

/**
 * The whole start-up, from process start (`performance.timeOrigin`) to ready, built from the raw clock
 * readings (src/shared/boot-clock.ts) only when someone reads it: Node's own bootstrap, the preload, the
 * instrumentation's own load, each package's load (inclusive and self time), the framework's phases, each
 * bean's creation and lifecycle hooks, listen. Every step is an interval on one clock (`performance.now()`);
 * a step's parent is the innermost step that contains it, so a package a hook requires sits under that hook.
 * What no step covers is listed as unattributed, with the steps around it.
 */

import type { BootProfile, BootStep, BootStepKind, PackageLoad, BootGap } from './boot-types';

export type { BootProfile, BootStep, BootStepKind, PackageLoad, BootGap } from './boot-types';

/** A bean's creation as the container observer recorded it, ms since process start. */
export interface BeanCreation {
  readonly name: string;
  readonly module?: string;
  readonly start: number;
  readonly end: number;
  /** An async factory: when its call returned (what follows is its wait). */
  readonly returned?: number;
}

export interface BootInput {
  readonly loads: LoadRecord;
  readonly steps: StepRecord;
  readonly marks: Readonly<BootMarks>;
  readonly timeOrigin: number;
  /** Node's own start: V8 and its environment (`performance.nodeTiming.environment`). */
  readonly nodeEnvironment?: number;
  /** Node's bootstrap's end, preloads included (`performance.nodeTiming.bootstrapComplete`). */
  readonly nodeBootstrapEnd?: number;
  /** The main module's file (`require.main.filename`), whose load ends the preload. */
  readonly mainFile?: string;
  /** The package's root: its own files are the instrumentation's cost. */
  readonly ownRoot: string;
  /** `require.cache`'s keys in insertion order, to list what loaded before the instrumentation. */
  readonly cachedFiles?: readonly string[];
  /**
   * The files whose code required `file` (`module.children` of the cache's modules): asked only of a load made
   * from outside any module, a `require()` inside a function at run time, which the nesting of loads cannot place.
   */
  readonly requirersOf?: (file: string) => readonly string[];
  readonly beans?: readonly BeanCreation[];
  /** Now, for a process not ready yet. */
  readonly now: number;
}

/** Steps of the close: named here so that the builder can tell them from the start. */
const SHUTDOWN_PHASES = new Set([
  'nest.close',
  'nest.on_module_destroy',
  'nest.before_application_shutdown',
  'nest.dispose',
  'nest.on_application_shutdown',
]);
const SHUTDOWN_HOOKS = new Set(['onModuleDestroy', 'beforeApplicationShutdown', 'onApplicationShutdown']);

export const APPLICATION = '(application)';
export const OWN_PACKAGE = 'diag-instrumentation';

interface Interval {
  name: string;
  kind: BootStepKind;
  start: number;
  end: number;
  /** Sync part's end for hooks and factories; `end` otherwise. */
  returned: number;
  package?: string;
  bean?: string;
  module?: string;
  files?: number;
  esm?: boolean;
  /** A package loaded from inside a function that only packages required: the first of them (not top-level). */
  requiredBy?: string;
  children: Interval[];
  self: number;
  critical?: boolean;
  /** Index in the output. */
  id?: number;
}

function interval(
  name: string,
  kind: BootStepKind,
  start: number,
  end: number,
  extra: Partial<Interval> = {},
): Interval {
  return { name, kind, start, end, returned: extra.returned ?? end, children: [], self: 0, ...extra };
}

/** Union length of `intervals` clipped to [from, to]. */
function unionLength(intervals: ReadonlyArray<{ start: number; end: number }>, from: number, to: number): number {
  const sorted = intervals
    .map((i) => ({ start: Math.max(from, i.start), end: Math.min(to, i.end) }))
    .filter((i) => i.end > i.start)
    .sort((a, b) => a.start - b.start);
  let total = 0;
  let curStart = -Infinity;
  let curEnd = -Infinity;
  for (const i of sorted) {
    if (i.start > curEnd) {
      if (curEnd > curStart) total += curEnd - curStart;
      curStart = i.start;
      curEnd = i.end;
    } else if (i.end > curEnd) curEnd = i.end;
  }
  if (curEnd > curStart) total += curEnd - curStart;
  return total;
}

/** The package a loaded file counts for: its npm package, this instrumentation, or the application. */
function ownerOf(filename: string, ownRoot: string): string {
  if (filename.startsWith(ownRoot) && !filename.slice(ownRoot.length).includes(`${path.sep}node_modules${path.sep}`))
    return OWN_PACKAGE;
  return packageOf(filename)?.name ?? APPLICATION;
}

/**
 * Module loads as steps: a load of a file whose package differs from the load it happened in (or that
 * happened in none) starts a step for its package; the package's further files loaded inside it are counted
 * in it, not stepped.
 */
/**
 * For a load from outside any module (TypeORM requiring `pg` inside its DataSource factory), the package that
 * required it, when only packages did; undefined when the application (or a preload) required it too, or when
 * no requirer is known: then it counts as the application's, as before.
 */
function packageRequirer(input: BootInput, file: string): string | undefined {
  const by = input.requirersOf?.(file) ?? [];
  let first: string | undefined;
  for (const f of by) {
    const owner = ownerOf(f, input.ownRoot);
    if (owner === APPLICATION) return undefined;
    first ??= owner;
  }
  return first;
}

function loadSteps(input: BootInput, to: number): Interval[] {
  const { loads, ownRoot } = input;
  const out: Interval[] = [];
  // The step each load in flight belongs to, by depth.
  const open: Array<{ owner: string; step: Interval | undefined }> = [];
  for (let i = 0; i < loads.count; i++) {
    const start = loads.starts[i]!;
    if (start > to) break;
    const depth = loads.depths[i]!;
    open.length = depth;
    const owner = ownerOf(loads.files[i]!, ownRoot);
    const outer = depth > 0 ? open[depth - 1] : undefined;
    const end = Number.isNaN(loads.ends[i]!) ? to : loads.ends[i]!;
    if (outer !== undefined && outer.owner === owner && outer.step !== undefined) {
      outer.step.files! += 1;
      open[depth] = outer;
      continue;
    }
    const kind: BootStepKind = owner === OWN_PACKAGE ? 'diag' : owner === APPLICATION ? 'application' : 'package';
    const requiredBy = kind === 'package' && depth === 0 ? packageRequirer(input, loads.files[i]!) : undefined;
    const step = interval(kind === 'package' ? 'package.load' : `${kind}.load`, kind, start, end, {
      files: 1,
      ...(kind === 'package' ? { package: owner } : {}),
      ...(requiredBy !== undefined ? { requiredBy } : {}),
    });
    out.push(step);
    open[depth] = { owner, step };
  }
  return out;
}

/** The CommonJS module loads of the record: an ES module evaluated right after one is evaluated in sequence. */
const MODULE_LOADS: ReadonlySet<string> = new Set(['package.load', 'application.load', 'diag.load']);

/**
 * ES modules as steps: import-in-the-middle calls back when each module has been evaluated (its imports
 * first), nothing when it starts; a module's evaluation is estimated as the time since the event before it
 * (the previous module's, or the end of a CommonJS load), merged per package over consecutive modules.
 *
 * A module evaluated first after any other step (a preload's construction, a phase) is not estimated: Node
 * resolves, loads and links a whole graph before the first of its modules runs, so the time before that
 * module is the loader's (and it is left to `node.esm_loader`). An ES module Nest 12 app tried on 2026-11-25
 * otherwise put the 420 ms between the SDK's start and the application graph's first evaluation on
 * `@opentelemetry/resources`, a leaf of that graph.
 */
function esmSteps(input: BootInput, others: readonly Interval[], to: number): Interval[] {
  const { steps } = input;
  const events: Array<{ at: number; owner: string }> = [];
  for (let i = 0; i < steps.count; i++) {
    if (steps.kinds[i] !== STEP_KIND.esm) continue;
    const at = steps.ends[i]!;
    if (at > to) continue;
    const name = steps.subjects[i]!;
    const base = steps.groups[i]!;
    const owner =
      base !== '' ? (packageOf(path.join(base, 'x'))?.name ?? path.basename(base)) : ownerOf(name, input.ownRoot);
    events.push({ at, owner });
  }
  if (events.length === 0) return [];
  events.sort((a, b) => a.at - b.at);
  const ends = others.map((o) => ({ at: o.end, load: MODULE_LOADS.has(o.name) })).sort((a, b) => a.at - b.at);
  const out: Interval[] = [];
  let previous = -Infinity;
  let current: Interval | undefined;
  let currentOwner = '';
  let k = 0;
  for (const e of events) {
    while (k < ends.length && ends[k]!.at <= e.at) k++;
    const lastOther = k > 0 ? ends[k - 1]! : undefined;
    const afterOther = lastOther !== undefined && lastOther.at > previous;
    // First after another step that is no module load: the loader's time before it is not this module's.
    const start = afterOther && !lastOther.load ? e.at : Math.max(previous, lastOther?.at ?? -Infinity);
    previous = e.at;
    if (!Number.isFinite(start)) continue;
    if (current !== undefined && current.end === start && currentOwner === e.owner) {
      current.end = e.at;
      current.returned = e.at;
      current.files! += 1;
      continue;
    }
    const kind: BootStepKind = e.owner === OWN_PACKAGE ? 'diag' : e.owner === APPLICATION ? 'application' : 'package';
    current = interval(kind === 'package' ? 'package.load' : `${kind}.load`, kind, start, e.at, {
      files: 1,
      esm: true,
      ...(kind === 'package' ? { package: e.owner } : {}),
    });
    currentOwner = e.owner;
    out.push(current);
  }
  return out;
}

function recordedSteps(input: BootInput, to: number, shutdown: boolean): Interval[] {
  const { steps } = input;
  const out: Interval[] = [];
  for (let i = 0; i < steps.count; i++) {
    const kind = steps.kinds[i]!;
    if (kind === STEP_KIND.esm) continue;
    const name = steps.names[i]!;
    const isShutdown = SHUTDOWN_PHASES.has(name) || SHUTDOWN_HOOKS.has(name);
    if (isShutdown !== shutdown) continue;
    const start = steps.starts[i]!;
    if (!shutdown && start > to) continue;
    // A start-up step still open at ready (another context's hook phase, say) ends there on the timeline.
    const recordedEnd = Number.isNaN(steps.ends[i]!) ? Math.max(start, to) : steps.ends[i]!;
    const end = shutdown ? recordedEnd : Math.min(recordedEnd, to);
    const returned = Number.isNaN(steps.returns[i]!) ? end : steps.returns[i]!;
    if (kind === STEP_KIND.hook) {
      out.push(
        interval(name, 'hook', start, end, {
          returned,
          bean: steps.subjects[i]!,
          ...(steps.groups[i] ? { module: steps.groups[i]! } : {}),
        }),
      );
    } else if (kind === STEP_KIND.diag) {
      out.push(interval(name, 'diag', start, end, steps.subjects[i] ? { package: steps.subjects[i]! } : {}));
    } else {
      out.push(interval(name, 'phase', start, end));
    }
  }
  return out;
}

/**
 * Whether `parent` can hold `child`: it contains it, and a hook (or an async factory) holds another hook or
 * bean only when that one started in its synchronous part, since the hooks of a module run at once (Nest
 * awaits them together): one started while another waits is its sibling, not its child.
 */
function canHold(parent: Interval, child: Interval): boolean {
  if (parent === child || child.start < parent.start || child.end > parent.end) return false;
  if (child.start === parent.start && child.end === parent.end && rank(child) <= rank(parent)) return false;
  if (parent.kind === 'hook' || parent.kind === 'bean') {
    // What runs while a hook or a factory awaits is not its doing: the other hooks of its module (Nest awaits
    // them together), our deferred analysis. A load is, most likely (a `require` after an `await`).
    const load = child.kind === 'package' || child.kind === 'application';
    return child.start < parent.returned || (load && parent.kind === 'hook');
  }
  return true;
}

/** Between two steps of the same extent, which is the outer one. */
function rank(i: Interval): number {
  switch (i.kind) {
    case 'process':
      return 0;
    case 'node':
    case 'preload':
      return 1;
    case 'phase':
      return 2;
    case 'diag':
      return 3;
    case 'application':
      return 4;
    case 'package':
      return 5;
    case 'hook':
      return 6;
    case 'bean':
      return 7;
  }
}

/** Each interval under the innermost one that can hold it. */
function nest(all: Interval[]): Interval[] {
  all.sort((a, b) => a.start - b.start || b.end - a.end || rank(a) - rank(b));
  const roots: Interval[] = [];
  const open: Interval[] = [];
  for (const x of all) {
    // Steps that ended before this one started hold nothing more.
    for (let k = open.length - 1; k >= 0; k--) if (open[k]!.end < x.start) open.splice(k, 1);
    let parent: Interval | undefined;
    for (let k = open.length - 1; k >= 0; k--) {
      if (canHold(open[k]!, x)) {
        parent = open[k];
        break;
      }
    }
    (parent ? parent.children : roots).push(x);
    open.push(x);
  }
  return roots;
}

/**
 * Self time as a sampling profiler would count it: each instant goes to the most recently started step still
 * open (JavaScript runs one thing at a time; the newest open step is what runs, or what the others wait on).
 * A step whose extent spills past its parent's (`nest.create`, called from the main module's load and resolved
 * after it) then takes the overlap from the step it started in.
 */
function computeSelf(all: readonly Interval[], to: number): void {
  const events: Array<{ at: number; open: boolean; i: Interval }> = [];
  for (const i of all) {
    i.self = 0;
    const end = Math.min(i.end, to);
    if (end <= i.start) continue;
    events.push({ at: i.start, open: true, i }, { at: end, open: false, i });
  }
  events.sort((a, b) => a.at - b.at || (a.open === b.open ? 0 : a.open ? 1 : -1));
  const active: Interval[] = [];
  let last = events.length > 0 ? events[0]!.at : 0;
  for (const e of events) {
    if (e.at > last && active.length > 0) {
      let newest = active[0]!;
      for (const a of active)
        if (a.start > newest.start || (a.start === newest.start && rank(a) > rank(newest))) newest = a;
      newest.self += e.at - last;
    }
    last = e.at;
    if (e.open) active.push(e.i);
    else {
      const k = active.lastIndexOf(e.i);
      if (k >= 0) active.splice(k, 1);
    }
  }
}

/** Of overlapping children, the one that ended last is what the parent waited for, and before it started, the same. */
function markCritical(children: readonly Interval[]): void {
  const sorted = [...children].sort((a, b) => a.start - b.start);
  let cluster: Interval[] = [];
  let clusterEnd = -Infinity;
  // Walked back from the step that ended last: before it started, the start was waiting for whichever step
  // that had started by then ended last, and so on. An application's main module calls bootstrap() from its top
  // level, so `nest.create` starts inside `application.load` and outlasts it: both are on the path.
  const close = (): void => {
    let cursor = Infinity;
    for (;;) {
      let pick: Interval | undefined;
      for (const c of cluster)
        if (!c.critical && c.start < cursor && (pick === undefined || c.end > pick.end)) pick = c;
      if (pick === undefined) break;
      pick.critical = true;
      markCritical(pick.children);
      cursor = pick.start;
    }
    cluster = [];
  };
  for (const c of sorted) {
    if (c.start >= clusterEnd) {
      close();
      clusterEnd = c.end;
    } else clusterEnd = Math.max(clusterEnd, c.end);
    cluster.push(c);
  }
  close();
}

function flatten(roots: readonly Interval[], out: BootStep[], parent?: number): void {
  const ordered = [...roots].sort((a, b) => a.start - b.start);
  for (const i of ordered) {
    const id = out.length;
    i.id = id;
    const wait = i.end - i.returned;
    out.push({
      id,
      name: i.name,
      kind: i.kind,
      start: i.start,
      end: i.end,
      self: i.self,
      ...(wait > 0 ? { wait } : {}),
      ...(parent !== undefined ? { parent } : {}),
      ...(i.critical ? { critical: true } : {}),
      ...(i.package !== undefined ? { package: i.package } : {}),
      ...(i.bean !== undefined ? { bean: i.bean } : {}),
      ...(i.module !== undefined ? { module: i.module } : {}),
      ...(i.files !== undefined ? { files: i.files } : {}),
      ...(i.esm ? { esm: true } : {}),
      ...(i.requiredBy !== undefined ? { requiredBy: i.requiredBy } : {}),
    });
    flatten(i.children, out, id);
  }
}

/** The packages' entries added up, slowest self time first. */
function packages(steps: readonly BootStep[], versionOf: (name: string) => string | undefined): PackageLoad[] {
  const byName = new Map<
    string,
    { inclusive: number; self: number; loads: number; files: number; top: boolean; esm: boolean }
  >();
  const byId = new Map(steps.map((s) => [s.id, s]));
  const insideSame = (s: BootStep): boolean => {
    for (
      let p = s.parent !== undefined ? byId.get(s.parent) : undefined;
      p;
      p = p.parent !== undefined ? byId.get(p.parent) : undefined
    )
      if (p.kind === 'package' && p.package === s.package) return true;
    return false;
  };
  for (const s of steps) {
    if (s.kind !== 'package' || s.package === undefined) continue;
    let entry = byName.get(s.package);
    if (!entry) byName.set(s.package, (entry = { inclusive: 0, self: 0, loads: 0, files: 0, top: false, esm: false }));
    if (!insideSame(s)) entry.inclusive += s.end - s.start;
    entry.self += s.self;
    entry.loads += 1;
    entry.files += s.files ?? 0;
    const parent = s.parent !== undefined ? byId.get(s.parent) : undefined;
    if ((parent === undefined || parent.kind !== 'package') && s.requiredBy === undefined) entry.top = true;
    if (s.esm) entry.esm = true;
  }
  return [...byName]
    .map(([name, e]) => {
      const version = versionOf(name);
      return {
        name,
        ...(version !== undefined ? { version } : {}),
        inclusive: e.inclusive,
        self: e.self,
        loads: e.loads,
        files: e.files,
        topLevel: e.top,
        ...(e.esm ? { esm: true } : {}),
      };
    })
    .sort((a, b) => b.self - a.self);
}

function gaps(roots: readonly Interval[], to: number): BootGap[] {
  const sorted = [...roots].sort((a, b) => a.start - b.start);
  const out: BootGap[] = [];
  let covered = 0;
  let after: string | undefined;
  for (const r of sorted) {
    if (r.start > covered + 0.001 && covered < to) {
      const before = r.name === 'package.load' ? `package.load ${r.package}` : r.name;
      out.push({ start: covered, end: Math.min(r.start, to), ...(after ? { after } : {}), before });
    }
    if (r.end > covered) {
      covered = r.end;
      after = r.name === 'package.load' ? `package.load ${r.package}` : r.name;
    }
  }
  if (covered < to) out.push({ start: covered, end: to, ...(after ? { after } : {}) });
  return out;
}

function beforeInstrumentation(
  input: BootInput,
): { modules: number; packages: Array<{ name: string; files: number }> } | undefined {
  const cached = input.cachedFiles;
  if (!cached) return undefined;
  const files: string[] = [];
  for (const f of cached) {
    if (ownerOf(f, input.ownRoot) === OWN_PACKAGE) break;
    files.push(f);
  }
  if (files.length === 0) return undefined;
  const counts = new Map<string, number>();
  for (const f of files) {
    const owner = ownerOf(f, input.ownRoot);
    counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  return {
    modules: files.length,
    packages: [...counts].map(([name, n]) => ({ name, files: n })).sort((a, b) => b.files - a.files),
  };
}

/**
 * Each package directory's version, read once per process: a profile is rebuilt when the report, the page or the
 * actuator asks after something new was recorded, and reading Vendure's 300 package.json files again each time
 * was a third of a build (130 ms of 360 under a profiler).
 */
const versionsByDir = new Map<string, string | undefined>();

/** Builds the profile: cheap enough to run per request (thousands of loads: a few milliseconds). */
export function buildBootProfile(input: BootInput): BootProfile {
  const { marks } = input;
  const ready = Number.isNaN(marks.ready) ? undefined : marks.ready;
  const end = ready ?? input.now;
  const all: Interval[] = [];
  const nodeEnd = input.nodeEnvironment;
  if (nodeEnd !== undefined && nodeEnd > 0) all.push(interval('node.bootstrap', 'node', 0, Math.min(nodeEnd, end)));
  // The preload: from Node's environment to the main module's load: Node's pre-execution and the --require
  // and --import scripts (Node marks `bootstrapComplete` after them).
  let mainStart: number | undefined;
  if (input.mainFile !== undefined) {
    for (let i = 0; i < input.loads.count; i++) {
      if (input.loads.depths[i] === 0 && input.loads.files[i] === input.mainFile) {
        mainStart = input.loads.starts[i];
        break;
      }
    }
  }
  const preloadEnd = mainStart ?? input.nodeBootstrapEnd;
  if (nodeEnd !== undefined && preloadEnd !== undefined && preloadEnd > nodeEnd) {
    all.push(interval('node.preload', 'preload', nodeEnd, Math.min(preloadEnd, end)));
  }
  if (!Number.isNaN(marks.diagLoadEnd)) {
    all.push(interval('diag.instrumentation.load', 'diag', marks.diagLoadStart, marks.diagLoadEnd));
  }
  if (!Number.isNaN(marks.diagEnableEnd)) {
    all.push(interval('diag.instrumentation.enable', 'diag', marks.diagEnableStart, marks.diagEnableEnd));
  }
  const loads = loadSteps(input, end);
  const recorded = recordedSteps(input, end, false);
  const beans = (input.beans ?? [])
    .filter((b) => b.start <= end)
    .map((b) =>
      interval('bean.instantiate', 'bean', b.start, b.end, {
        bean: b.name,
        ...(b.module !== undefined ? { module: b.module } : {}),
        ...(b.returned !== undefined ? { returned: b.returned } : {}),
      }),
    );
  // Against every other step, the preload's and our own construction's included: the first module after one
  // of those follows the loader's work, not another module.
  const esm = esmSteps(input, [...all, ...loads, ...recorded], end);
  all.push(...loads, ...esm, ...recorded, ...beans);
  const roots = nest(all);
  computeSelf(all, end);
  // An ES module application has no CommonJS main load: Node's ESM loader runs the --import preloads, then
  // resolves, loads (through the loader hook's thread) and links the graph before its modules run. No hook
  // sees that work (import-in-the-middle does not even report the entry module); what no step covers between
  // Node's bootstrap and the framework's first phase (the main module has run by then) can only be it, and
  // the main module's own top level, and is named so.
  const firstPhase = recorded.filter((r) => r.kind === 'phase').reduce((m, r) => Math.min(m, r.start), Infinity);
  const mainEvaluated =
    mainStart === undefined && esm.length > 0 && Number.isFinite(firstPhase) ? firstPhase : undefined;
  if (mainEvaluated !== undefined && input.nodeBootstrapEnd !== undefined) {
    for (const g of gaps(roots, Math.min(mainEvaluated, end))) {
      const from = Math.max(g.start, input.nodeBootstrapEnd);
      if (g.end <= from) continue;
      const loader = interval('node.esm_loader', 'preload', from, g.end);
      loader.self = g.end - from;
      roots.push(loader);
    }
  }
  markCritical(roots);
  const steps: BootStep[] = [];
  flatten(roots, steps);

  const dirs = new Map<string, string>();
  for (let i = 0; i < input.loads.count; i++) {
    const pkg = packageOf(input.loads.files[i]!);
    if (pkg && !dirs.has(pkg.name)) dirs.set(pkg.name, pkg.dir);
  }
  const versionOf = (name: string): string | undefined => {
    const dir = dirs.get(name);
    if (dir === undefined) return undefined;
    if (!versionsByDir.has(dir)) {
      let v: string | undefined;
      try {
        v = packageVersionAt(dir);
      } catch {
        v = undefined;
      }
      versionsByDir.set(dir, v);
    }
    return versionsByDir.get(dir);
  };

  // Our own cost, as self time (the packages our load pulls in, @opentelemetry/instrumentation say, are theirs).
  const diag = { load: 0, enable: 0, patch: 0, modules: 0, analysis: 0 };
  for (const s of steps) {
    if (s.kind !== 'diag') continue;
    if (s.name === 'diag.patch') diag.patch += s.self;
    else if (s.name === 'diag.analysis' || s.name === 'diag.report_page') diag.analysis += s.self;
    else if (s.name === 'diag.instrumentation.load') diag.load += s.self;
    else if (s.name === 'diag.instrumentation.enable') diag.enable += s.self;
    else {
      let within: string | undefined;
      for (let p = s.parent; p !== undefined && within === undefined; p = steps[p]!.parent) {
        const name = steps[p]!.name;
        if (name === 'diag.instrumentation.load' || name === 'diag.instrumentation.enable') within = name;
      }
      if (within === 'diag.instrumentation.load') diag.load += s.self;
      else if (within === 'diag.instrumentation.enable') diag.enable += s.self;
      else diag.modules += s.self;
    }
  }
  const attributed = unionLength(roots, 0, end);
  const shutdownSteps = shutdownProfile(input);
  const before = beforeInstrumentation(input);
  return {
    timeOrigin: input.timeOrigin,
    ...(ready !== undefined ? { ready, readyCause: marks.readyCause } : {}),
    end,
    steps,
    packages: packages(steps, versionOf),
    diag: { ...diag, total: diag.load + diag.enable + diag.patch + diag.modules + diag.analysis },
    coverage: {
      attributed,
      unattributed: Math.max(0, end - attributed),
      share: end > 0 ? attributed / end : 1,
      gaps: gaps(roots, end),
    },
    ...(before ? { beforeInstrumentation: before } : {}),
    ...(shutdownSteps ? { shutdown: shutdownSteps } : {}),
  };
}

/** The first phase of a close: `app.close()`'s, or on the signal path of `enableShutdownHooks()` the first hook phase. */
const CLOSE_STARTS: ReadonlySet<string> = new Set(['nest.close', 'nest.on_module_destroy']);

/**
 * The last close: a process that closes several applications (a test suite, a worker per job) records the
 * shutdown steps of each, and each close is reported once, when it has finished. The last close starts at the
 * last root step that begins one, or at an earlier one still running then (two applications closing at once).
 */
function shutdownProfile(input: BootInput): BootProfile['shutdown'] {
  const recorded = recordedSteps(input, Infinity, true);
  if (recorded.length === 0) return undefined;
  const roots = [...nest(recorded)].sort((a, b) => a.start - b.start);
  let first = 0;
  for (let i = roots.length - 1; i >= 0; i--) {
    if (CLOSE_STARTS.has(roots[i]!.name)) {
      first = i;
      break;
    }
  }
  while (first > 0 && roots[first - 1]!.end > roots[first]!.start) first--;
  const close = roots.slice(first);
  const within: Interval[] = [];
  const collect = (xs: readonly Interval[]): void => {
    for (const x of xs) {
      within.push(x);
      collect(x.children);
    }
  };
  collect(close);
  computeSelf(within, Infinity);
  markCritical(close);
  const steps: BootStep[] = [];
  flatten(close, steps);
  let start = Infinity;
  let end = -Infinity;
  for (const s of steps) {
    start = Math.min(start, s.start);
    end = Math.max(end, s.end);
  }
  return { start, end, steps };
}
