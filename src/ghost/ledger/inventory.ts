import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { endpointName, type EndpointRecord } from '../analysis/bean-graph';
import type { MemberLookups, MemberSource } from '../member-verdicts';
import { registrationOf, type DiagReport } from '../reports/diag-report';
import type { GhostReport } from '../tracking/types';

/** One application bean as the ledger keeps it: what a reader needs to find it and to judge it. */
export interface InventoryBean {
  /** The report's stable name (`module/token` only where two modules share a token). */
  readonly name: string;
  readonly module?: string;
  readonly className?: string;
  /** The file it was defined in, relative to the application; with `registered`, the module file registering it. */
  readonly source?: string;
  /** The line of its class's declaration in `source`, when found: where code scanning annotates an untouched bean. */
  readonly line?: number;
  /**
   * It has no class file of the application's (a library's class it lists, `providers: [Logger]`; a value or a
   * factory): `source` and `line` are where its module registers it, and what goes is the registration.
   */
  readonly registered?: true;
  /**
   * With `registered`: its class was found nowhere (one no module exports, or a library's the origins could not
   * tell), so whose it is is not known; if it is the application's, deleting it means the class too.
   */
  readonly classFileUnknown?: true;
  /** A Phase 1 candidate in this version. */
  readonly ghostCandidate: boolean;
  /** A candidate something injects, but only these candidates do. */
  readonly neededOnlyBy?: readonly string[];
  /**
   * Injected, but only by these beans, none of whose endpoints this process serves (a command-line controller in an
   * HTTP application): no call could reach it through them here, so its silence says nothing either.
   */
  readonly reachedOnlyThrough?: readonly string[];
  /** `true` when Phase 2 tracks it, else why not. */
  readonly tracked: true | string;
  /**
   * Method depth: the methods Phase 2 watches on it, each with its line and whether it is kept on purpose. Absent
   * when this process watched it as a whole (bean depth, Phase 2 off): its methods' calls were not told apart.
   */
  readonly methods?: readonly InventoryMethod[];
}

/** One watched method of a bean, with what a reader cannot find out on its own: where it is, whether it is kept. */
export interface InventoryMethod {
  readonly name: string;
  readonly source?: MemberSource;
  /** Rare on purpose (`@Kept`, `diag.ghost-tracking.kept`): the reason, as this process's settings say. */
  readonly kept?: string;
}

/**
 * One entry point, as the ledger keeps it: the inventory's record (a cron job's expression, never its next fire
 * time, which moves with the clock and would make every replica's inventory a different one), kept or not.
 */
export interface InventoryEndpoint extends EndpointRecord {
  readonly kept?: string;
}

/** Why a lazy container's binding never resolved in the process was not tracked there (its verdict's `why`). */
export const NEVER_RESOLVED = 'never resolved, so no instance was made to watch';

/** Every application bean of one process at ready, and how it was watched. */
export interface Inventory {
  /** `nestjs`, `inversify`, `tsyringe`, `awilix`. */
  readonly framework: string;
  /** Phase 2 on in the process that wrote it. */
  readonly tracking: boolean;
  readonly beans: readonly InventoryBean[];
  /** The entry points the framework calls, each tied to its handler bean and method, when the adapter reads them. */
  readonly endpoints?: readonly InventoryEndpoint[];
}

/**
 * The application beans of a start-up report (module classes left out: nothing to delete there on its own),
 * with Phase 2's state from the live snapshot, when tracking is on.
 */
export function applicationBeans(
  report: DiagReport,
  snapshot: GhostReport | undefined,
  /** The line of a class's declaration in its file (member-source.ts), read after ready. */
  lineOf?: (file: string, className: string) => number | undefined,
): InventoryBean[] {
  const candidates = new Set(report.ghostCandidates.beans);
  const tracked = snapshot ? new Set([...snapshot.touched, ...snapshot.untouched]) : undefined;
  const neverResolved = new Set(snapshot?.neverResolved ?? []);
  const through = reachedOnlyThrough(report);
  return report.graph.nodes
    .filter((n) => !n.framework && n.role !== 'module')
    .map((n) => {
      // A bean with no class file of the application's stands at its registration (its module's file and line).
      const source = n.source ?? n.registeredIn?.file;
      const line = n.source !== undefined ? lineOf?.(n.source, n.className ?? n.token) : n.registeredIn?.line;
      const registration = registrationOf(n);
      return {
        name: n.name,
        ...(n.module !== undefined ? { module: n.module } : {}),
        ...(n.className !== undefined ? { className: n.className } : {}),
        ...(source !== undefined ? { source } : {}),
        ...(line !== undefined ? { line } : {}),
        ...(registration !== undefined ? { registered: true as const } : {}),
        ...(registration === 'class-file-unknown' ? { classFileUnknown: true as const } : {}),
        ghostCandidate: candidates.has(n.name),
        ...(n.neededOnlyBy !== undefined && candidates.has(n.name) ? { neededOnlyBy: n.neededOnlyBy } : {}),
        ...(through.has(n.name) ? { reachedOnlyThrough: through.get(n.name)! } : {}),
        tracked:
          tracked === undefined
            ? 'Phase 2 is off in this process'
            : tracked.has(n.name)
              ? true
              : (snapshot!.untrackable[n.name] ??
                // a lazy container's binding nothing resolved: said, where "not tracked" read as a blind spot (a
                // trial's one dead interceptor); the ledger's other processes may still have resolved it
                (neverResolved.has(n.name)
                  ? NEVER_RESOLVED
                  : n.verdict === 'not-instantiated'
                    ? 'not created at start-up'
                    : 'not tracked')),
      };
    });
}

/**
 * The beans injected only by beans none of whose endpoints the process serves (each with at least one endpoint, all
 * `unserved`), to those beans; a bean with a served endpoint of its own is reachable and left out.
 */
function reachedOnlyThrough(report: DiagReport): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const endpoints = report.endpoints;
  if (endpoints === undefined || !endpoints.some((e) => e.unserved !== undefined)) return out;
  const served = new Set(endpoints.filter((e) => e.unserved === undefined).map((e) => e.bean));
  const unserved = new Set(endpoints.filter((e) => e.unserved !== undefined && !served.has(e.bean)).map((e) => e.bean));
  const dependents = new Map<string, Set<string>>();
  for (const e of report.graph.edges) {
    const set = dependents.get(e.to);
    if (set === undefined) dependents.set(e.to, new Set([e.from]));
    else set.add(e.from);
  }
  for (const [bean, by] of dependents) {
    if (served.has(bean) || unserved.has(bean) || by.size === 0) continue;
    if ([...by].every((d) => unserved.has(d))) out.set(bean, [...by].sort());
  }
  return out;
}

/** What a process knows of its beans' members at ready (method depth), for its inventory. */
export interface InventoryMemberFacts extends MemberLookups {
  /** The methods Phase 2 watches on a tracked bean; undefined at bean depth or for a bean watched as a whole. */
  readonly methodsOf: (bean: string) => Iterable<string> | undefined;
}

/**
 * The beans with their watched methods (each with its line and kept reason), and the endpoints of those beans: a
 * framework's own handlers are not the application's to delete (member-verdicts.ts), so the ledger does not keep
 * them (Vendure's 519 resolvers would cost more than the application's whole inventory).
 */
export function withMembers(
  beans: readonly InventoryBean[],
  endpoints: readonly EndpointRecord[] | undefined,
  facts: InventoryMemberFacts,
): { beans: InventoryBean[]; endpoints?: InventoryEndpoint[] } {
  const withMethods = beans.map((b): InventoryBean => {
    const names = b.tracked === true ? facts.methodsOf(b.name) : undefined;
    if (names === undefined) return b;
    const methods = [...names].sort().map((name): InventoryMethod => {
      const source = facts.source?.(b.name, name);
      const kept = facts.kept?.(b.name, name);
      return { name, ...(source !== undefined ? { source } : {}), ...(kept !== undefined ? { kept } : {}) };
    });
    return { ...b, methods };
  });
  if (endpoints === undefined) return { beans: withMethods };
  const names = new Set(beans.map((b) => b.name));
  const kept = endpoints
    .filter((e) => names.has(e.bean))
    .map((e): InventoryEndpoint => {
      const reason = facts.keptEndpoint?.(e) ?? facts.kept?.(e.bean, e.method);
      return { ...withoutMovingTimes(e), ...(reason !== undefined ? { kept: reason } : {}) };
    });
  return { beans: withMethods, endpoints: kept };
}

/** A cron job's next fire time moves with the clock; its expression does not (the reader computes the next). */
function withoutMovingTimes(e: EndpointRecord): EndpointRecord {
  if (e.schedule?.cron === undefined || e.schedule.nextAt === undefined) return e;
  const { nextAt: _moving, ...schedule } = e.schedule;
  return { ...e, schedule };
}

/*
 * Stored deflated, with one-letter keys: 3,000 beans of a real shape take 23 KB where the plain JSON takes 310 KB
 * (bench/ledger), so that a few versions of a large service stay well inside the 1 MiB a service may use. With
 * their 30,000 methods and 1,000 endpoints (issue #43) the same service's inventory is measured in
 * docs/benchmarks.md. A method is its name alone when nothing else is known, else `[name, line, file, kept]`
 * trimmed from the end, the file '' when it is the previous method's (a class's methods share one file).
 */
type StoredMethod = string | [string, number, string?, string?];

interface StoredBean {
  n: string;
  m?: string;
  c?: string;
  s?: string;
  /** the class's line in s */
  l?: number;
  g?: 1;
  /** registered: source and line are the registration's; 2: and its class was found nowhere (classFileUnknown) */
  r?: 1 | 2;
  /** neededOnlyBy: the candidates that alone inject it */
  o?: string[];
  /** reachedOnlyThrough: the unserved beans that alone inject it */
  q?: string[];
  t?: string;
  x?: StoredMethod[];
}

interface StoredEndpoint {
  k: EndpointRecord['kind'];
  r: string;
  /** path of the GraphQL API */
  u?: string;
  b: string;
  m: string;
  /** schedule: every (ms), cron, at (a one-off's fixed date) */
  e?: number;
  c?: string;
  a?: string;
  /** kept: its reason */
  p?: string;
  /** not served by the variant's processes: why (EndpointRecord's `unserved`) */
  n?: string;
}

function storeMethods(methods: readonly InventoryMethod[]): StoredMethod[] {
  let file: string | undefined;
  return methods.map((m): StoredMethod => {
    if (m.source === undefined && m.kept === undefined) return m.name;
    const same = m.source !== undefined && m.source.file === file;
    if (m.source !== undefined) file = m.source.file;
    const stored: StoredMethod = [m.name, m.source?.line ?? 0];
    if (m.source !== undefined && !same) stored[2] = m.source.file;
    if (m.kept !== undefined) {
      stored[2] ??= '';
      stored[3] = m.kept;
    }
    return stored;
  });
}

function loadMethods(stored: readonly StoredMethod[]): InventoryMethod[] {
  let file: string | undefined;
  return stored.map((m): InventoryMethod => {
    if (typeof m === 'string') return { name: m };
    const [name, line, named, kept] = m;
    if (named !== undefined && named !== '') file = named;
    const source = line > 0 && file !== undefined ? { file, line } : undefined;
    return { name: String(name), ...(source ? { source } : {}), ...(kept !== undefined ? { kept } : {}) };
  });
}

function storeEndpoint(e: InventoryEndpoint): StoredEndpoint {
  return {
    k: e.kind,
    r: e.route,
    ...(e.path !== undefined ? { u: e.path } : {}),
    b: e.bean,
    m: e.method,
    ...(e.schedule?.everyMs !== undefined ? { e: e.schedule.everyMs } : {}),
    ...(e.schedule?.cron !== undefined ? { c: e.schedule.cron } : {}),
    ...(e.schedule?.cron === undefined && e.schedule?.nextAt !== undefined ? { a: e.schedule.nextAt } : {}),
    ...(e.kept !== undefined ? { p: e.kept } : {}),
    ...(e.unserved !== undefined ? { n: e.unserved } : {}),
  };
}

function loadEndpoint(e: StoredEndpoint): InventoryEndpoint {
  const schedule = {
    ...(e.e !== undefined ? { everyMs: e.e } : {}),
    ...(e.c !== undefined ? { cron: e.c } : {}),
    ...(e.a !== undefined ? { nextAt: e.a } : {}),
  };
  return {
    kind: e.k,
    route: String(e.r),
    ...(e.u !== undefined ? { path: String(e.u) } : {}),
    bean: String(e.b),
    method: String(e.m),
    ...(Object.keys(schedule).length > 0 ? { schedule } : {}),
    ...(e.p !== undefined ? { kept: e.p } : {}),
    ...(typeof e.n === 'string' ? { unserved: e.n } : {}),
  };
}

export function encodeInventory(inventory: Inventory): Buffer {
  const beans: StoredBean[] = inventory.beans.map((b) => ({
    n: b.name,
    ...(b.module !== undefined ? { m: b.module } : {}),
    ...(b.className !== undefined ? { c: b.className } : {}),
    ...(b.source !== undefined ? { s: b.source } : {}),
    ...(b.line !== undefined ? { l: b.line } : {}),
    ...(b.registered ? { r: b.classFileUnknown ? (2 as const) : (1 as const) } : {}),
    ...(b.ghostCandidate ? { g: 1 as const } : {}),
    ...(b.neededOnlyBy !== undefined ? { o: [...b.neededOnlyBy] } : {}),
    ...(b.reachedOnlyThrough !== undefined ? { q: [...b.reachedOnlyThrough] } : {}),
    ...(b.tracked !== true ? { t: b.tracked } : {}),
    ...(b.methods !== undefined ? { x: storeMethods(b.methods) } : {}),
  }));
  return deflateRawSync(
    Buffer.from(
      JSON.stringify({
        f: inventory.framework,
        t: inventory.tracking ? 1 : 0,
        b: beans,
        ...(inventory.endpoints !== undefined ? { e: inventory.endpoints.map(storeEndpoint) } : {}),
      }),
    ),
  );
}

/** @throws Error when the bytes are not an inventory (another writer's key, a truncated value). */
export function decodeInventory(bytes: Buffer): Inventory {
  const raw = JSON.parse(inflateRawSync(bytes).toString('utf8')) as {
    f?: unknown;
    t?: unknown;
    b?: unknown;
    e?: unknown;
  };
  if (typeof raw.f !== 'string' || !Array.isArray(raw.b)) throw new Error('not a ledger inventory');
  return {
    framework: raw.f,
    tracking: raw.t === 1,
    beans: (raw.b as StoredBean[]).map((b) => ({
      name: String(b.n),
      ...(b.m !== undefined ? { module: b.m } : {}),
      ...(b.c !== undefined ? { className: b.c } : {}),
      ...(b.s !== undefined ? { source: b.s } : {}),
      ...(typeof b.l === 'number' ? { line: b.l } : {}),
      ...(b.r === 1 || b.r === 2 ? { registered: true as const } : {}),
      ...(b.r === 2 ? { classFileUnknown: true as const } : {}),
      ghostCandidate: b.g === 1,
      ...(Array.isArray(b.o) ? { neededOnlyBy: b.o.map(String) } : {}),
      ...(Array.isArray(b.q) ? { reachedOnlyThrough: b.q.map(String) } : {}),
      tracked: b.t === undefined ? true : b.t,
      ...(Array.isArray(b.x) ? { methods: loadMethods(b.x) } : {}),
    })),
    ...(Array.isArray(raw.e) ? { endpoints: (raw.e as StoredEndpoint[]).map(loadEndpoint) } : {}),
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Names the stored inventory by its content: processes that saw the same beans the same way share one copy. */
export function inventoryDigest(encoded: Buffer): string {
  return createHash('sha256').update(encoded).digest('hex').slice(0, 16);
}

/**
 * The code version when the resource has no `service.version`: a digest of which beans exist in which module and
 * which endpoints they serve (not of how they were watched, so not of the methods only a tracking process lists, nor
 * of their files' paths, which follow the working directory), so that the replicas of one build agree and a deploy
 * that changes beans or routes is a new one.
 */
export function inventoryVersion(inventory: Inventory): string {
  const identity = inventory.beans
    .map((b) => `${b.name}\u0000${b.module ?? ''}\u0000${b.className ?? ''}`)
    .sort()
    .join('\n');
  const endpoints = (inventory.endpoints ?? [])
    .map((e) => `${endpointName(e)}\u0000${e.bean}\u0000${e.method}`)
    .sort()
    .join('\n');
  return `inv-${sha256(`${inventory.framework}\n${identity}${endpoints === '' ? '' : `\n\n${endpoints}`}`).slice(0, 12)}`;
}
