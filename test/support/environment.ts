import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import NodeEnvironment from 'jest-environment-node';
import { CHILDREN_GLOBAL, TEMP_DIRS_GLOBAL } from './temp-global';

/** How long a child killed at the end of a file may take to go before the file's teardown goes on without it. */
const KILL_WAIT_MS = 5_000;

/** Kills what a test file left running (SIGKILL: it is past its own stop) and waits for it to be gone. */
export async function killLeftovers(children: Set<ChildProcess>): Promise<void> {
  const waits = [...children]
    .filter((c) => c.exitCode === null && c.signalCode === null)
    .map(
      (c) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, KILL_WAIT_MS);
          timer.unref();
          c.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          c.kill('SIGKILL');
        }),
    );
  await Promise.all(waits);
  // Their pipes are what keeps the worker's loop alive once they are gone: closed, whatever was unread.
  for (const c of children) for (const s of [c.stdin, c.stdout, c.stderr]) s?.destroy();
}

/**
 * jest's node environment, plus three duties once a test file is over — after its own afterAll hooks have stopped
 * the processes it started, pass or fail: kill any process started through trackChild() still running, remove
 * every directory it made with tempDir(), and wait for what it left open to close (naming what does not).
 */
export default class DiagTestEnvironment extends NodeEnvironment {
  private readonly testPath: string;
  /** What kept the worker alive before this file ran (its IPC channel, stdio): not this file's to close. */
  private readonly baseline: Map<string, number>;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.testPath = context.testPath;
    // The worker's own stdout and stderr are made when first read: made now, they are part of the baseline.
    void [process.stdout, process.stderr];
    this.baseline = resourceCounts();
  }

  override async teardown(): Promise<void> {
    const children = (this.global as Record<string, unknown>)[CHILDREN_GLOBAL];
    if (children instanceof Set) await killLeftovers(children as Set<ChildProcess>);
    const dirs = (this.global as Record<string, unknown>)[TEMP_DIRS_GLOBAL];
    if (dirs instanceof Set) {
      for (const dir of dirs as Set<string>) {
        try {
          fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
        } catch {
          /* the run's teardown removes what is left */
        }
      }
    }
    await super.teardown();
    await drain(this.testPath, this.baseline);
  }
}

/** How long a file's teardown waits for what its tests opened (sockets, servers, child processes) to close. */
const DRAIN_WAIT_MS = 5_000;

/** The count of each kind of resource keeping the loop alive (`process.getActiveResourcesInfo()`). */
function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** What is open now beyond `baseline`, as `TCPServerWrap×1` words; empty when nothing is. */
function beyond(baseline: Map<string, number>): string[] {
  const out: string[] = [];
  for (const [kind, n] of resourceCounts()) {
    const extra = n - (baseline.get(kind) ?? 0);
    if (extra > 0) out.push(`${kind}×${extra}`);
  }
  return out;
}

/**
 * Waits, up to DRAIN_WAIT_MS, until nothing a test file opened keeps this worker's loop alive any more: a server
 * whose keep-alive sockets close a moment after close(), a killed child whose handle closes on the next turn.
 * A jest worker that still has one when the run ends is the "worker process has failed to exit gracefully" of a
 * slow machine (issue #45): waiting here makes the run end clean, and what is still open after the wait is named
 * with its file (a leak to fix in that file). With DIAG_TEST_HANDLES=<file>, every file's line is appended there.
 */
async function drain(testPath: string, baseline: Map<string, number>): Promise<void> {
  const started = Date.now();
  let left = beyond(baseline);
  while (left.length > 0 && Date.now() - started < DRAIN_WAIT_MS) {
    await new Promise((r) => setTimeout(r, 25));
    left = beyond(baseline);
  }
  const log = process.env['DIAG_TEST_HANDLES'];
  if (log) fs.appendFileSync(log, `${JSON.stringify({ test: testPath, drainedMs: Date.now() - started, left })}\n`);
  if (left.length > 0) process.stderr.write(`[test environment] ${testPath} left open: ${left.join(', ')}\n`);
}
