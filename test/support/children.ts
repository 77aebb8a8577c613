import type { ChildProcess } from 'node:child_process';
import { CHILDREN_GLOBAL } from './temp-global';

/**
 * Hands a started process to the test environment (environment.ts), which kills it when the test file ends if it
 * is still running: a test that failed before its own cleanup, or a helper whose stop was never reached, must not
 * leave a child (its pipes hold the jest worker open: "A worker process has failed to exit gracefully").
 * Returns the process.
 */
export function trackChild<P extends ChildProcess>(proc: P): P {
  const g = globalThis as Record<string, unknown>;
  let children = g[CHILDREN_GLOBAL] as Set<ChildProcess> | undefined;
  if (!children) g[CHILDREN_GLOBAL] = children = new Set<ChildProcess>();
  // Kept after it exits: a grandchild that inherited its stdout or stderr (a compiler's service process, say)
  // keeps those pipes open in this worker, and the file's end closes them too.
  children.add(proc);
  return proc;
}
