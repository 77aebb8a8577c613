import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mergeGhostReports } from '../tracking/ghost-report';
import { writeJsonAtomic } from '../../shared/atomic-file';
import type { GhostReport } from '../tracking/types';

/**
 * `diag-ghost-report.json` when several processes of one application share a report directory (cluster
 * workers, several replicas under a process manager).
 *
 * Each write takes an exclusive lock file, reads the report already there and, when it belongs to the same
 * run, merges this process's snapshot into it (touched anywhere is touched; see mergeGhostReports), then
 * replaces it atomically. Merging is a union, so a process rewriting its own findings is idempotent and no
 * process can erase another's touches. A report from another run is replaced, never merged: "untouched" is
 * a statement about one run.
 */
export interface GhostReportFile extends GhostReport {
  /** Which run the report describes; processes with the same id merge. */
  run: { id: string };
  /** Every process that contributed, with its last write. */
  processes: Array<{ pid: number; host: string; updatedAt: string }>;
  updatedAt: string;
}

/**
 * The run id of this process: the configured one, else the cluster primary's pid for a cluster worker (all
 * workers of one primary are one run), else this process's own pid and start time.
 */
export function defaultRunId(configured?: string): string {
  if (configured) return configured;
  const host = os.hostname();
  // Required here, once per process: node:cluster is a millisecond of start-up most applications never load.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { isWorker } = require('node:cluster') as typeof import('node:cluster').default;
  if (isWorker) return `${host}:cluster-${process.ppid}`;
  const started = Math.round(Date.now() - process.uptime() * 1000);
  return `${host}:${process.pid}:${started}`;
}

const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 2_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Takes `<file>.lock`; breaks a lock older than LOCK_STALE_MS (its holder died). Returns a release function. */
function lock(file: string): () => void {
  const lockFile = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = fs.openSync(lockFile, 'wx', 0o644);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      return () => {
        try {
          fs.unlinkSync(lockFile);
        } catch {
          /* already gone */
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - fs.statSync(lockFile).mtimeMs > LOCK_STALE_MS) {
          fs.unlinkSync(lockFile);
          continue;
        }
      } catch {
        continue; // released between our open and stat
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${lockFile} (held by another process)`);
      }
      sleepSync(5 + Math.random() * 20);
    }
  }
}

function readExisting(file: string): GhostReportFile | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as GhostReportFile;
    if (parsed && typeof parsed === 'object' && Array.isArray(parsed.touched) && parsed.run) return parsed;
  } catch {
    /* a file we did not write, or a foreign format: replaced */
  }
  return undefined;
}

/** Writes this process's snapshot into `file`, merged with what other processes of the same run wrote. */
export function writeGhostReport(
  file: string,
  snapshot: GhostReport,
  runId: string,
  now = new Date(),
  /** What the merged report gains before it is written (the verdicts, which the merge must see first). */
  complete: (merged: GhostReport) => GhostReport = (merged) => merged,
): GhostReportFile {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const release = lock(file);
  try {
    const existing = readExisting(file);
    const sameRun = existing?.run?.id === runId;
    const merged = complete(sameRun ? mergeGhostReports([existing!, snapshot]) : snapshot);
    const me = { pid: process.pid, host: os.hostname(), updatedAt: now.toISOString() };
    const others = sameRun ? (existing!.processes ?? []).filter((p) => !(p.pid === me.pid && p.host === me.host)) : [];
    const out: GhostReportFile = {
      ...merged,
      run: { id: runId },
      processes: [...others, me].sort((a, b) => a.pid - b.pid),
      updatedAt: me.updatedAt,
    };
    writeJsonAtomic(file, out);
    return out;
  } finally {
    release();
  }
}
