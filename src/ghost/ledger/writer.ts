import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { safeLog } from '../../shared/logger';
import type { RedisPipelineClient } from '../../shared/redis';
import { encodeInventory, inventoryDigest, inventoryVersion, type Inventory } from './inventory';
import {
  ledgerKeys,
  TOUCH_SCRIPT,
  variantOf,
  type LedgerKeys,
  type ProcessRecord,
  type StatedThresholds,
} from './keys';
import { describeRedisFailure as describe } from './failure';
import { pruneLedger } from './prune';
import { readLedger } from './reader';
import type { LedgerAnswer } from './answer';
import { fullThresholds, type EvidenceThresholds } from '../verdicts';

/** What a {@link LedgerWriter} is told. */
export interface LedgerWriterOptions {
  readonly client: RedisPipelineClient;
  /** The server as logs name it: never with credentials. */
  readonly address: string;
  /** Removes secrets from a client's error message before it is logged. */
  readonly redact: (text: string) => string;
  readonly service: string;
  /** The resource's `service.version`; without it, a digest of the inventory. */
  readonly serviceVersion?: string;
  /** Phase 2 on: only then are touches and observed hours contributed. */
  readonly tracking: boolean;
  readonly pushIntervalMs: number;
  readonly heartbeatIntervalMs: number;
  readonly retentionDays: number;
  /**
   * The thresholds this process's settings judge the service by: stated in the ledger (its record, and the meta's
   * last word), so that every reader judges by the service's own.
   */
  readonly thresholds?: EvidenceThresholds;
  /** A round unanswered after this long is an outage (it is still applied if answered later). Default 5 s. */
  readonly timeoutMs?: number;
  /** Wall clock in ms. Default `Date.now`. */
  readonly clock?: () => number;
  /** Close the client with the writer. */
  readonly ownsClient?: boolean;
  /** The connection's last socket or AUTH error: what an outage line names rather than the client's retry limit. */
  readonly connectionError?: () => Error | undefined;
}

/** What the writer can say about itself, for metrics and the page. */
export interface LedgerWriterStatus {
  readonly service: string;
  readonly address: string;
  readonly version?: string;
  /** When a round last succeeded (ms). */
  readonly lastWriteAt?: number;
  /** Rounds that failed since the process started. */
  readonly failures: number;
  /** Uses (beans' first touches and later ones, methods' at method depth) not yet in the ledger. */
  readonly pendingTouches: number;
  /** Whether Redis is out of reach now. */
  readonly degraded: boolean;
}

const DEFAULT_TIMEOUT_MS = 5_000;
/**
 * The most uses one touch script takes: a script runs alone on Redis, and a process's first round after a warm-up
 * can hold tens of thousands of method uses (bench/ledger: 21,000 at 3,000 beans × 10 methods), which in one script
 * would hold every other client of that Redis for as long. A thousand keep each script to a few milliseconds; the
 * round stays one pipeline, and an idle round sends none.
 */
const USES_PER_SCRIPT = 1_000;
/** The pruner runs once an hour in one process of the service (a lock), and once after a process's first write. */
const PRUNE_EVERY_MS = 3_600_000;

/**
 * One process's part of the ghost ledger: at ready its inventory, then its first touches and a heartbeat, all
 * in background rounds (one pipeline each, at most one in flight), never on a call path or the boot path.
 *
 * What a round sends is idempotent, so a round that timed out and is applied later, or one sent again after a
 * failure, counts once: a touch is a script that keeps the latest time, a process's observed hours are its own
 * running total rewritten at each heartbeat (the pruner folds the totals of ended processes into their
 * version's, atomically). While Redis is away the process keeps its unsent touches and hours and sends them
 * when it answers: one WARN when the outage starts, one INFO when it ends. A process killed with SIGKILL loses
 * the touches of its last `pushIntervalMs` at most.
 *
 * A Redis restarted empty is told by the ledger's `epoch`, a random id its first writer sets: a process that
 * finds another epoch than the one it wrote to marks the ledger reset (`resetAt`) and writes everything it knows
 * again. The new ledger's `since` is the reset, so no verdict can say `never-touched` on evidence that was lost.
 */
export class LedgerWriter {
  readonly service: string;
  readonly address: string;
  private readonly keys: LedgerKeys;
  private readonly client: RedisPipelineClient;
  private readonly clock: () => number;
  private readonly timeoutMs: number;
  private readonly startedAt: number;
  /** Since when this process's evidence counts in this ledger: its start, or the reset it saw. */
  private observedFrom: number;
  private processId = LedgerWriter.newProcessId();
  /** An id of this process the pruner folded while it could not write; its record is removed next round. */
  private staleId: string | undefined;
  /** The epoch this process proposes; never the one it knows, so that an emptied ledger shows a new one. */
  private epochCandidate = randomBytes(8).toString('hex');
  private epoch: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inventory: { version: string; digest: string; bytes: Buffer } | undefined;
  private inventoryWritten = false;
  /** Every first touch of this process (kept: a reset ledger is given them again). */
  private readonly touches = new Map<string, number>();
  /** Touches not yet acknowledged by Redis. */
  private readonly pending = new Map<string, number>();
  /**
   * Method depth: every member use of this process, by bean and member (kept, as bean touches are, for a reset
   * ledger), and those not yet acknowledged. Times in seconds, as the records keep them.
   */
  private readonly memberUses = new Map<string, { bean: string; member: string; at: number }>();
  private readonly pendingMembers = new Map<string, { bean: string; member: string; at: number }>();
  /** How many uses this process has recorded ({@link uses}). */
  private useCount = 0;
  /** Observed hours: the total this process has written, and the monotonic time it last counted to. */
  private hours = 0;
  private countedTo = performance.now();
  private lastHeartbeatAt = -Infinity;
  private lastPruneAt = -Infinity;
  private inflight: { startedAt: number; timedOut: boolean } | undefined;
  private lastWriteAt: number | undefined;
  private failures = 0;
  private degraded = false;
  private firstWriteSaid = false;
  private resetAt: number | undefined;
  private ended = false;
  /** The ledger's `resetAt` as this process last read it (0: never reset). */
  private knownResetAt: number | undefined;
  private closed = false;

  private static newProcessId(): string {
    return `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  }

  constructor(private readonly options: LedgerWriterOptions) {
    this.service = options.service;
    this.address = options.address;
    this.keys = ledgerKeys(options.service);
    this.client = options.client;
    this.clock = options.clock ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.startedAt = Math.round(performance.timeOrigin);
    this.observedFrom = this.startedAt;
  }

  /** The container is ready: its inventory is written at the next round (which is soon, off the boot path). */
  inventoryReady(inventory: Inventory): void {
    if (this.closed) return;
    const bytes = encodeInventory(inventory);
    this.inventory = {
      version: this.options.serviceVersion ?? inventoryVersion(inventory),
      digest: inventoryDigest(bytes),
      bytes,
    };
    this.inventoryWritten = false;
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.options.pushIntervalMs);
      this.timer.unref();
    }
    setImmediate(() => void this.tick()).unref();
  }

  /**
   * A bean's use in this process (Phase 2): its first touch, then at most one per last-use period (the tracker
   * re-arms its wrappers once per period). A map entry, sent by the next round; the ledger keeps the latest.
   */
  touched(name: string, at: number): void {
    if ((this.touches.get(name) ?? -Infinity) >= at) return;
    this.touches.set(name, at);
    this.pending.set(name, at);
    this.useCount += 1;
  }

  /**
   * A method's use in this process (method depth): its first call, then its first after each re-arm. Kept to the
   * second, rounded up (last use is known to the last-use period, one second at the finest); sent by the next
   * round in the same script as the beans' touches. An endpoint's use is its handler method's.
   */
  memberTouched(bean: string, member: string, at: number): void {
    const key = `${bean}#${member}`;
    const seconds = Math.ceil(at / 1000);
    if ((this.memberUses.get(key)?.at ?? -Infinity) >= seconds) return;
    const use = { bean, member, at: seconds };
    this.memberUses.set(key, use);
    this.pendingMembers.set(key, use);
    this.useCount += 1;
  }

  status(): LedgerWriterStatus {
    return {
      service: this.service,
      address: this.address,
      ...(this.inventory ? { version: this.inventory.version } : {}),
      ...(this.lastWriteAt !== undefined ? { lastWriteAt: this.lastWriteAt } : {}),
      failures: this.failures,
      pendingTouches: this.pending.size + this.pendingMembers.size,
      degraded: this.degraded,
    };
  }

  /**
   * The process ends: one last round (its unsent touches and hours, and "ended", so it stops counting as live at
   * once) is handed to the socket without waiting; the process does not wait for Redis to answer.
   */
  end(): void {
    if (this.closed || this.ended || !this.inventory) return;
    this.ended = true;
    if (this.inflight) return; // the round in flight carries most of it; the rest is the bound SIGKILL has too
    void this.round(true);
  }

  /** Stops the rounds and closes the connection if the writer made it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.options.ownsClient) {
      const c = this.client as { quit?(): Promise<unknown>; disconnect?(): void };
      try {
        await Promise.race([c.quit?.(), new Promise((r) => setTimeout(r, 1000).unref())]);
      } catch {
        // closing a connection that is already gone
      }
      c.disconnect?.();
    }
  }

  /**
   * Reads the service's ledger over this writer's connection, judged by the service's thresholds (this process's
   * own only where no process states any).
   */
  read(): Promise<LedgerAnswer> {
    const connectionError = this.options.connectionError;
    const inventory = this.inventory;
    return readLedger({
      client: this.client,
      service: this.service,
      ...(this.options.thresholds ? { defaults: this.options.thresholds } : {}),
      address: this.address,
      redact: this.options.redact,
      ...(connectionError ? { connectionError } : {}),
      // What this process saw and has not written yet is in its own answer (the next round writes it).
      ...(inventory !== undefined && (this.pending.size > 0 || this.pendingMembers.size > 0)
        ? {
            unsent: {
              touches: new Map(this.pending),
              members: [...this.pendingMembers.values()],
              processStartedAt: this.startedAt,
              version: inventory.version,
            },
          }
        : {}),
    });
  }

  /** Grows with every use this process records (a bean's touch, a method's use): a cached read older is stale. */
  get uses(): number {
    return this.useCount;
  }

  /** Runs a round now if one is due (timer, tests and the benchmark). */
  tick(): Promise<void> {
    if (this.closed || !this.inventory) return Promise.resolve();
    const now = this.clock();
    if (this.inflight) {
      if (!this.inflight.timedOut && now - this.inflight.startedAt > this.timeoutMs) {
        this.inflight.timedOut = true;
        this.outage(`did not answer within ${this.timeoutMs} ms`);
      }
      return Promise.resolve();
    }
    const heartbeatDue = now - this.lastHeartbeatAt >= this.options.heartbeatIntervalMs;
    if (this.inventoryWritten && this.pending.size === 0 && this.pendingMembers.size === 0 && !heartbeatDue)
      return Promise.resolve();
    return this.round(false);
  }

  private async round(final: boolean): Promise<void> {
    const inventory = this.inventory!;
    const k = this.keys;
    const now = this.clock();
    const tracking = this.options.tracking;
    // Observed time: the monotonic clock since last counted, at most two heartbeats at once, so that a process
    // stopped (SIGSTOP) or a loop blocked for an hour is not counted as an hour of observation. A process with
    // Phase 2 off counts its hours too, as time served unseen: the tracked share is told by them.
    const t = performance.now();
    const hours = this.hours + Math.min(t - this.countedTo, 2 * this.options.heartbeatIntervalMs) / 3.6e6;
    const stated = this.stated();
    const record: ProcessRecord = {
      v: inventory.version,
      s: this.startedAt,
      t: tracking,
      h: Math.round(hours * 1e6) / 1e6,
      i: inventory.digest,
      hb: this.options.heartbeatIntervalMs,
      rd: this.options.retentionDays,
      ...(stated ? { th: stated } : {}),
      host: os.hostname(),
      pid: process.pid,
      ...(final ? { e: now } : {}),
    };
    const sent = new Map(this.pending);
    const sentMembers = new Map(this.pendingMembers);
    const commands: (string | number | Buffer)[][] = [
      ['hsetnx', k.meta, 'epoch', this.epochCandidate],
      // Observation starts when the process does (its first touches can precede its first write); after a reset,
      // when the reset was seen: nothing before it is in this ledger.
      ['hsetnx', k.meta, 'since', this.observedFrom],
      ['hmget', k.meta, 'epoch', 'resetAt'],
      ['hexists', k.proc, this.processId],
    ];
    const variant = variantOf(inventory.version, inventory.digest);
    if (!this.inventoryWritten) {
      commands.push(
        ['set', k.inventory(inventory.digest), inventory.bytes, 'NX'],
        ['sadd', k.inventories, inventory.digest],
        ['hsetnx', k.variantFirstSeen, variant, this.observedFrom],
      );
    }
    const uses: [bucket: string, name: string, at: number, bean: boolean][] = [];
    for (const [name, at] of sent) uses.push([k.touchBucket(name), name, at, true]);
    for (const { bean, member, at } of sentMembers.values()) {
      const record = k.memberRecord(bean, member);
      uses.push([record.bucket, record.field, at, false]);
    }
    for (let from = 0; from < uses.length; from += USES_PER_SCRIPT) {
      const chunk = uses.slice(from, from + USES_PER_SCRIPT);
      const keys: string[] = [k.meta, k.versionIndex, ...chunk.map(([bucket]) => bucket)];
      const args: (string | number)[] = [
        inventory.version,
        this.startedAt,
        chunk.filter(([, , , bean]) => bean).length,
      ];
      for (const [, name, at] of chunk) args.push(name, at);
      commands.push(['eval', TOUCH_SCRIPT, keys.length, ...keys, ...args]);
    }
    commands.push(
      ['zadd', k.procs, now, this.processId],
      ['hset', k.proc, this.processId, JSON.stringify(record)],
      ['hset', k.variantLastSeen, variant, now],
      ['hset', k.meta, 'lastWrite', now, 'heartbeatMs', this.options.heartbeatIntervalMs],
    );
    if (stated) commands.push(['hset', k.meta, 'thresholds', JSON.stringify(stated)]);
    // The round that found the ledger emptied proposed this process's start as `since` before it knew: the evidence
    // of a reset ledger starts at the reset, whoever set it first.
    if (this.resetAt !== undefined) commands.push(['hset', k.meta, 'resetAt', this.resetAt, 'since', this.resetAt]);
    const stale = this.staleId;
    if (stale !== undefined) commands.push(['hdel', k.proc, stale], ['zrem', k.procs, stale]);
    // Last, and its answer never fails the round: a Redis user without INFO (an ACL without +info) still writes.
    const infoAt = this.firstWriteSaid ? -1 : commands.push(['info', 'memory']) - 1;
    this.inflight = { startedAt: now, timedOut: false };
    let results: [Error | null, unknown][] | null;
    try {
      results = await this.client.pipeline(commands as (string | number)[][]).exec();
    } catch (err) {
      this.inflight = undefined;
      this.failed(err);
      return;
    }
    this.inflight = undefined;
    const error = results?.find(([e], i) => e && i !== infoAt)?.[0];
    if (!results || error) {
      this.failed(error ?? new Error('no answer'));
      return;
    }
    const [epoch, resetValue] = results[2]![1] as [string | null, string | null];
    const known = results[3]![1] === 1;
    const resetSeen = Number(resetValue ?? 0);
    if (this.epoch !== undefined && epoch !== this.epoch) {
      this.ledgerReset(epoch, now);
      return;
    }
    if (this.knownResetAt !== undefined && resetSeen > this.knownResetAt) {
      // Another process (or the pruner, finding records lost) reset the ledger's evidence: this process's touches
      // are written again, so that what it saw is not lost with them.
      this.knownResetAt = resetSeen;
      this.observedFrom = resetSeen;
      this.inventoryWritten = false;
      this.resendAll();
    }
    this.knownResetAt ??= resetSeen;
    if (this.epoch !== undefined && !known && this.hours > 0) {
      // This process's record was folded while it could not write (paused past the pruner's grace): its total
      // is in its version's hours now; from here on it counts under a new id, from zero.
      this.staleId = this.processId;
      this.processId = LedgerWriter.newProcessId();
      this.hours = 0;
      this.countedTo = t;
    } else {
      this.hours = hours;
      this.countedTo = t;
    }
    this.epoch = epoch ?? this.epochCandidate;
    if (this.epoch === this.epochCandidate) this.epochCandidate = randomBytes(8).toString('hex');
    this.inventoryWritten = true;
    this.lastHeartbeatAt = now;
    this.lastWriteAt = now;
    this.resetAt = undefined;
    if (stale !== undefined && this.staleId === stale) this.staleId = undefined;
    for (const [name, at] of sent) if (this.pending.get(name) === at) this.pending.delete(name);
    for (const [key, use] of sentMembers) if (this.pendingMembers.get(key) === use) this.pendingMembers.delete(key);
    if (this.degraded) {
      this.degraded = false;
      safeLog(
        'info',
        `ghost ledger for ${this.service}: Redis at ${this.address} answers again; ${sent.size + sentMembers.size} kept ${sent.size + sentMembers.size === 1 ? 'use' : 'uses'} written`,
      );
    }
    if (!this.firstWriteSaid) {
      this.firstWriteSaid = true;
      safeLog(
        'info',
        `ghost ledger: this process's first write for service ${this.service} (version ${inventory.version}, ${tracking ? 'Phase 2 on' : 'Phase 2 off: inventory and heartbeat only'}) to ${this.address}`,
      );
      this.checkEviction(results[infoAt]?.[1]);
    }
    if (!final && now - this.lastPruneAt >= PRUNE_EVERY_MS) {
      this.lastPruneAt = now;
      pruneLedger(this.client, this.keys, {
        now,
        retentionMs: this.options.retentionDays * 86_400_000,
        heartbeatMs: this.options.heartbeatIntervalMs,
        owner: this.processId,
      }).then(
        ({ lostTouches }) => {
          if (lostTouches) {
            safeLog(
              'warn',
              `ghost ledger for ${this.service}: ${lostTouches} touch ${lostTouches === 1 ? 'record was' : 'records were'} missing from Redis at ${this.address} (evicted?); ` +
                "the ledger's evidence starts over from now (marked reset) and every process writes its touches again",
            );
          }
        },
        (err) =>
          safeLog(
            'debug',
            `ghost ledger for ${this.service}: prune skipped: ${this.options.redact(describe(err, undefined))}`,
          ),
      );
    }
  }

  /** This process's thresholds as the ledger keeps them. */
  private stated(): StatedThresholds | undefined {
    if (this.options.thresholds === undefined) return undefined;
    const t = fullThresholds(this.options.thresholds);
    return { d: t.minDays, ph: t.minProcessHours, ts: t.minTrackedShare, r: t.lastUseResolutionMs };
  }

  /** Every use this process knows goes again with the next round (the ledger lost or reset its evidence). */
  private resendAll(): void {
    for (const [name, at] of this.touches) this.pending.set(name, at);
    for (const [key, use] of this.memberUses) this.pendingMembers.set(key, use);
  }

  private ledgerReset(epoch: string | null, now: number): void {
    this.epoch = epoch ?? undefined;
    this.resetAt = now;
    this.observedFrom = now;
    this.knownResetAt = now;
    this.inventoryWritten = false;
    this.hours = 0;
    this.countedTo = performance.now();
    this.resendAll();
    safeLog(
      'warn',
      `ghost ledger for ${this.service}: the ledger at ${this.address} was emptied (Redis restarted without its data, or flushed); ` +
        `this process writes what it knows again, and the ledger's evidence starts over from now (marked reset)`,
    );
  }

  private failed(err: unknown): void {
    this.failures++;
    this.outage(this.options.redact(describe(err, this.options.connectionError?.())));
  }

  /** One WARN per outage: the first failure says it, the recovery says it ended. */
  private outage(reason: string): void {
    if (this.degraded) return;
    this.degraded = true;
    const kept = this.pending.size + this.pendingMembers.size;
    safeLog(
      'warn',
      `ghost ledger for ${this.service}: Redis at ${this.address} ${reason}; the application is unaffected, ` +
        `${kept} ${kept === 1 ? 'use is' : 'uses are'} kept and written when it answers`,
    );
  }

  /** One WARN when Redis may evict the ledger's keys to make room (they have no TTL: `volatile-*` spares them). */
  private checkEviction(info: unknown): void {
    const policy = /maxmemory_policy:(\S+)/.exec(String(info ?? ''))?.[1];
    if (policy?.startsWith('allkeys-')) {
      safeLog(
        'warn',
        `ghost ledger for ${this.service}: Redis at ${this.address} has maxmemory-policy ${policy}, which may evict the ledger's keys ` +
          `under memory pressure (the ledger would then look reset); use noeviction or a volatile-* policy, or a Redis of its own`,
      );
    }
  }
}
