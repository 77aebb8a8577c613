import { createHash } from 'node:crypto';

/**
 * The ledger's Redis keys, in one place. Every key of a service shares the hash tag `{service}`, so the whole
 * ledger of a service lives in one Redis Cluster slot: a round is one pipeline to one node, and the pruner's
 * fold script is allowed. The service is percent-encoded inside the tag, so a name holding a brace cannot move it.
 */
export const LEDGER_KEY_PREFIX = 'diag:ledger:';

export interface LedgerKeys {
  /**
   * HASH: `epoch` (random, first writer), `since`, `lastWrite`, `heartbeatMs`, `resetAt`, `foldedProcesses`,
   * `versions` (the last version index given), `thresholds` (the last writer's, JSON {@link StatedThresholds}:
   * what a reader judges by once no process record states any), `touchedBeans` and `touchedMembers` (how many
   * records the touch script made: fewer present means some were lost), `memberBuckets` (the member buckets it made).
   */
  readonly meta: string;
  /** ZSET: process id → its last heartbeat (ms). */
  readonly procs: string;
  /** HASH: process id → JSON {@link ProcessRecord}: version, start, tracking, its cumulative hours. */
  readonly proc: string;
  /** HASH: variant (see {@link variantOf}) → when a process running it first started (ms). */
  readonly variantFirstSeen: string;
  /** HASH: variant → the last heartbeat of a process running it (ms). */
  readonly variantLastSeen: string;
  /**
   * HASH: variant → process-hours of its folded processes (the records of the others carry their own), tracked or
   * not: whether a variant tracked is its inventory's.
   */
  readonly variantHours: string;
  /** HASH: variant → how many of its processes were folded (the live and recent ones have their records). */
  readonly variantProcesses: string;
  /** SET: the digests of the inventories stored. */
  readonly inventories: string;
  /** HASH: version → its small index (the touch records name versions by index, to stay short). */
  readonly versionIndex: string;
  /**
   * The touch records, in {@link TOUCH_BUCKETS} small HASHes by a hash of the bean's name: bean →
   * `lastTouched|processStartedAt|versionIndex|versionIndexes`. Small hashes keep Redis's compact encoding
   * (listpack: under 128 fields of under 64 bytes), which takes a third of a large hash's memory (bench/ledger).
   */
  touchBucket(bean: string): string;
  /** Every touch bucket's key, for the reader and the pruner. */
  readonly touchBuckets: readonly string[];
  /**
   * Where a member's last use is kept (a method of a bean; an endpoint's is its handler method's): one of
   * {@link MEMBER_BUCKETS} small HASHes, under a short digest of `<bean>#<member>` ({@link memberId}).
   */
  memberRecord(bean: string, member: string): { readonly bucket: string; readonly field: string };
  /** Every member bucket's key, for the reader and the pruner. */
  readonly memberBuckets: readonly string[];
  /** The lock one process takes to prune (SET NX PX). */
  readonly pruneLock: string;
  /** STRING: one inventory, deflated JSON, by digest. */
  inventory(digest: string): string;
}

/** How many touch buckets a service has: 3,000 beans make ~47 fields each, well inside the compact encoding. */
export const TOUCH_BUCKETS = 64;

/**
 * How many member buckets a service has. A member's record is its field (8 bytes) and its last use in seconds (an
 * integer, which Redis's compact encoding stores in 4 bytes): ~16 bytes where a bean's record takes ~60. 30,000
 * methods (3,000 beans × 10) make ~59 fields per bucket, the fullest ~90 (a Poisson tail), inside the 128 fields
 * of the compact encoding; 64 buckets would hold ~470 each, every one in the large encoding at three times the
 * memory. Past ~45,000 methods a few buckets go over and take the large encoding, the rest stay compact.
 */
export const MEMBER_BUCKETS = 512;

/**
 * A member's field and bucket: a digest of `<bean>#<member>` (SHA-256, so that every process and the reader agree
 * on any Node), its first two bytes the bucket, the next six the field (8 characters of base64url). Two members
 * share a record only if 57 bits collide: at 30,000 members, about one service in ten million.
 */
export function memberId(bean: string, member: string): { readonly bucket: number; readonly field: string } {
  const digest = createHash('sha256').update(`${bean}#${member}`).digest();
  return { bucket: digest.readUInt16BE(0) % MEMBER_BUCKETS, field: digest.subarray(2, 8).toString('base64url') };
}

/** FNV-1a of a bean's name: the same bucket in every process. */
function bucketOf(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % TOUCH_BUCKETS;
}

export function ledgerKeys(service: string): LedgerKeys {
  const base = `${LEDGER_KEY_PREFIX}{${encodeURIComponent(service)}}:`;
  return {
    meta: `${base}meta`,
    procs: `${base}procs`,
    proc: `${base}proc`,
    variantFirstSeen: `${base}vfirst`,
    variantLastSeen: `${base}vlast`,
    variantHours: `${base}vhours`,
    variantProcesses: `${base}vprocs`,
    inventories: `${base}invs`,
    versionIndex: `${base}vidx`,
    touchBucket: (bean) => `${base}touched:${bucketOf(bean)}`,
    touchBuckets: Array.from({ length: TOUCH_BUCKETS }, (_, i) => `${base}touched:${i}`),
    memberRecord: (bean, member) => {
      const id = memberId(bean, member);
      return { bucket: `${base}members:${id.bucket}`, field: id.field };
    },
    memberBuckets: Array.from({ length: MEMBER_BUCKETS }, (_, i) => `${base}members:${i}`),
    pruneLock: `${base}prunelock`,
    inventory: (digest) => `${base}inv:${digest}`,
  };
}

/** A bean's touch record, as the touch script writes it and the reader parses it. */
export interface TouchRecord {
  /** The latest first touch of the bean, in any process (ms). */
  readonly lastTouched: number;
  /** When the process that made it started (ms). */
  readonly processStartedAt: number;
  /** The version index that process ran. */
  readonly version: string;
  /** The version indexes in which the bean was touched (the latest eight). */
  readonly versions: readonly string[];
}

export function parseTouchRecord(text: string): TouchRecord | undefined {
  const [last, started, version, versions] = text.split('|');
  if (versions === undefined) return undefined;
  return {
    lastTouched: Number(last),
    processStartedAt: Number(started),
    version: version!,
    versions: versions === '' ? [] : versions.split(','),
  };
}

/*
 * One round's uses, atomically (KEYS: meta, versionIndex, one touch bucket per bean touch, then one member bucket
 * per member touch; ARGV: the version, the process's start, the number of bean touches, then name and time (ms)
 * per bean touch, then field and time (s) per member touch). It gives the version its index on first use, keeps
 * each bean's latest touch (and who made it), and adds the version to the bean's list (the latest eight); it keeps
 * each member's latest use: a round sent twice changes nothing the second time. `meta.touchedBeans` and
 * `meta.touchedMembers` count the records, so that a reader can tell a record lost (evicted, deleted) from code
 * never called, and `meta.memberBuckets` the member buckets made, so that the pruner tells one lost (Redis evicts
 * whole keys) with one EXISTS rather than an HLEN of each of the 512. One script for both, so that a round with method uses costs the command it cost before.
 */
export const TOUCH_SCRIPT = `local idx = redis.call('HGET', KEYS[2], ARGV[1])
if not idx then
  idx = tostring(redis.call('HINCRBY', KEYS[1], 'versions', 1))
  redis.call('HSET', KEYS[2], ARGV[1], idx)
end
local beans = tonumber(ARGV[3])
for i = 3, beans + 2 do
  local name = ARGV[(i - 3) * 2 + 4]
  local at = tonumber(ARGV[(i - 3) * 2 + 5])
  local cur = redis.call('HGET', KEYS[i], name)
  local last, by, byv, vers = at, ARGV[2], idx, idx
  if not cur then redis.call('HINCRBY', KEYS[1], 'touchedBeans', 1) end
  if cur then
    local l, b, bv, v = string.match(cur, '^(%d+)|(%d+)|(%d*)|(.*)$')
    if l then
      if tonumber(l) >= at then last, by, byv = tonumber(l), b, bv end
      local list, has = {}, false
      for x in string.gmatch(v, '[^,]+') do
        table.insert(list, x)
        if x == idx then has = true end
      end
      if not has then table.insert(list, idx) end
      while #list > 8 do table.remove(list, 1) end
      vers = table.concat(list, ',')
    end
  end
  redis.call('HSET', KEYS[i], name, string.format('%d', last) .. '|' .. by .. '|' .. byv .. '|' .. vers)
end
for i = beans + 3, #KEYS do
  local field = ARGV[(i - 3) * 2 + 4]
  local at = tonumber(ARGV[(i - 3) * 2 + 5])
  local raw = redis.call('HGET', KEYS[i], field)
  local cur = tonumber(raw)
  if not raw then
    redis.call('HINCRBY', KEYS[1], 'touchedMembers', 1)
    if redis.call('EXISTS', KEYS[i]) == 0 then redis.call('HINCRBY', KEYS[1], 'memberBuckets', 1) end
  end
  if not cur or cur < at then redis.call('HSET', KEYS[i], field, string.format('%d', at)) end
end
return idx`;

/**
 * A variant is what one process ran: a code version and the inventory it had (its digest). Replicas of one version
 * may hold different beans (a worker beside the servers, a cron leader, a feature flag), so the ledger keeps every
 * bean set a version showed, each with its own first-seen time and hours, and a bean is judged on the variants
 * that had it.
 */
export function variantOf(version: string, digest: string): string {
  return `${version}|${digest}`;
}

/** The version and the inventory digest of a variant (the digest is hex: the last `|` splits them). */
export function parseVariant(variant: string): { version: string; digest: string } {
  const at = variant.lastIndexOf('|');
  return at < 0 ? { version: variant, digest: '' } : { version: variant.slice(0, at), digest: variant.slice(at + 1) };
}

/** What each process keeps under `proc`, rewritten at each heartbeat (idempotent: a retried round counts once). */
export interface ProcessRecord {
  /** The code version it runs. */
  readonly v: string;
  /** The digest of its inventory: with `v`, its variant. */
  readonly i?: string;
  /** Its heartbeat interval (ms): it counts as gone after three of them without one. */
  readonly hb?: number;
  /** Its retention (days): the pruner keeps what the longest of the live processes asks. */
  readonly rd?: number;
  /** When it started (ms since the epoch). */
  readonly s: number;
  /** Whether Phase 2 is on: only then do its hours count as observation (and its calls as seen). */
  readonly t: boolean;
  /**
   * Its process-hours so far, since it started or since the ledger was reset: observation when `t`, else the
   * time it served unseen (what the tracked share is told by).
   */
  readonly h: number;
  /** The thresholds its settings judge the service by: a reader judges by the strictest of the live ones. */
  readonly th?: StatedThresholds;
  /** Host name and pid, for a person reading the ledger. */
  readonly host: string;
  readonly pid: number;
  /** Set by its last round when it ended cleanly: no longer live, whatever its heartbeat says. */
  readonly e?: number;
}

/** The thresholds a process states in the ledger, short (they ride on every heartbeat). */
export interface StatedThresholds {
  /** `min-days`. */
  readonly d: number;
  /** `min-process-hours`. */
  readonly ph: number;
  /** `min-tracked-share`. */
  readonly ts: number;
  /** `last-use-resolution-ms`. */
  readonly r: number;
}
