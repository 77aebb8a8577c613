/**
 * "Ready" for the lazy containers (InversifyJS, tsyringe, awilix), which have no start-up of their own: the
 * moment the process's first HTTP server starts listening, or the application's explicit {@link diagReady},
 * whichever comes first. Framework-neutral: adapters subscribe; nothing here knows a container.
 */
import http from 'node:http';
import { isOwnServer } from '../../shared/own-servers';
import https from 'node:https';
import { Server } from 'node:net';

import { safeLog } from '../../shared/logger';
import { markReady } from '../../shared/boot-clock';

type Listener = (why: ReadyCause) => void;

/** What made the process ready. */
export type ReadyCause = 'listening' | 'diagReady';

let cause: ReadyCause | undefined;
const listeners = new Set<Listener>();
let originalListen: typeof Server.prototype.listen | undefined;
let wrapper: typeof Server.prototype.listen | undefined;
let watching = false;

/**
 * Tells the lazy-container adapters that the application is ready: its bindings never resolved so far become
 * the Phase 1 ghost candidates, written to `diag-report.json`. For processes that serve no HTTP (workers,
 * consumers), call it once the application has started; in a web application the first HTTP server's
 * `listening` does it. Later calls do nothing.
 */
export function diagReady(): void {
  fire('diagReady');
}

/** Whether (and why) the process is ready; undefined before. */
export function readyCause(): ReadyCause | undefined {
  return cause;
}

/**
 * Calls `listener` once, when the process becomes ready, or soon (on the next turn) if it already is.
 * Returns the function that unsubscribes it.
 */
export function whenReady(listener: Listener): () => void {
  if (cause !== undefined) {
    const c = cause;
    setImmediate(() => run(listener, c));
    return () => undefined;
  }
  listeners.add(listener);
  watchFirstListen();
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) unwatchFirstListen();
  };
}

function fire(why: ReadyCause): void {
  if (cause !== undefined) return;
  cause = why;
  // The start-up timeline ends here for a lazy container's process (docs/startup.md).
  markReady(why);
  unwatchFirstListen();
  const pending = [...listeners];
  listeners.clear();
  for (const l of pending) run(l, why);
}

function run(listener: Listener, why: ReadyCause): void {
  try {
    listener(why);
  } catch (err) {
    safeLog('warn', `ready listener failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function isHttpServer(server: unknown): boolean {
  return server instanceof http.Server || server instanceof https.Server;
}

/**
 * Wraps `Server.prototype.listen` until the first HTTP server listens: that server's `listening` event
 * fires ready. Taken off again at ready, or when nobody waits any more, so a server started later calls
 * Node's own method.
 */
function watchFirstListen(): void {
  if (watching) return;
  watching = true;
  if (wrapper !== undefined) return; // still installed under someone else's wrapper: active again
  const original = Server.prototype.listen;
  originalListen = original;
  const onListening = (): void => fire('listening');
  wrapper = function listen(this: Server, ...args: unknown[]) {
    if (watching && !isOwnServer(this) && isHttpServer(this)) this.once('listening', onListening);
    return Reflect.apply(original, this, args) as Server;
  } as typeof original;
  Server.prototype.listen = wrapper;
}

function unwatchFirstListen(): void {
  watching = false;
  // Another library may have wrapped listen over ours since: then ours stays beneath, inert, rather than
  // taking theirs off with it.
  if (wrapper !== undefined && Server.prototype.listen === wrapper) {
    Server.prototype.listen = originalListen!;
    wrapper = undefined;
    originalListen = undefined;
  }
}
