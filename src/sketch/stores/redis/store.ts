import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { errorText } from '../../../shared/errors';
import { safeLog } from '../../../shared/logger';
import { SketchConfigError } from '../../counters';
import type { WindowedCountMinSketch, WindowedSketchOptions } from '../../window';
import type { FleetStatus, SketchStore, SyncEvent } from '../types';
import { FleetSketch, type FleetView } from './fleet-sketch';
import type { RedisPipelineClient } from '../../../shared/redis';
import {
  DEFAULT_FAIL_MODE,
  DEFAULT_KEY_PREFIX,
  DEFAULT_SYNC_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
  isFailMode,
  isKeyPrefix,
} from '../../settings';

/** What a {@link RedisSketchStore} may be told. */
export interface RedisSketchStoreOptions {
  /** The connection: an ioredis `Redis` or `Cluster`, or any client with the same `pipeline(commands)`. */
  readonly client: RedisPipelineClient;
  /** How often each sketch pushes its changed cells and reads the fleet's back. Default 100 ms. */
  readonly syncIntervalMs?: number;
  /** A sync round with no answer after this long switches the sketch to local-fallback. Default 250 ms. */
  readonly timeoutMs?: number;
  /** `open` (default): alone, each process admits threshold ÷ nodes per key; `closed`: it rejects every hit. */
  readonly failMode?: 'open' | 'closed';
  /** Prefix of every key the store writes. Default `diag:sketch:`. */
  readonly keyPrefix?: string;
  /** How log lines name the server: never with a password. Default: host and port read from the client. */
  readonly address?: string;
  /** Removes secrets from a client's error messages before they are logged. */
  readonly redact?: (text: string) => string;
  /** Close the client with the store (the store made it). Default false: a client you pass stays yours. */
  readonly ownsClient?: boolean;
  /** Wall clock in ms, shared by the fleet through NTP. Default `Date.now`. */
  readonly clock?: () => number;
}

// The defaults and checks of diag.sketch.redis.*, the settings' own: one place for both.
export { DEFAULT_KEY_PREFIX, DEFAULT_SYNC_INTERVAL_MS, DEFAULT_TIMEOUT_MS } from '../../settings';
/** Operations per BITFIELD command. */
const OPS_PER_COMMAND = 1024;

interface Entry {
  readonly id: string;
  readonly sketch: FleetSketch;
  readonly view: FleetView;
  readonly shape: string;
  lastSyncAt: number | undefined;
  failures: number;
  rounds: number;
  inflight: { readonly startedAt: number; timedOut: boolean } | undefined;
  /** The shape Redis holds for this id differs: the sketch stays local for good. */
  incompatible: boolean;
}

/** FNV-1a of the sketch id: the row-hash seed every process derives alike, so that cells line up. */
export function fleetSeed(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function addressOf(client: unknown): string {
  const options = (client as { options?: { host?: unknown; port?: unknown } } | null)?.options;
  if (options && typeof options.host === 'string') return `redis://${options.host}:${String(options.port ?? 6379)}`;
  return 'the Redis client given to the store';
}

/**
 * Fleet-wide sketches through Redis. Each process counts every hit locally first and never waits on the
 * network; a background round per sketch, every `syncIntervalMs`, pushes the cells this process changed as
 * one `BITFIELD … OVERFLOW SAT INCRBY u32` per live sub-window (one Redis string per sketch sub-window, all
 * keys of a sketch under one hash tag for Redis Cluster), reads back the fleet's totals of those cells, and
 * refreshes a heartbeat that counts the processes. Traffic follows the hits (changed cells only); an idle
 * sketch sends only its heartbeat.
 *
 * When Redis does not answer within `timeoutMs`, refuses, or is gone, the sketch switches to
 * `local-fallback` (each process admits threshold ÷ nodes last seen), keeps its unpushed counts, and pushes
 * them once Redis answers again. At most one round per sketch is in flight: a round that timed out but is
 * answered later (a Redis that was paused) is applied then, not sent twice.
 */
export class RedisSketchStore implements SketchStore {
  readonly kind = 'redis' as const;
  readonly syncIntervalMs: number;
  readonly timeoutMs: number;
  readonly failMode: 'open' | 'closed';
  readonly keyPrefix: string;
  /** The server as log lines and the actuator name it: never with credentials. */
  readonly address: string;
  private readonly client: RedisPipelineClient;
  private readonly clock: () => number;
  private readonly redact: (text: string) => string;
  private readonly nodeId = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(event: SyncEvent) => void>();
  private timer: NodeJS.Timeout | undefined;
  /** Whether the last log line said Redis was out of reach: one WARN per outage, one INFO per recovery. */
  private degraded = false;
  private everConnected = false;
  private closed = false;

  constructor(private readonly options: RedisSketchStoreOptions) {
    const client = options?.client as RedisPipelineClient | undefined;
    if (!client || typeof client.pipeline !== 'function') {
      throw new SketchConfigError(
        'RedisSketchStore needs a client with pipeline(commands), such as an ioredis Redis or Cluster',
      );
    }
    this.client = client;
    this.syncIntervalMs = positive('syncIntervalMs', options.syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS);
    this.timeoutMs = positive('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    if (options.failMode !== undefined && !isFailMode(options.failMode)) {
      throw new SketchConfigError(`failMode must be 'open' or 'closed', got ${String(options.failMode)}`);
    }
    this.failMode = options.failMode ?? DEFAULT_FAIL_MODE;
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    if (!isKeyPrefix(this.keyPrefix)) {
      throw new SketchConfigError(
        'keyPrefix must be a string without braces or spaces (the sketch id is the hash tag)',
      );
    }
    this.address = options.address ?? addressOf(client);
    this.clock = options.clock ?? Date.now;
    this.redact = options.redact ?? ((text) => text);
  }

  create(id: string, options: WindowedSketchOptions): WindowedCountMinSketch {
    if (this.closed) throw new SketchConfigError('the Redis sketch store is closed');
    // Until the first answer the sketch counts alone (as threshold ÷ 1); fail-mode closed starts rejecting only
    // once a sync has failed, so a healthy start never refuses the first calls.
    const view: Entry['view'] = { mode: 'local-fallback', nodes: 1, rejectAll: false };
    const seed = options.seed ?? fleetSeed(id);
    const sketch = new FleetSketch({ ...options, seed, clock: this.clock }, view);
    const shape = `w${sketch.width}.d${sketch.depth}.s${sketch.subWindows}.seed${seed}.window${sketch.windowMs}`;
    this.entries.set(id, {
      id,
      sketch,
      view,
      shape,
      lastSyncAt: undefined,
      failures: 0,
      rounds: 0,
      inflight: undefined,
      incompatible: false,
    });
    this.start();
    return sketch;
  }

  fleet(id: string): FleetStatus | undefined {
    const e = this.entries.get(id);
    if (e === undefined) return undefined;
    return {
      mode: e.view.mode,
      nodes: e.view.nodes,
      lastSyncAgoMs: e.lastSyncAt === undefined ? null : Math.max(0, Math.round(this.clock() - e.lastSyncAt)),
      syncFailures: e.failures,
    };
  }

  onSync(listener: (event: SyncEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  release(id: string): void {
    this.entries.delete(id);
    if (this.entries.size === 0) this.stop();
  }

  /**
   * One sync round for every sketch now, resolved when each has an answer or gave up. `everything`: the
   * increments cold cells hold back go too (what {@link close} sends last).
   */
  async syncNow(everything = false): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => this.round(e, everything)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stop();
    // A last push, held-back increments included, so every count this process took reaches the fleet;
    // bounded by the timeout.
    await Promise.race([this.syncNow(true), new Promise((r) => setTimeout(r, this.timeoutMs).unref())]);
    this.entries.clear();
    if (this.options.ownsClient) {
      const c = this.client as { quit?(): Promise<unknown>; disconnect?(): void };
      try {
        await Promise.race([c.quit?.(), new Promise((r) => setTimeout(r, this.timeoutMs).unref())]);
      } catch {
        /* already gone */
      }
      c.disconnect?.();
    }
  }

  private start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      for (const e of this.entries.values()) void this.round(e);
    }, this.syncIntervalMs);
    this.timer.unref();
  }

  private stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private key(id: string, suffix: string | number): string {
    return `${this.keyPrefix}{${id}}:${suffix}`;
  }

  private async round(e: Entry, everything = false): Promise<void> {
    if (e.incompatible || e.sketch.closed) return;
    const abandonAfter = Math.max(10_000, 40 * this.timeoutMs);
    if (e.inflight !== undefined && performance.now() - e.inflight.startedAt < abandonAfter) return;
    const now = this.clock();
    const settleAfterMs = 2 * this.syncIntervalMs + this.timeoutMs;
    const { batches, loads } = e.sketch.collect(now, settleAfterMs, everything);
    const slots = e.sketch.subWindows + 1;
    const commands: (string | number)[][] = [];
    // Per batch, the indices of its BITFIELD commands: a busy round is cut into commands of at most
    // OPS_PER_COMMAND operations (clients and Redis handle huge argument lists badly).
    const commandsOf: number[][] = [];
    for (const b of batches) {
      const key = this.key(e.id, b.epoch);
      const own: number[] = [];
      let pushes = false;
      for (let from = 0; from < b.indices.length; from += OPS_PER_COMMAND) {
        const args: (string | number)[] = ['bitfield', key, 'OVERFLOW', 'SAT'];
        const to = Math.min(b.indices.length, from + OPS_PER_COMMAND);
        for (let i = from; i < to; i++) {
          const cell = `#${(b.indices[i]! - b.slot) / slots}`;
          const delta = b.deltas[i]!;
          if (delta > 0) {
            args.push('INCRBY', 'u32', cell, delta);
            pushes = true;
          } else {
            args.push('GET', 'u32', cell);
          }
        }
        own.push(commands.length);
        commands.push(args);
      }
      commandsOf.push(own);
      if (pushes) commands.push(['pexpireat', key, Math.ceil(b.expiresAt)]);
    }
    const firstLoad = commands.length;
    for (const load of loads) commands.push(['getBuffer', this.key(e.id, load.epoch)]);
    const nodesKey = this.key(e.id, 'nodes');
    const nodeTtl = Math.max(1000, 5 * this.syncIntervalMs);
    const heartbeat = commands.length;
    commands.push(
      ['zadd', nodesKey, now + nodeTtl, this.nodeId],
      ['zremrangebyscore', nodesKey, '-inf', now],
      ['zcard', nodesKey],
      ['pexpire', nodesKey, 2 * nodeTtl],
    );
    const checkShape = e.rounds % 50 === 0;
    if (checkShape) {
      const shapeKey = this.key(e.id, 'shape');
      commands.push(
        ['set', shapeKey, e.shape, 'NX', 'PX', Math.ceil(2 * e.sketch.windowMs + 60_000)],
        ['get', shapeKey],
      );
    }
    e.rounds++;

    const inflight = { startedAt: performance.now(), timedOut: false };
    e.inflight = inflight;
    const timer = setTimeout(() => {
      inflight.timedOut = true;
      this.failed(e, `no answer within ${this.timeoutMs} ms`);
    }, this.timeoutMs);
    timer.unref();
    let results: [Error | null, unknown][] | null;
    try {
      results = await this.client.pipeline(commands).exec();
    } catch (err) {
      clearTimeout(timer);
      if (e.inflight === inflight) e.inflight = undefined;
      for (const b of batches) e.sketch.restore(b);
      if (!inflight.timedOut) this.failed(e, errorText(err));
      this.emit(e, inflight.startedAt, false);
      return;
    }
    clearTimeout(timer);
    if (e.inflight === inflight) e.inflight = undefined;
    const answered = this.clock();
    let failure: string | undefined;
    batches.forEach((b, i) => {
      const totals: number[] = [];
      let err: Error | null = null;
      for (const c of commandsOf[i]!) {
        const [commandErr, reply] = results?.[c] ?? [new Error('no reply'), undefined];
        if (commandErr || !Array.isArray(reply)) err ??= commandErr ?? new Error('unexpected BITFIELD reply');
        else totals.push(...(reply as number[]));
      }
      // A command that failed was not applied: its increments go back to pending. (Parts of a batch that
      // were applied are then pushed twice: Redis errors on a well-formed BITFIELD only when out of memory.)
      if (err) {
        e.sketch.restore(b);
        failure ??= errorText(err);
        return;
      }
      e.sketch.apply(b, totals, answered, settleAfterMs);
    });
    loads.forEach((load, i) => {
      const [err, bytes] = results?.[firstLoad + i] ?? [new Error('no reply'), undefined];
      if (err) failure ??= errorText(err);
      else if (bytes === null || bytes instanceof Uint8Array) e.sketch.load(load, bytes);
    });
    const [nodesErr, nodes] = results?.[heartbeat + 2] ?? [new Error('no reply'), undefined];
    if (nodesErr) failure ??= errorText(nodesErr);
    if (checkShape && !failure) {
      const [, held] = results?.[heartbeat + 5] ?? [];
      if (typeof held === 'string' && held !== e.shape) {
        e.incompatible = true;
        e.view.mode = 'local-fallback';
        safeLog(
          'warn',
          `sketch ${e.id}: Redis at ${this.address} holds it with shape ${held}, this process has ${e.shape}; ` +
            'it stays local in this process (give every replica the same sketch options)',
        );
        this.emit(e, inflight.startedAt, false);
        return;
      }
    }
    if (failure !== undefined) {
      if (!inflight.timedOut) this.failed(e, failure);
      this.emit(e, inflight.startedAt, false);
      return;
    }
    e.view.nodes = Math.max(1, Number(nodes) || 1);
    e.lastSyncAt = answered;
    e.view.mode = 'fleet';
    e.view.rejectAll = false;
    this.recovered();
    this.emit(e, inflight.startedAt, true);
  }

  private failed(e: Entry, cause: string): void {
    e.failures++;
    e.view.mode = 'local-fallback';
    e.view.rejectAll = this.failMode === 'closed';
    if (this.degraded) return;
    this.degraded = true;
    const share =
      this.failMode === 'closed' ? 'reject every call (fail-mode closed)' : 'admit threshold ÷ nodes last seen per key';
    safeLog(
      'warn',
      `sketch store: Redis at ${this.address} ${this.everConnected ? 'stopped answering' : 'is not reachable'} ` +
        `(${this.redact(cause)}); sketches ${share} locally until it answers again, keeping their counts to push then`,
    );
  }

  private recovered(): void {
    const first = !this.everConnected;
    this.everConnected = true;
    if (this.degraded) {
      // One INFO per outage: when the last sketch that was cut off is back.
      if ([...this.entries.values()].some((x) => x.view.mode !== 'fleet' && !x.incompatible)) return;
      this.degraded = false;
    } else if (!first) {
      return;
    }
    safeLog(
      'info',
      `sketch store: ${first ? 'fleet-wide through' : 'Redis answers again,'} Redis at ${this.address}; sketches judge by the fleet's counts`,
    );
  }

  private emit(e: Entry, startedAt: number, ok: boolean): void {
    if (this.listeners.size === 0) return;
    const event: SyncEvent = { id: e.id, durationMs: performance.now() - startedAt, ok };
    for (const l of this.listeners) {
      try {
        l(event);
      } catch (err) {
        safeLog('debug', `sync listener failed: ${String(err)}`);
      }
    }
  }
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new SketchConfigError(`${name} must be a positive integer, got ${value}`);
  return value;
}
