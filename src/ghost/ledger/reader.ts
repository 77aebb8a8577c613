import { DiagError } from '../../shared/errors';
import type { RedisPipelineClient } from '../../shared/redis';
import { DEFAULT_THRESHOLDS, type EvidenceThresholds } from '../verdicts';
import {
  judgedBy,
  ledgerAnswer,
  type JudgedThresholds,
  type LedgerAnswer,
  type LedgerEvidence,
  type LedgerVersion,
} from './answer';
import { describeRedisFailure } from './failure';
import { decodeInventory, type Inventory, type InventoryBean } from './inventory';
import { mergeMembers, type VariantView } from './members';
import type { MemberFacts } from '../member-verdicts';
import {
  ledgerKeys,
  memberId,
  parseTouchRecord,
  parseVariant,
  variantOf,
  type ProcessRecord,
  type StatedThresholds,
  type TouchRecord,
} from './keys';
import { isLive, pairs, parseRecord } from './prune';

/** The ledger could not be read; the message names the server by address only. */
export class LedgerReadError extends DiagError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_LEDGER_UNREADABLE', message, options);
  }
}

export interface ReadLedgerOptions {
  readonly client: RedisPipelineClient;
  readonly service: string;
  /**
   * The reader's own thresholds, each overriding the service's (the CLI's `--min-days`): the answer says so. None:
   * the service's, as its processes state them.
   */
  readonly overrides?: Partial<EvidenceThresholds>;
  /** How each override was given, for the answer (`minDays` → `--min-days`). */
  readonly overrideNames?: Partial<Record<keyof EvidenceThresholds, string>>;
  /** What to judge by where no process of the service states its thresholds (older writers). */
  readonly defaults?: EvidenceThresholds;
  /** The server as the answer and errors name it. */
  readonly address: string;
  readonly redact?: (text: string) => string;
  /** The connection's last socket or AUTH error: what an error names rather than the client's retry limit. */
  readonly connectionError?: () => Error | undefined;
  /** Wall clock (ms). Default `Date.now()`. */
  readonly now?: number;
  /**
   * The reading process's own uses that its writer has not written yet: a process answering a person from its
   * ledger (the actuator, the page) shows what it saw itself seconds ago, not only what its last round wrote.
   * Read only: nothing is written for them here (the writer's rounds do that).
   */
  readonly unsent?: UnsentUses;
}

/** A writer's uses not yet acknowledged by Redis ({@link ReadLedgerOptions.unsent}). */
export interface UnsentUses {
  /** Bean name to its latest first touch (ms). */
  readonly touches: ReadonlyMap<string, number>;
  /** Method uses, `at` in seconds as the records keep them. */
  readonly members: Iterable<{ readonly bean: string; readonly member: string; readonly at: number }>;
  /** When the process started (ms). */
  readonly processStartedAt: number;
  /** The version the process runs, as its inventory names it. */
  readonly version: string;
}

async function exec(options: ReadLedgerOptions, commands: (string | number)[][]): Promise<unknown[]> {
  let results: [Error | null, unknown][] | null;
  try {
    results = await options.client.pipeline(commands).exec();
  } catch (err) {
    throw unreadable(options, err);
  }
  const failed = results?.find(([e]) => e);
  if (!results || failed) throw unreadable(options, failed?.[0] ?? new Error('no answer'));
  return results.map(([, v]) => v);
}

function unreadable(options: ReadLedgerOptions, err: unknown): LedgerReadError {
  const redact = options.redact ?? ((t: string) => t);
  const reason = redact(describeRedisFailure(err, options.connectionError?.(), 'read'));
  return new LedgerReadError(
    `could not read the ghost ledger of ${options.service}: Redis at ${options.address} ${reason}`,
    {
      cause: err,
    },
  );
}

const fromStated = (t: StatedThresholds): Required<EvidenceThresholds> => ({
  minDays: t.d,
  minProcessHours: t.ph,
  minTrackedShare: t.ts,
  lastUseResolutionMs: t.r,
});

/**
 * The service's thresholds: the strictest its live processes state (the most evidence any of them asks for, the
 * coarsest last-use period any of them re-arms at), else those of any process on record, else the last a writer
 * left in the meta; undefined when no process ever stated any (writers older than the rule).
 */
function serviceThresholds(
  records: readonly { record: ProcessRecord; live: boolean }[],
  lastStated: string | undefined,
): Required<EvidenceThresholds> | undefined {
  const stated = (live: boolean) =>
    records.filter((r) => r.live === live && r.record.th !== undefined).map((r) => fromStated(r.record.th!));
  let all = stated(true);
  if (all.length === 0) all = stated(false);
  if (all.length === 0 && lastStated !== undefined) {
    try {
      all = [fromStated(JSON.parse(lastStated) as StatedThresholds)];
    } catch {
      /* not ours: the defaults judge */
    }
  }
  const usable = all.filter((t) => Object.values(t).every((n) => typeof n === 'number' && Number.isFinite(n)));
  if (usable.length === 0) return undefined;
  return {
    minDays: Math.max(...usable.map((t) => t.minDays)),
    minProcessHours: Math.max(...usable.map((t) => t.minProcessHours)),
    minTrackedShare: Math.max(...usable.map((t) => t.minTrackedShare)),
    lastUseResolutionMs: Math.max(...usable.map((t) => t.lastUseResolutionMs)),
  };
}

/** The thresholds an answer is judged by: the service's, with the reader's overrides said. */
function judging(options: ReadLedgerOptions, service: Required<EvidenceThresholds> | undefined): JudgedThresholds {
  const base = service ?? { ...DEFAULT_THRESHOLDS, ...options.defaults };
  const overrides = Object.entries(options.overrides ?? {}).filter(([, v]) => v !== undefined) as [
    keyof EvidenceThresholds,
    number,
  ][];
  if (overrides.length === 0) return judgedBy(base, service ? 'service' : 'defaults');
  return judgedBy({ ...base, ...Object.fromEntries(overrides) }, 'override', {
    overridden: overrides.map(([k]) => options.overrideNames?.[k] ?? k),
    service: base,
  });
}

/** A version index no writer hands out: the reading process's own version before its first round names it. */
const UNSENT_VERSION = 'unsent';

/**
 * Lays the reading process's unwritten uses over what Redis holds, as a round would record them: a bean's latest
 * touch with this process's start and version, a method's latest use. (After the lost-records count, which the
 * writers' own counters give.)
 */
function addUnsent(
  unsent: UnsentUses,
  touches: Map<string, TouchRecord>,
  members: Map<string, number>,
  versionOfIndex: Map<string, string>,
): void {
  let index = [...versionOfIndex].find(([, v]) => v === unsent.version)?.[0];
  if (index === undefined) {
    index = UNSENT_VERSION;
    versionOfIndex.set(index, unsent.version);
  }
  for (const [name, at] of unsent.touches) {
    const had = touches.get(name);
    if (had !== undefined && had.lastTouched >= at) continue;
    const versions =
      had === undefined ? [index] : had.versions.includes(index) ? had.versions : [...had.versions, index];
    touches.set(name, { lastTouched: at, processStartedAt: unsent.processStartedAt, version: index, versions });
  }
  for (const use of unsent.members) {
    const id = memberId(use.bean, use.member);
    const key = `${id.bucket}/${id.field}`;
    if ((members.get(key) ?? -Infinity) < use.at * 1000) members.set(key, use.at * 1000);
  }
}

/** Each member record, by bucket index and field: its last use (ms; the records keep seconds). */
function memberUses(buckets: readonly unknown[]): Map<string, number> {
  const uses = new Map<string, number>();
  buckets.forEach((bucket, i) => {
    for (const [field, seconds] of pairs(bucket)) {
      const at = Number(seconds);
      if (Number.isFinite(at)) uses.set(`${i}/${field}`, at * 1000);
    }
  });
  return uses;
}

/**
 * Reads one service's ledger (two pipelines; only reads, so a read-only Redis user suffices) and judges every
 * bean it holds, and each bean's methods and the endpoints when its inventories list them. A bean's evidence spans the versions that had it: it first appeared when the oldest of them
 * did; its process-hours are those of the versions in which Phase 2 tracked it; it is live while a live process
 * runs a version that has it, `retired` once none does.
 * @throws LedgerReadError when Redis does not answer or refuses.
 */
export async function readLedger(options: ReadLedgerOptions): Promise<LedgerAnswer> {
  const k = ledgerKeys(options.service);
  const now = options.now ?? Date.now();
  const [metaRaw, procsRaw, procRaw, vfirstRaw, vlastRaw, vhoursRaw, vprocsRaw, vidxRaw, ...allBuckets] = await exec(
    options,
    [
      ['hgetall', k.meta],
      ['zrange', k.procs, 0, -1, 'WITHSCORES'],
      ['hgetall', k.proc],
      ['hgetall', k.variantFirstSeen],
      ['hgetall', k.variantLastSeen],
      ['hgetall', k.variantHours],
      ['hgetall', k.variantProcesses],
      ['hgetall', k.versionIndex],
      ...k.touchBuckets.map((bucket) => ['hgetall', bucket]),
      ...k.memberBuckets.map((bucket) => ['hgetall', bucket]),
    ],
  );
  const bucketsRaw = allBuckets.slice(0, k.touchBuckets.length);
  const members = memberUses(allBuckets.slice(k.touchBuckets.length));
  const meta = pairs(metaRaw);
  const heartbeatMs = meta.has('heartbeatMs') ? Number(meta.get('heartbeatMs')) : undefined;
  const since = meta.has('since') ? Number(meta.get('since')) : undefined;
  const beats = new Map([...pairs(procsRaw)].map(([id, at]) => [id, Number(at)]));
  const variantFirst = pairs(vfirstRaw);
  const variantLast = pairs(vlastRaw);
  const hoursOf = new Map([...pairs(vhoursRaw)].map(([v, h]) => [v, Number(h)]));
  const liveOf = new Map<string, number>();
  const processesOf = new Map([...pairs(vprocsRaw)].map(([v, n]) => [v, Number(n)]));
  const trackingOf = new Map<string, boolean>();
  const records: { record: ProcessRecord; live: boolean }[] = [];
  let liveProcesses = 0;
  for (const [id, text] of pairs(procRaw)) {
    const r = parseRecord(text);
    if (!r) continue;
    const variant = variantOf(r.v, r.i ?? '');
    hoursOf.set(variant, (hoursOf.get(variant) ?? 0) + r.h);
    processesOf.set(variant, (processesOf.get(variant) ?? 0) + 1);
    trackingOf.set(variant, r.t);
    const live = isLive(r, beats.get(id) ?? 0, now, heartbeatMs ?? 60_000);
    records.push({ record: r, live });
    if (live) {
      liveProcesses++;
      liveOf.set(variant, (liveOf.get(variant) ?? 0) + 1);
    }
  }
  const thresholds = judging(options, serviceThresholds(records, meta.get('thresholds')));

  const variants = [...new Set([...variantFirst.keys(), ...variantLast.keys()])];
  const digests = [...new Set(variants.map((v) => parseVariant(v).digest))];
  const second =
    digests.length > 0
      ? await exec(
          options,
          digests.map((d) => ['getBuffer', k.inventory(d)]),
        )
      : [];
  const inventories = new Map<string, Inventory>();
  digests.forEach((d, i) => {
    const bytes = second[i];
    if (!bytes) return;
    try {
      inventories.set(d, decodeInventory(bytes as Buffer));
    } catch {
      // another writer's value under our key: that variant's beans are unknown, the rest still answer
    }
  });
  const versionOfIndex = new Map([...pairs(vidxRaw)].map(([v, i]) => [i, v]));
  const touches = new Map<string, TouchRecord>();
  for (const bucket of bucketsRaw) {
    for (const [name, text] of pairs(bucket)) {
      const record = parseTouchRecord(text);
      if (record) touches.set(name, record);
    }
  }
  // Touch records lost (evicted, deleted) would read as "never touched": the count the touch script keeps says so.
  const lostTouches =
    Math.max(0, Number(meta.get('touchedBeans') ?? 0) - touches.size) +
    Math.max(0, Number(meta.get('touchedMembers') ?? 0) - members.size);
  if (options.unsent !== undefined) addUnsent(options.unsent, touches, members, versionOfIndex);

  // Whether a variant's processes tracked: its inventory says (the digest covers it); a record, before it is read.
  const tracks = (v: string) => inventories.get(parseVariant(v).digest)?.tracking ?? trackingOf.get(v) ?? true;
  // The service's current code: what its live processes run; when none is live (the service went silent), what
  // ran last (within three heartbeats of the last one seen). Silent is not deleted: a bean is retired only when
  // the current code lacks it.
  const lastSeenOf = (v: string) => Number(variantLast.get(v) ?? 0);
  const newest = Math.max(0, ...variants.map(lastSeenOf));
  const current = (v: string) =>
    liveProcesses > 0 ? (liveOf.get(v) ?? 0) > 0 : newest - lastSeenOf(v) <= 3 * (heartbeatMs ?? 60_000);
  // Judged when the evidence ends: a silent service's time since its last write observed nothing.
  const judgedAt = liveProcesses > 0 || newest === 0 ? now : Math.min(now, newest);

  // The current code's variants first, then the newest: a bean's module, file and Phase 1 state are those of the
  // code that runs now. A variant first seen later is not the current one when its processes have stopped: a trial
  // started a build without its TypeScript once (files `dist/…js`, no contracts readable), then the sources again,
  // and every later answer named the compiled files of the stopped run. No evidence is older than the ledger's
  // `since` (a reset starts it over).
  const firstSeenOf = (v: string) => Math.max(Number(variantFirst.get(v) ?? now), since ?? 0);
  variants.sort((a, b) => Number(current(b)) - Number(current(a)) || firstSeenOf(b) - firstSeenOf(a));
  interface Acc {
    bean: InventoryBean;
    firstSeen: number;
    hours: number;
    untrackedHours: number;
    processes: number;
    trackedProcesses: number;
    versions: Set<string>;
    live: boolean;
    trackedSomewhere: boolean;
    untrackable?: string;
  }
  const beans = new Map<string, Acc>();
  const views: VariantView[] = [];
  const byVersion = new Map<
    string,
    { firstSeen: number; lastSeen: number; hours: number; live: number; beans: Set<string> }
  >();
  for (const v of variants) {
    const { version, digest } = parseVariant(v);
    const inventory = inventories.get(digest);
    const hours = hoursOf.get(v) ?? 0;
    const processes = processesOf.get(v) ?? 0;
    const tracked = tracks(v);
    const detail = byVersion.get(version) ?? { firstSeen: Infinity, lastSeen: 0, hours: 0, live: 0, beans: new Set() };
    byVersion.set(version, detail);
    detail.firstSeen = Math.min(detail.firstSeen, firstSeenOf(v));
    detail.lastSeen = Math.max(detail.lastSeen, Number(variantLast.get(v) ?? firstSeenOf(v)));
    if (tracked) detail.hours += hours;
    detail.live += liveOf.get(v) ?? 0;
    if (!inventory) continue;
    views.push({ version, inventory, firstSeen: firstSeenOf(v), hours, processes, current: current(v) });
    for (const bean of inventory.beans) {
      detail.beans.add(bean.name);
      let acc = beans.get(bean.name);
      if (!acc) {
        acc = {
          bean,
          firstSeen: firstSeenOf(v),
          hours: 0,
          untrackedHours: 0,
          processes: 0,
          trackedProcesses: 0,
          versions: new Set(),
          live: false,
          trackedSomewhere: false,
        };
        beans.set(bean.name, acc);
      }
      acc.firstSeen = Math.min(acc.firstSeen, firstSeenOf(v));
      acc.live ||= current(v);
      acc.versions.add(version);
      acc.processes += processes;
      if (!inventory.tracking) {
        acc.untrackedHours += hours;
        continue;
      }
      // A variant whose processes could not watch it: a call there would have gone unseen, so no verdict.
      if (bean.tracked === true) {
        acc.trackedSomewhere = true;
        acc.hours += hours;
        acc.trackedProcesses += processes;
      } else acc.untrackable ??= bean.tracked;
    }
  }
  const versionDetails: LedgerVersion[] = [...byVersion]
    .sort((a, b) => b[1].firstSeen - a[1].firstSeen)
    .map(([version, d]) => ({
      version,
      firstSeen: new Date(d.firstSeen).toISOString(),
      lastSeen: new Date(d.lastSeen).toISOString(),
      processHours: Math.round(d.hours * 1000) / 1000,
      liveProcesses: d.live,
      beans: d.beans.size,
    }));

  // Methods and endpoints, when some inventory lists them (method depth, issue #43).
  const withMembers = views.some(
    (v) => v.inventory.endpoints !== undefined || v.inventory.beans.some((b) => b.methods),
  );
  const merged = withMembers
    ? mergeMembers(
        views,
        (bean, member) => {
          const id = memberId(bean, member);
          return members.get(`${id.bucket}/${id.field}`);
        },
        judgedAt,
      )
    : undefined;

  const evidence: LedgerEvidence[] = [...beans.values()].map((acc) => {
    const b = acc.bean;
    const methods = merged?.methodsOf(b.name);
    const touch = touches.get(b.name);
    const touchedIn = touch?.versions.map((i) => versionOfIndex.get(i) ?? `#${i}`);
    const untrackable =
      acc.untrackable ?? (acc.trackedSomewhere ? undefined : b.tracked === true ? undefined : b.tracked);
    const lastVersion = touch !== undefined ? (versionOfIndex.get(touch.version) ?? `#${touch.version}`) : undefined;
    return {
      name: b.name,
      ...(b.module !== undefined ? { module: b.module } : {}),
      ...(b.source !== undefined ? { source: b.source } : {}),
      ...(b.line !== undefined ? { line: b.line } : {}),
      ...(b.className !== undefined ? { className: b.className } : {}),
      ...(b.registered ? { registered: true as const } : {}),
      ...(b.classFileUnknown ? { classFileUnknown: true as const } : {}),
      ghostCandidate: b.ghostCandidate,
      ...(b.neededOnlyBy !== undefined ? { neededOnlyBy: b.neededOnlyBy } : {}),
      ...(b.reachedOnlyThrough !== undefined ? { reachedOnlyThrough: b.reachedOnlyThrough } : {}),
      tracked: acc.trackedSomewhere && acc.untrackable === undefined,
      ...(untrackable !== undefined ? { untrackableReason: untrackable } : {}),
      ...(touch !== undefined ? { lastTouched: touch.lastTouched, lastTouchedVersion: lastVersion } : {}),
      firstSeen: acc.firstSeen,
      processHours: acc.hours,
      ...(acc.untrackedHours > 0 ? { untrackedProcessHours: acc.untrackedHours } : {}),
      ...(acc.processes > 0 ? { processes: { total: acc.processes, tracked: acc.trackedProcesses } } : {}),
      versions: [...acc.versions].sort(),
      live: acc.live,
      ...(touchedIn !== undefined ? { touchedIn } : {}),
      ...(touch !== undefined
        ? { lastTouchedBy: { processStartedAt: touch.processStartedAt, version: lastVersion! } }
        : {}),
      ...(methods !== undefined ? { methods: methods.calls, methodFacts: methods.facts } : {}),
      // Judged on the processes that served its endpoints, where some did not (mergeMembers).
      ...beanServedFacts(merged?.beanFacts(b.name)),
    };
  });

  const lastWrite = meta.get('lastWrite');
  const resetAt = meta.get('resetAt');
  const lastWriteAgoMs = lastWrite !== undefined ? Math.max(0, now - Number(lastWrite)) : null;
  const sum = (tracked: boolean) =>
    Math.round([...hoursOf].reduce((a, [v, h]) => a + (tracks(v) === tracked ? h : 0), 0) * 1000) / 1000;
  const trackedProcesses = [...processesOf].reduce((a, [v, n]) => a + (tracks(v) ? n : 0), 0);
  const answer = ledgerAnswer(
    options.service,
    evidence,
    thresholds,
    {
      source: 'redis',
      ledger: options.address,
      since: since !== undefined ? new Date(since).toISOString() : null,
      processes: beats.size + Number(meta.get('foldedProcesses') ?? 0),
      liveProcesses,
      processHours: sum(true),
      trackedProcesses,
      untrackedProcessHours: sum(false),
      versions: byVersion.size,
      ...(lostTouches > 0 ? { lostTouches } : {}),
      lastWriteAgoMs,
      reset: resetAt !== undefined,
      ...(resetAt !== undefined ? { resetAt: new Date(Number(resetAt)).toISOString() } : {}),
      silent: lastWriteAgoMs === null || lastWriteAgoMs > 3 * (heartbeatMs ?? 60_000) || liveProcesses === 0,
      ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
      versionDetails,
    },
    judgedAt,
    merged !== undefined
      ? {
          ...(merged.endpoints !== undefined ? { endpoints: merged.endpoints } : {}),
          lookups: merged.lookups,
          endpointFacts: merged.endpointFacts,
        }
      : {},
  );
  return { ...answer, generatedAt: new Date(now).toISOString() };
}

/** The evidence fields a bean's served-variants facts replace (its liveness stays the reader's). */
function beanServedFacts(f: MemberFacts | undefined): Partial<LedgerEvidence> {
  if (f === undefined) return {};
  return {
    firstSeen: f.firstSeen,
    processHours: f.processHours,
    untrackedProcessHours: f.untrackedProcessHours ?? 0,
    ...(f.processes !== undefined ? { processes: f.processes } : {}),
    ...(f.versions !== undefined ? { versions: f.versions } : {}),
    countedWhere: 'served',
  };
}
