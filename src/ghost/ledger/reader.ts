import { DiagError } from '../../shared/errors';
import type { RedisPipelineClient } from '../../shared/redis';
import type { EvidenceThresholds } from '../verdicts';
import { ledgerAnswer, type LedgerAnswer, type LedgerEvidence, type LedgerVersion } from './answer';
import { decodeInventory, type Inventory, type InventoryBean } from './inventory';
import { ledgerKeys, parseTouchRecord, parseVariant, variantOf, type TouchRecord } from './keys';
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
  readonly thresholds: EvidenceThresholds;
  /** The server as the answer and errors name it. */
  readonly address: string;
  readonly redact?: (text: string) => string;
  /** Wall clock (ms). Default `Date.now()`. */
  readonly now?: number;
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
  const message = (options.redact ?? ((t: string) => t))(err instanceof Error ? err.message : String(err));
  return new LedgerReadError(
    `could not read the ghost ledger of ${options.service} at ${options.address}: ${message}`,
    {
      cause: err,
    },
  );
}

/**
 * Reads one service's ledger (two pipelines; only reads, so a read-only Redis user suffices) and judges every
 * bean it holds. A bean's evidence spans the versions that had it: it first appeared when the oldest of them
 * did; its process-hours are those of the versions in which Phase 2 tracked it; it is live while a live process
 * runs a version that has it, `retired` once none does.
 * @throws LedgerReadError when Redis does not answer or refuses.
 */
export async function readLedger(options: ReadLedgerOptions): Promise<LedgerAnswer> {
  const k = ledgerKeys(options.service);
  const now = options.now ?? Date.now();
  const [metaRaw, procsRaw, procRaw, vfirstRaw, vlastRaw, vhoursRaw, vidxRaw, ...bucketsRaw] = await exec(options, [
    ['hgetall', k.meta],
    ['zrange', k.procs, 0, -1, 'WITHSCORES'],
    ['hgetall', k.proc],
    ['hgetall', k.variantFirstSeen],
    ['hgetall', k.variantLastSeen],
    ['hgetall', k.variantHours],
    ['hgetall', k.versionIndex],
    ...k.touchBuckets.map((bucket) => ['hgetall', bucket]),
  ]);
  const meta = pairs(metaRaw);
  const heartbeatMs = meta.has('heartbeatMs') ? Number(meta.get('heartbeatMs')) : undefined;
  const since = meta.has('since') ? Number(meta.get('since')) : undefined;
  const beats = new Map([...pairs(procsRaw)].map(([id, at]) => [id, Number(at)]));
  const variantFirst = pairs(vfirstRaw);
  const variantLast = pairs(vlastRaw);
  const hoursOf = new Map([...pairs(vhoursRaw)].map(([v, h]) => [v, Number(h)]));
  const liveOf = new Map<string, number>();
  let liveProcesses = 0;
  for (const [id, text] of pairs(procRaw)) {
    const r = parseRecord(text);
    if (!r) continue;
    const variant = variantOf(r.v, r.i ?? '');
    if (r.t) hoursOf.set(variant, (hoursOf.get(variant) ?? 0) + r.h);
    if (isLive(r, beats.get(id) ?? 0, now, heartbeatMs ?? 60_000)) {
      liveProcesses++;
      liveOf.set(variant, (liveOf.get(variant) ?? 0) + 1);
    }
  }

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
  const lostTouches = Math.max(0, Number(meta.get('touchedBeans') ?? 0) - touches.size);

  // Newest variant first: a bean's module, file and Phase 1 state are those of the newest variant that has it. No
  // evidence is older than the ledger's `since` (a reset starts it over).
  const firstSeenOf = (v: string) => Math.max(Number(variantFirst.get(v) ?? now), since ?? 0);
  variants.sort((a, b) => firstSeenOf(b) - firstSeenOf(a));
  interface Acc {
    bean: InventoryBean;
    firstSeen: number;
    hours: number;
    live: boolean;
    trackedSomewhere: boolean;
    untrackable?: string;
  }
  const beans = new Map<string, Acc>();
  const byVersion = new Map<
    string,
    { firstSeen: number; lastSeen: number; hours: number; live: number; beans: Set<string> }
  >();
  for (const v of variants) {
    const { version, digest } = parseVariant(v);
    const inventory = inventories.get(digest);
    const live = (liveOf.get(v) ?? 0) > 0;
    const hours = hoursOf.get(v) ?? 0;
    const detail = byVersion.get(version) ?? { firstSeen: Infinity, lastSeen: 0, hours: 0, live: 0, beans: new Set() };
    byVersion.set(version, detail);
    detail.firstSeen = Math.min(detail.firstSeen, firstSeenOf(v));
    detail.lastSeen = Math.max(detail.lastSeen, Number(variantLast.get(v) ?? firstSeenOf(v)));
    detail.hours += hours;
    detail.live += liveOf.get(v) ?? 0;
    if (!inventory) continue;
    for (const bean of inventory.beans) {
      detail.beans.add(bean.name);
      let acc = beans.get(bean.name);
      if (!acc) {
        acc = { bean, firstSeen: firstSeenOf(v), hours: 0, live: false, trackedSomewhere: false };
        beans.set(bean.name, acc);
      }
      acc.firstSeen = Math.min(acc.firstSeen, firstSeenOf(v));
      acc.live ||= live;
      if (!inventory.tracking) continue;
      // A variant whose processes could not watch it: a call there would have gone unseen, so no verdict.
      if (bean.tracked === true) {
        acc.trackedSomewhere = true;
        acc.hours += hours;
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

  const evidence: LedgerEvidence[] = [...beans.values()].map((acc) => {
    const b = acc.bean;
    const touch = touches.get(b.name);
    const touchedIn = touch?.versions.map((i) => versionOfIndex.get(i) ?? `#${i}`);
    const untrackable =
      acc.untrackable ?? (acc.trackedSomewhere ? undefined : b.tracked === true ? undefined : b.tracked);
    return {
      name: b.name,
      ...(b.module !== undefined ? { module: b.module } : {}),
      ...(b.source !== undefined ? { source: b.source } : {}),
      ...(b.className !== undefined ? { className: b.className } : {}),
      ghostCandidate: b.ghostCandidate,
      tracked: acc.trackedSomewhere && acc.untrackable === undefined,
      ...(untrackable !== undefined ? { untrackableReason: untrackable } : {}),
      ...(touch !== undefined ? { lastTouched: touch.lastTouched } : {}),
      firstSeen: acc.firstSeen,
      processHours: acc.hours,
      live: acc.live,
      ...(touchedIn !== undefined ? { touchedIn } : {}),
      ...(touch !== undefined
        ? {
            lastTouchedBy: {
              processStartedAt: touch.processStartedAt,
              version: versionOfIndex.get(touch.version) ?? `#${touch.version}`,
            },
          }
        : {}),
    };
  });

  const lastWrite = meta.get('lastWrite');
  const resetAt = meta.get('resetAt');
  const lastWriteAgoMs = lastWrite !== undefined ? Math.max(0, now - Number(lastWrite)) : null;
  return ledgerAnswer(
    options.service,
    evidence,
    options.thresholds,
    {
      source: 'redis',
      ledger: options.address,
      since: since !== undefined ? new Date(since).toISOString() : null,
      processes: beats.size + Number(meta.get('foldedProcesses') ?? 0),
      liveProcesses,
      processHours: Math.round([...hoursOf.values()].reduce((a, b) => a + b, 0) * 1000) / 1000,
      versions: byVersion.size,
      ...(lostTouches > 0 ? { lostTouches } : {}),
      lastWriteAgoMs,
      reset: resetAt !== undefined,
      ...(resetAt !== undefined ? { resetAt: new Date(Number(resetAt)).toISOString() } : {}),
      silent: lastWriteAgoMs === null || lastWriteAgoMs > 3 * (heartbeatMs ?? 60_000) || liveProcesses === 0,
      ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
      versionDetails,
    },
    now,
  );
}
