import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { DiagReport } from '../reports/diag-report';
import type { GhostReport } from '../tracking/types';

/** One application bean as the ledger keeps it: what a reader needs to find it and to judge it. */
export interface InventoryBean {
  /** The report's stable name (`module/token` only where two modules share a token). */
  readonly name: string;
  readonly module?: string;
  readonly className?: string;
  /** The file it was defined in, relative to the application. */
  readonly source?: string;
  /** A Phase 1 candidate in this version. */
  readonly ghostCandidate: boolean;
  /** `true` when Phase 2 tracks it, else why not. */
  readonly tracked: true | string;
}

/** Every application bean of one process at ready, and how it was watched. */
export interface Inventory {
  /** `nestjs`, `inversify`, `tsyringe`, `awilix`. */
  readonly framework: string;
  /** Phase 2 on in the process that wrote it. */
  readonly tracking: boolean;
  readonly beans: readonly InventoryBean[];
}

/**
 * The application beans of a start-up report (module classes left out: nothing to delete there on its own),
 * with Phase 2's state from the live snapshot, when tracking is on.
 */
export function applicationBeans(report: DiagReport, snapshot: GhostReport | undefined): InventoryBean[] {
  const candidates = new Set(report.ghostCandidates.beans);
  const tracked = snapshot ? new Set([...snapshot.touched, ...snapshot.untouched]) : undefined;
  return report.graph.nodes
    .filter((n) => !n.framework && n.role !== 'module')
    .map((n) => ({
      name: n.name,
      ...(n.module !== undefined ? { module: n.module } : {}),
      ...(n.className !== undefined ? { className: n.className } : {}),
      ...(n.source !== undefined ? { source: n.source } : {}),
      ghostCandidate: candidates.has(n.name),
      tracked:
        tracked === undefined
          ? 'Phase 2 is off in this process'
          : tracked.has(n.name)
            ? true
            : (snapshot!.untrackable[n.name] ??
              (n.verdict === 'not-instantiated' ? 'not created at start-up' : 'not tracked')),
    }));
}

/*
 * Stored deflated, with one-letter keys: 3,000 beans of a real shape take 23 KB where the plain JSON takes 310 KB
 * (bench/ledger), so that a few versions of a large service stay well inside the 1 MiB a service may use.
 */
interface StoredBean {
  n: string;
  m?: string;
  c?: string;
  s?: string;
  g?: 1;
  t?: string;
}

export function encodeInventory(inventory: Inventory): Buffer {
  const beans: StoredBean[] = inventory.beans.map((b) => ({
    n: b.name,
    ...(b.module !== undefined ? { m: b.module } : {}),
    ...(b.className !== undefined ? { c: b.className } : {}),
    ...(b.source !== undefined ? { s: b.source } : {}),
    ...(b.ghostCandidate ? { g: 1 as const } : {}),
    ...(b.tracked !== true ? { t: b.tracked } : {}),
  }));
  return deflateRawSync(
    Buffer.from(JSON.stringify({ f: inventory.framework, t: inventory.tracking ? 1 : 0, b: beans })),
  );
}

/** @throws Error when the bytes are not an inventory (another writer's key, a truncated value). */
export function decodeInventory(bytes: Buffer): Inventory {
  const raw = JSON.parse(inflateRawSync(bytes).toString('utf8')) as { f?: unknown; t?: unknown; b?: unknown };
  if (typeof raw.f !== 'string' || !Array.isArray(raw.b)) throw new Error('not a ledger inventory');
  return {
    framework: raw.f,
    tracking: raw.t === 1,
    beans: (raw.b as StoredBean[]).map((b) => ({
      name: String(b.n),
      ...(b.m !== undefined ? { module: b.m } : {}),
      ...(b.c !== undefined ? { className: b.c } : {}),
      ...(b.s !== undefined ? { source: b.s } : {}),
      ghostCandidate: b.g === 1,
      tracked: b.t === undefined ? true : b.t,
    })),
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Names the stored inventory by its content: processes that saw the same beans the same way share one copy. */
export function inventoryDigest(encoded: Buffer): string {
  return createHash('sha256').update(encoded).digest('hex').slice(0, 16);
}

/**
 * The code version when the resource has no `service.version`: a digest of which beans exist in which module (not
 * of how they were watched, nor of their files' paths, which follow the working directory), so that the replicas
 * of one build agree and a deploy that changes beans is a new one.
 */
export function inventoryVersion(inventory: Inventory): string {
  const identity = inventory.beans
    .map((b) => `${b.name}\u0000${b.module ?? ''}\u0000${b.className ?? ''}`)
    .sort()
    .join('\n');
  return `inv-${sha256(`${inventory.framework}\n${identity}`).slice(0, 12)}`;
}
