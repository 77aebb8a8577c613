import type { RedisPipelineClient } from '../../shared/redis';
import { decodeInventory } from './inventory';
import { memberId, parseVariant, variantOf, type LedgerKeys, type ProcessRecord } from './keys';

export interface PruneOptions {
  readonly now: number;
  /** A version no live process has run for this long goes, with the beans only it had. */
  readonly retentionMs: number;
  readonly heartbeatMs: number;
  /** Who holds the lock (a process id). */
  readonly owner: string;
}

/** A process gone (ended, or silent) for this long has its hours folded into its version's and its record dropped. */
export const FOLD_AFTER_MS = 3_600_000;

/*
 * Folds one process into its variant, atomically: the record is read where it is changed, so hours a paused
 * process wrote a moment before are folded with it, and a second pruner finds nothing left to fold. Untracked
 * processes are folded too (their hours and count are what the tracked share is told by).
 * KEYS: variantHours, proc, procs, meta, variantProcesses; ARGV: the process id.
 */
const FOLD_SCRIPT = `local rec = redis.call('HGET', KEYS[2], ARGV[1])
if rec then
  local ok, r = pcall(cjson.decode, rec)
  if ok and type(r) == 'table' and type(r.v) == 'string' then
    local variant = r.v .. '|' .. (type(r.i) == 'string' and r.i or '')
    if type(r.h) == 'number' and r.h > 0 then redis.call('HINCRBYFLOAT', KEYS[1], variant, r.h) end
    redis.call('HINCRBY', KEYS[5], variant, 1)
  end
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HINCRBY', KEYS[4], 'foldedProcesses', 1)
end
redis.call('ZREM', KEYS[3], ARGV[1])
return rec and 1 or 0`;

type Results = [Error | null, unknown][] | null;

async function exec(client: RedisPipelineClient, commands: (string | number)[][]): Promise<unknown[]> {
  const results: Results = await client.pipeline(commands).exec();
  if (!results) throw new Error('no answer');
  const failed = results.find(([e]) => e);
  if (failed) throw failed[0]!;
  return results.map(([, v]) => v);
}

export function pairs(flat: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (Array.isArray(flat)) {
    for (let i = 0; i + 1 < flat.length; i += 2) out.set(String(flat[i]), String(flat[i + 1]));
  } else if (flat && typeof flat === 'object') {
    for (const [k, v] of Object.entries(flat)) out.set(k, String(v));
  }
  return out;
}

/** Whether a process counts as live: not ended, and a heartbeat within three of its own intervals. */
export function isLive(record: ProcessRecord, beat: number, now: number, defaultHeartbeatMs: number): boolean {
  return record.e === undefined && beat >= now - 3 * (record.hb ?? defaultHeartbeatMs);
}

export function parseRecord(text: string | undefined): ProcessRecord | undefined {
  if (text === undefined) return undefined;
  try {
    const r = JSON.parse(text) as ProcessRecord;
    return typeof r.v === 'string' && typeof r.h === 'number' ? r : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Keeps a service's ledger small as processes and versions come and go; one process at a time (a lock that
 * expires by itself). Every step is idempotent or atomic, so a pruner that dies half-way leaves a ledger the next
 * one finishes:
 * - a process ended or silent for an hour: its hours are added to its version's and its record dropped, in one
 *   script (its hours counted once, never twice, never lost);
 * - a variant (a version and a bean set) no live process has run for the retention period: its fields, the inventories
 *   nothing refers to any more, and the touches of beans and the records of methods no remaining version has.
 * - touch records missing though counted (evicted): the evidence starts over from now, marked reset.
 * @returns what was pruned, and how many touch records were found lost.
 */
export async function pruneLedger(
  client: RedisPipelineClient,
  k: LedgerKeys,
  options: PruneOptions,
): Promise<{ processes: number; versions: number; beans: number; members?: number; lostTouches?: number }> {
  const { now } = options;
  const [locked] = await exec(client, [['set', k.pruneLock, options.owner, 'NX', 'PX', 60_000]]);
  if (locked !== 'OK') return { processes: 0, versions: 0, beans: 0 };
  try {
    const [procs, proc, vlast] = await exec(client, [
      ['zrange', k.procs, 0, -1, 'WITHSCORES'],
      ['hgetall', k.proc],
      ['hgetall', k.variantLastSeen],
    ]);
    const beats = new Map([...pairs(procs)].map(([id, at]) => [id, Number(at)]));
    const records = pairs(proc);
    const liveVariants = new Set<string>();
    // The longest retention a live process asks for: one canary set to minutes must not wipe everyone's history.
    let retentionMs = options.retentionMs;
    let folded = 0;
    for (const [id, text] of records) {
      const record = parseRecord(text);
      const beat = beats.get(id) ?? 0;
      if (record && isLive(record, beat, now, options.heartbeatMs)) {
        liveVariants.add(variantOf(record.v, record.i ?? ''));
        if (record.rd !== undefined) retentionMs = Math.max(retentionMs, record.rd * 86_400_000);
      }
      const goneSince = record?.e ?? beat;
      if (goneSince >= now - FOLD_AFTER_MS && record) continue;
      await exec(client, [['eval', FOLD_SCRIPT, 5, k.variantHours, k.proc, k.procs, k.meta, k.variantProcesses, id]]);
      folded++;
    }
    // Heartbeats without a record (a record folded while its process still had a round in flight).
    for (const [id, beat] of beats)
      if (!records.has(id) && beat < now - FOLD_AFTER_MS) await exec(client, [['zrem', k.procs, id]]);

    // Touch records lost (evicted under memory pressure, deleted by hand) would read as beans never called: the
    // ledger starts its evidence over, as after a reset, and every process writes its touches again.
    // Member records are told lost by their buckets (Redis evicts whole keys): one EXISTS over the 512 against the
    // count the touch script keeps, so that the hourly prune costs what it cost before methods (bench/ledger); their
    // fields are counted only then.
    const [counted, bucketsMade, bucketsThere, ...lengths] = await exec(client, [
      ['hget', k.meta, 'touchedBeans'],
      ['hget', k.meta, 'memberBuckets'],
      ['exists', ...k.memberBuckets],
      ...k.touchBuckets.map((bucket) => ['hlen', bucket]),
    ]);
    const present = (lengths as number[]).reduce((a, b) => a + Number(b), 0);
    let lostTouches = Math.max(0, Number(counted ?? 0) - present);
    if (lostTouches > 0 || Number(bucketsMade ?? 0) > Number(bucketsThere)) {
      const [countedMembers, ...memberLengths] = await exec(client, [
        ['hget', k.meta, 'touchedMembers'],
        ...k.memberBuckets.map((bucket) => ['hlen', bucket]),
      ]);
      const presentMembers = (memberLengths as number[]).reduce((a, b) => a + Number(b), 0);
      lostTouches += Math.max(0, Number(countedMembers ?? 0) - presentMembers);
      await exec(client, [
        ['hset', k.meta, 'since', now, 'resetAt', now, 'touchedBeans', present],
        ['hset', k.meta, 'touchedMembers', presentMembers, 'memberBuckets', Number(bucketsThere)],
      ]);
    }

    const lastSeen = pairs(vlast);
    const variants = new Set(lastSeen.keys());
    const expired = [...variants].filter(
      (v) => !liveVariants.has(v) && Number(lastSeen.get(v) ?? 0) < now - retentionMs,
    );
    if (expired.length === 0) return { processes: folded, versions: 0, beans: 0, lostTouches };
    const commands: (string | number)[][] = [];
    for (const v of expired) {
      commands.push(
        ['hdel', k.variantFirstSeen, v],
        ['hdel', k.variantLastSeen, v],
        ['hdel', k.variantHours, v],
        ['hdel', k.variantProcesses, v],
      );
      variants.delete(v);
    }
    await exec(client, commands);
    const kept = new Set([...variants].map((v) => parseVariant(v).digest));
    const [stored] = await exec(client, [['smembers', k.inventories]]);
    const orphans = (stored as string[]).filter((d) => !kept.has(d));
    if (orphans.length > 0) {
      await exec(client, [
        ['del', ...orphans.map((d) => k.inventory(d))],
        ['srem', k.inventories, ...orphans],
      ]);
    }
    // The touches of beans and members no remaining version has: deleted or renamed code, retired and now past
    // retention. A member's record goes with the last inventory listing it (a bean kept only by variants that did
    // not tell its methods apart keeps no method record: none of them could have added to it).
    const beans = new Set<string>();
    const members = new Set<string>();
    for (const digest of kept) {
      const [bytes] = await exec(client, [['getBuffer', k.inventory(digest)]]);
      if (!bytes) continue;
      for (const b of decodeInventory(bytes as Buffer).beans) {
        beans.add(b.name);
        for (const m of b.methods ?? []) {
          const id = memberId(b.name, m.name);
          members.add(`${id.bucket}/${id.field}`);
        }
      }
    }
    const buckets = await exec(
      client,
      k.touchBuckets.map((bucket) => ['hkeys', bucket]),
    );
    let gone = 0;
    const deletes: (string | number)[][] = [];
    buckets.forEach((names, i) => {
      const dead = (names as string[]).filter((name) => !beans.has(name));
      gone += dead.length;
      if (dead.length > 0) deletes.push(['hdel', k.touchBuckets[i]!, ...dead]);
    });
    if (deletes.length > 0) await exec(client, [...deletes, ['hincrby', k.meta, 'touchedBeans', -gone]]);
    const memberFields = await exec(
      client,
      k.memberBuckets.map((bucket) => ['hkeys', bucket]),
    );
    let goneMembers = 0;
    const memberDeletes: (string | number)[][] = [];
    memberFields.forEach((fields, i) => {
      const dead = (fields as string[]).filter((field) => !members.has(`${i}/${field}`));
      goneMembers += dead.length;
      if (dead.length > 0) memberDeletes.push(['hdel', k.memberBuckets[i]!, ...dead]);
    });
    if (memberDeletes.length > 0) {
      // A bucket emptied is deleted by Redis: the count of buckets made follows, or it would read as one lost.
      const results = await exec(client, [
        ...memberDeletes,
        ['hincrby', k.meta, 'touchedMembers', -goneMembers],
        ['exists', ...k.memberBuckets],
      ]);
      await exec(client, [['hset', k.meta, 'memberBuckets', Number(results[results.length - 1])]]);
    }
    return { processes: folded, versions: expired.length, beans: gone, members: goneMembers, lostTouches };
  } finally {
    await exec(client, [['del', k.pruneLock]]).catch(() => undefined);
  }
}
