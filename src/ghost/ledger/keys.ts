/**
 * The ledger's Redis keys, in one place. Every key of a service shares the hash tag `{service}`, so the whole
 * ledger of a service lives in one Redis Cluster slot: a round is one pipeline to one node, and the pruner's
 * fold script is allowed. The service is percent-encoded inside the tag, so a name holding a brace cannot move it.
 */
export const LEDGER_KEY_PREFIX = 'diag:ledger:';

export interface LedgerKeys {
  /** HASH: `epoch` (random, first writer), `since`, `lastWrite`, `heartbeatMs`, `resetAt`, `foldedProcesses`. */
  readonly meta: string;
  /** ZSET: process id → its last heartbeat (ms). */
  readonly procs: string;
  /** HASH: process id → JSON {@link ProcessRecord}: version, start, tracking, its cumulative hours. */
  readonly proc: string;
  /** HASH: version → digest of its inventory. */
  readonly versionInventory: string;
  /** HASH: version → when a process first ran it (ms). */
  readonly versionFirstSeen: string;
  /** HASH: version → the last heartbeat of a process running it (ms). */
  readonly versionLastSeen: string;
  /** HASH: version → process-hours of pruned processes, folded in (the live ones carry their own). */
  readonly versionHours: string;
  /** SET: the digests of the inventories stored. */
  readonly inventories: string;
  /** ZSET: bean → the latest first touch of it in any process (ms). */
  readonly touched: string;
  /** HASH: bean → `processStartedAt|version` of the process that made that touch. */
  readonly touchedBy: string;
  /** The lock one process takes to prune (SET NX PX). */
  readonly pruneLock: string;
  /** STRING: one inventory, deflated JSON, by digest. */
  inventory(digest: string): string;
  /** SET: beans touched in one version. */
  touchedIn(version: string): string;
}

export function ledgerKeys(service: string): LedgerKeys {
  const base = `${LEDGER_KEY_PREFIX}{${encodeURIComponent(service)}}:`;
  return {
    meta: `${base}meta`,
    procs: `${base}procs`,
    proc: `${base}proc`,
    versionInventory: `${base}vinv`,
    versionFirstSeen: `${base}vfirst`,
    versionLastSeen: `${base}vlast`,
    versionHours: `${base}vhours`,
    inventories: `${base}invs`,
    touched: `${base}touched`,
    touchedBy: `${base}touchedby`,
    pruneLock: `${base}prunelock`,
    inventory: (digest) => `${base}inv:${digest}`,
    touchedIn: (version) => `${base}tver:${version}`,
  };
}

/** What each process keeps under `proc`, rewritten at each heartbeat (idempotent: a retried round counts once). */
export interface ProcessRecord {
  /** The code version it runs. */
  readonly v: string;
  /** When it started (ms since the epoch). */
  readonly s: number;
  /** Whether Phase 2 is on: only then do its hours count as observation. */
  readonly t: boolean;
  /** Its observed process-hours so far (Phase 2 on), since it started or since the ledger was reset. */
  readonly h: number;
  /** Host name and pid, for a person reading the ledger. */
  readonly host: string;
  readonly pid: number;
  /** Set by its last round when it ended cleanly: no longer live, whatever its heartbeat says. */
  readonly e?: number;
}
