/**
 * The members below the beans across a service's variants (issue #43): each bean's methods and the endpoints, each
 * judged on the variants (versions × inventories) that had it, with the rules beans follow. A method a deploy
 * removed retires while its bean lives on; one a deploy added starts its evidence at that deploy; a variant that had
 * the bean without telling its methods apart (Phase 2 off, bean depth, the bean untrackable there) is a share of the
 * processes whose calls of the method nobody saw, as an untracked process is for a bean.
 */
import type { EndpointRecord } from '../analysis/bean-graph';
import { nextCronTime } from '../analysis/cron';
import type { MemberFacts, MemberLookups, MethodCalls } from '../member-verdicts';
import type { Inventory, InventoryEndpoint, InventoryMethod } from './inventory';

/** One variant as the reader knows it. */
export interface VariantView {
  readonly version: string;
  readonly inventory: Inventory;
  /** When a process running it first started (ms; never before the ledger's `since`). */
  readonly firstSeen: number;
  /** Its processes' hours (tracked or not: the inventory says). */
  readonly hours: number;
  readonly processes: number;
  /** A variant of the service's current code (a live process runs it, or it ran last when all stopped). */
  readonly current: boolean;
}

/** What the answer needs of the members, merged over the variants. */
export interface LedgerMembers {
  /** A bean's methods (their last uses, ms) and each one's own evidence; undefined when no variant listed any. */
  methodsOf(bean: string): { calls: MethodCalls; facts: ReadonlyMap<string, MemberFacts> } | undefined;
  /**
   * Every endpoint any variant had, its newest record (a cron job's next fire time as of now); `unserved` when no
   * variant served it.
   */
  readonly endpoints: readonly EndpointRecord[] | undefined;
  /** An endpoint's own evidence. */
  endpointFacts(endpoint: EndpointRecord): MemberFacts | undefined;
  /**
   * A bean's evidence on the variants that served any of its endpoints, when some variant had the bean with none
   * of them served (a message controller in an HTTP application beside a worker that serves it): those processes
   * are no evidence of its silence. Undefined when every variant counts, or none does.
   */
  beanFacts(bean: string): MemberFacts | undefined;
  /** Where each method is and whether it is kept, as the newest variant that has it says. */
  readonly lookups: MemberLookups;
}

interface Acc {
  firstSeen: number;
  hours: number;
  untrackedHours: number;
  total: number;
  tracked: number;
  versions: Set<string>;
  live: boolean;
}

const acc = (): Acc => ({
  firstSeen: Infinity,
  hours: 0,
  untrackedHours: 0,
  total: 0,
  tracked: 0,
  versions: new Set(),
  live: false,
});

/** A variant that had the member: `seen` when its processes told the member's calls apart. */
function add(a: Acc, v: VariantView, seen: boolean): void {
  a.firstSeen = Math.min(a.firstSeen, v.firstSeen);
  a.versions.add(v.version);
  a.live ||= v.current;
  a.total += v.processes;
  if (seen) {
    a.tracked += v.processes;
    a.hours += v.hours;
  } else a.untrackedHours += v.hours;
}

const facts = (a: Acc): MemberFacts => ({
  firstSeen: a.firstSeen,
  processHours: a.hours,
  ...(a.untrackedHours > 0 ? { untrackedProcessHours: a.untrackedHours } : {}),
  processes: { total: a.total, tracked: a.tracked },
  versions: [...a.versions].sort(),
  live: a.live,
});

// The API's path is part of the key: `Query.product` of the shop API and of the admin API are two endpoints.
const endpointKey = (e: EndpointRecord) =>
  `${e.kind}\u0000${e.path ?? ''}\u0000${e.route}\u0000${e.bean}\u0000${e.method}`;

/** Per bean: its methods' evidence, and the processes that had it without telling its methods apart. */
interface BeanMembers {
  readonly methods: Map<string, Acc>;
  readonly info: Map<string, InventoryMethod>;
  unseenProcesses: number;
  unseenHours: number;
  unseenCurrent: boolean;
  /** A current variant lists its methods: a method only the older ones list is gone. */
  currentListing: boolean;
}

/**
 * Merges the members of every variant, newest first (a member's file, line and kept reason are the newest
 * variant's), with each method's last use from the ledger's records.
 */
export function mergeMembers(
  variants: readonly VariantView[],
  lastUse: (bean: string, member: string) => number | undefined,
  now: number,
): LedgerMembers {
  const beans = new Map<string, BeanMembers>();
  const endpoints = new Map<string, { record: InventoryEndpoint; acc: Acc; served: boolean }>();
  // Per bean: its evidence over the variants that served one of its endpoints or had none; whether one did not.
  const beanServed = new Map<string, { acc: Acc; unservedSomewhere: boolean }>();
  let anyEndpoints = false;
  for (const v of variants) {
    const listed = new Map<string, ReadonlySet<string>>();
    // The handlers (bean and method) and the beans this variant served no endpoint of, though it had some: its
    // processes' hours are no evidence of their silence.
    const served = new Set<string>();
    const unserved = new Set<string>();
    for (const e of v.inventory.endpoints ?? []) {
      const into = e.unserved === undefined ? served : unserved;
      into.add(`${e.bean}\u0000${e.method}`);
      into.add(e.bean);
    }
    const unservedHere = (key: string) => unserved.has(key) && !served.has(key);
    for (const bean of v.inventory.beans) {
      let entry = beanServed.get(bean.name);
      if (entry === undefined) beanServed.set(bean.name, (entry = { acc: acc(), unservedSomewhere: false }));
      // So is a bean only such beans inject there (InventoryBean's reachedOnlyThrough).
      const through = bean.reachedOnlyThrough;
      if (unservedHere(bean.name) || (through !== undefined && through.length > 0 && through.every(unservedHere)))
        entry.unservedSomewhere = true;
      else add(entry.acc, v, v.inventory.tracking && bean.tracked === true);
    }
    for (const bean of v.inventory.beans) {
      let b = beans.get(bean.name);
      if (b === undefined) {
        b = {
          methods: new Map(),
          info: new Map(),
          unseenProcesses: 0,
          unseenHours: 0,
          unseenCurrent: false,
          currentListing: false,
        };
        beans.set(bean.name, b);
      }
      if (v.inventory.tracking && bean.tracked === true && bean.methods !== undefined) {
        listed.set(bean.name, new Set(bean.methods.map((m) => m.name)));
        b.currentListing ||= v.current;
        for (const m of bean.methods) {
          let a = b.methods.get(m.name);
          if (a === undefined) b.methods.set(m.name, (a = acc()));
          // (Listed all the same: a method only unserved handlers have is still the bean's code.)
          if (!unservedHere(`${bean.name}\u0000${m.name}`)) add(a, v, true);
          if (!b.info.has(m.name)) b.info.set(m.name, m);
        }
      } else {
        b.unseenProcesses += v.processes;
        b.unseenHours += v.hours;
        b.unseenCurrent ||= v.current;
      }
    }
    if (v.inventory.endpoints === undefined) continue;
    anyEndpoints = true;
    for (const e of v.inventory.endpoints) {
      const key = endpointKey(e);
      let entry = endpoints.get(key);
      if (entry === undefined) endpoints.set(key, (entry = { record: e, acc: acc(), served: false }));
      // Seen where the processes told its handler method's calls apart; a variant that did not serve it does not
      // count, as a variant without it would not.
      if (e.unserved === undefined) {
        entry.served = true;
        add(entry.acc, v, listed.get(e.bean)?.has(e.method) === true);
      }
    }
  }

  const methodFacts = new Map<string, Map<string, MemberFacts>>();
  for (const [name, b] of beans) {
    if (b.methods.size === 0) continue;
    const out = new Map<string, MemberFacts>();
    for (const [method, a] of b.methods) {
      // Had only where its endpoints were not served: no evidence of its own (its verdict says why).
      if (a.total === 0 && b.unseenProcesses === 0) continue;
      a.total += b.unseenProcesses;
      a.untrackedHours += b.unseenHours;
      // Where no current variant lists the bean's methods (the current code runs with Phase 2 off, say), a method
      // is as live as its bean: nothing says the deploy removed it.
      a.live ||= !b.currentListing && b.unseenCurrent;
      out.set(method, facts(a));
    }
    methodFacts.set(name, out);
  }

  // A route a worker lists as declared, unserved, is served by the API under its prefix: one endpoint, not two.
  const servedHandler = new Set<string>();
  for (const { record, served } of endpoints.values())
    if (served) servedHandler.add(`${record.kind}\u0000${record.bean}\u0000${record.method}`);
  const records = new Map<string, InventoryEndpoint>();
  const endpointList = anyEndpoints
    ? [...endpoints.values()]
        .filter(
          ({ record, served }) =>
            served || !servedHandler.has(`${record.kind}\u0000${record.bean}\u0000${record.method}`),
        )
        .map(({ record, served }) => {
          // Unserved only when no variant served it (then in the newest variant's words).
          const { kept: _kept, unserved, ...rest } = record;
          const e: EndpointRecord = served || unserved === undefined ? rest : { ...rest, unserved };
          const cron = e.schedule?.cron;
          const next =
            cron !== undefined && e.schedule?.nextAt === undefined ? nextCronTime(cron, new Date(now)) : undefined;
          const out: EndpointRecord =
            next !== undefined ? { ...e, schedule: { ...e.schedule, nextAt: next.toISOString() } } : e;
          records.set(endpointKey(out), record);
          return out;
        })
    : undefined;

  return {
    methodsOf(bean) {
      const f = methodFacts.get(bean);
      if (f === undefined) return undefined;
      const calls = new Map<string, number | undefined>();
      // Every method listed, those without evidence of their own too (only unserved handlers had them).
      for (const method of [...beans.get(bean)!.methods.keys()].sort()) calls.set(method, lastUse(bean, method));
      return { calls, facts: f };
    },
    endpoints: endpointList,
    endpointFacts: (e) => {
      const entry = endpoints.get(endpointKey(e));
      return entry === undefined || !entry.served ? undefined : facts(entry.acc);
    },
    beanFacts: (bean) => {
      const entry = beanServed.get(bean);
      return entry === undefined || !entry.unservedSomewhere || entry.acc.total === 0 ? undefined : facts(entry.acc);
    },
    lookups: {
      source: (bean, method) => beans.get(bean)?.info.get(method)?.source,
      kept: (bean, method) => beans.get(bean)?.info.get(method)?.kept,
      keptEndpoint: (e) => records.get(endpointKey(e))?.kept,
    },
  };
}
