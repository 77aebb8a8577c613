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
 * jest's node environment, plus two duties once a test file is over — after its own afterAll hooks have stopped
 * the processes it started, pass or fail: kill any process started through trackChild() still running, and remove
 * every directory it made with tempDir().
 */
export default class DiagTestEnvironment extends NodeEnvironment {
  private readonly testPath: string;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.testPath = context.testPath;
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
    logHandles(this.testPath);
  }
}

/**
 * With DIAG_TEST_HANDLES=<file>, appends what keeps this worker's loop alive once a test file is over (one JSON
 * line per file): the way to find the file that leaves a timer, socket or pipe behind, which is what jest reports
 * as "A worker process has failed to exit gracefully".
 */
function logHandles(testPath: string): void {
  const file = process.env['DIAG_TEST_HANDLES'];
  if (!file) return;
  fs.appendFileSync(
    file,
    `${JSON.stringify({ pid: process.pid, test: testPath, resources: process.getActiveResourcesInfo() })}\n`,
  );
}
