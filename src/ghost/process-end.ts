import { constants } from 'node:os';
import { safeLog } from '../shared/logger';

/** The ordinary ends of a process: a termination signal, the event loop emptying, `process.exit()`. */
export type ProcessEnd = 'SIGTERM' | 'SIGINT' | 'SIGHUP' | 'beforeExit' | 'exit';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const satisfies readonly ProcessEnd[];
type EndSignal = (typeof SIGNALS)[number];

/**
 * Marks the listeners installed here, by every copy of the package a process loads (hence `Symbol.for`): two
 * instrumentations must not take each other for the application's handler, or neither would end the process.
 */
const OURS = Symbol.for('diag-instrumentation.process-end');

/** What `process.on` accepts, the events here passing different arguments. */
type Listener = ((...args: any[]) => void) & { [OURS]?: true };

function ours(listener: Listener): Listener {
  listener[OURS] = true;
  return listener;
}

/**
 * How many listeners per signal signal-exit holds (execa, write-file-atomic, foreground-child… load it): v3 keeps
 * its count on `process.__signal_exit_emitter__`, v4 on a global symbol. It raises the signal again only when its
 * listeners are the only ones, so it is no application handler: taken for one, it and this package would each
 * wait for the other, and the process would never end.
 */
function signalExitListeners(): number {
  const count = (emitter: { count?: unknown } | undefined): number =>
    typeof emitter?.count === 'number' ? emitter.count : 0;
  const v3 = (process as { __signal_exit_emitter__?: { count?: unknown } }).__signal_exit_emitter__;
  const v4 = (globalThis as Record<symbol, { count?: unknown } | undefined>)[Symbol.for('signal-exit emitter')];
  return count(v3) + count(v4);
}

/** Whether the application handles `signal`, looked up when it arrives: listeners added after ours count. */
function applicationListens(signal: NodeJS.Signals): boolean {
  const others = process.listeners(signal).filter((listener) => (listener as Listener)[OURS] !== true).length;
  return others > signalExitListeners();
}

/**
 * Calls `write` at each ordinary end of the process, synchronously, without changing how the process ends:
 * the same exit code, or death by the same signal, as without this package. Returns the function that
 * removes every listener installed here.
 *
 * - SIGTERM, SIGINT, SIGHUP: a listener for one of them takes away Node's default, which is to die by it. So
 *   when the signal arrives and nothing else listens, `write` runs, the listeners go (the signal's disposition
 *   is the default again) and the signal is raised anew: the parent sees the process killed by it, as it would
 *   have been (with signal-exit loaded, the signal reaches its listener, which raises it once more). When the
 *   application listens too (its own handler, Nest's `enableShutdownHooks()`, added before or after this
 *   one), its handler decides what the signal means and nothing is done here: it ends the process through
 *   `exit`, through a container close, or by raising the signal again once its own listener is gone; when it
 *   goes, `write` runs and ours goes too, so that the signal does what it would have done.
 * - `beforeExit`: the loop is empty, the application has nothing left to do.
 * - `exit`: `process.exit()` or the end after `beforeExit`; only synchronous work runs there.
 *
 * `write` may run at more than one of these (a natural end passes `beforeExit` then `exit`; the application's
 * handler may exit): it must do nothing when it has nothing new to write. It must not throw; if it does, the
 * error is logged and the process ends as it would have.
 */
export function onProcessEnd(write: (end: ProcessEnd) => void): () => void {
  const installed: Array<[event: ProcessEnd | 'removeListener', listener: Listener]> = [];
  const on = (event: ProcessEnd | 'removeListener', listener: Listener): void => {
    process.on(event, listener);
    installed.push([event, listener]);
  };
  const off = (event: ProcessEnd | 'removeListener', listener: Listener): void => {
    const at = installed.findIndex(([e, l]) => e === event && l === listener);
    if (at >= 0) installed.splice(at, 1);
    process.removeListener(event, listener);
  };
  const remove = (): void => {
    for (const [event, listener] of [...installed]) off(event, listener);
  };
  const guardedWrite = (end: ProcessEnd): void => {
    try {
      write(end);
    } catch (err) {
      safeLog('warn', `writing the reports at ${end} failed: ${(err as Error)?.message ?? String(err)}`);
    }
  };

  /**
   * Signals whose arrival the application's handler took over. Once its last listener for one is gone, it is
   * about to raise the signal again (Nest's `enableShutdownHooks()` does, after its close) or has given it its
   * default back: ours must go too. Node's signal watchers do not keep the event loop alive, so a signal
   * raised while ours alone listened could be lost in a loop that has just emptied, and the process would
   * exit 0 instead of dying by it.
   */
  const takenOver = new Set<EndSignal>();
  const onRemoved = ours((event: string | symbol, listener: Listener): void => {
    const signal = event as EndSignal;
    if (!takenOver.has(signal) || listener[OURS] === true || applicationListens(signal)) return;
    takenOver.delete(signal);
    guardedWrite(signal);
    off(signal, onSignal);
    if (takenOver.size === 0) off('removeListener', onRemoved);
  });

  // Node passes the signal's name.
  const onSignal = ours((signal: EndSignal): void => {
    if (applicationListens(signal)) {
      if (takenOver.size === 0) on('removeListener', onRemoved);
      takenOver.add(signal);
      return;
    }
    guardedWrite(signal);
    remove();
    try {
      process.kill(process.pid, signal);
    } catch (err) {
      // Windows cannot raise SIGHUP (ENOSYS): exit with the code Node's default handlers give (128 + n)
      // rather than stay alive.
      safeLog('warn', `could not raise ${signal} again (${(err as Error)?.message ?? String(err)}); exiting`);
      process.exit(128 + constants.signals[signal]);
    }
  });

  // Signals reach the main thread only; in a worker, process.kill(process.pid) would end the whole process.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { isMainThread } = require('node:worker_threads') as typeof import('node:worker_threads');
  if (isMainThread) for (const signal of SIGNALS) on(signal, onSignal);
  on(
    'beforeExit',
    ours(() => guardedWrite('beforeExit')),
  );
  on(
    'exit',
    ours(() => guardedWrite('exit')),
  );
  return remove;
}
