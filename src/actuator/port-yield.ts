/**
 * The actuator never takes a port the application wants (issue #44): it starts when the instrumentation is
 * enabled, before the application listens, and its default port (8081) is many applications' own. A real
 * monorepo's API, told to listen on 8081, failed with EADDRINUSE and its health route answered the actuator's 404.
 *
 * While the actuator listens, `net.Server.prototype.listen` is wrapped: a server of the application's asking for
 * the actuator's port gets it. The actuator closes its listening socket first, on the same turn (closing a
 * listening handle frees the port at once; its open connections finish as they would), and the application's
 * own `listen` then runs unchanged, with its arguments, its callback and its errors. The actuator listens again
 * on another port and says so once. Every other `listen` passes straight through.
 */
import net from 'node:net';
import { isOwnServer } from '../shared/own-servers';

type Listen = (this: net.Server, ...args: unknown[]) => net.Server;

/** The actuator's side of the bargain: the port it holds now, and what it does when asked to give it up. */
export interface PortHolder {
  /** The port the actuator listens on; 0 while it listens on none. */
  port(): number;
  /** Gives the port up, synchronously: the caller's `listen` comes right after. */
  giveWay(port: number): void;
}

const holders = new Set<PortHolder>();
let original: Listen | undefined;
let wrapper: Listen | undefined;

/**
 * The port a `listen` call asks for: `listen(port, …)`, `listen('8081', …)`, `listen({ port })`; undefined for a
 * pipe, a handle, a file descriptor or port 0 (any free port: no clash possible).
 */
export function requestedPort(args: readonly unknown[]): number | undefined {
  const first = args[0];
  const raw =
    first !== null && typeof first === 'object' && !Array.isArray(first) ? (first as { port?: unknown }).port : first;
  const port = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  return Number.isInteger(port) && port > 0 && port < 65_536 ? port : undefined;
}

/** Starts watching the application's `listen` calls for `holder`'s port; returns what stops it. */
export function yieldPortToApplication(holder: PortHolder): () => void {
  holders.add(holder);
  if (original === undefined) {
    const listen = net.Server.prototype.listen as unknown as Listen;
    original = listen;
    wrapper = function diagActuatorPortYield(this: net.Server, ...args: unknown[]) {
      try {
        if (!isOwnServer(this)) {
          const wanted = requestedPort(args);
          if (wanted !== undefined) for (const h of holders) if (h.port() === wanted) h.giveWay(wanted);
        }
      } catch {
        /* the application's listen runs whatever happened here */
      }
      return listen.apply(this, args);
    };
    net.Server.prototype.listen = wrapper as unknown as typeof net.Server.prototype.listen;
  }
  return () => {
    holders.delete(holder);
    // Put back only while ours is the one in place: someone who wrapped it since keeps theirs (ours then passes
    // every call through, holding no port).
    if (holders.size === 0 && original !== undefined && (net.Server.prototype.listen as unknown) === wrapper) {
      net.Server.prototype.listen = original as unknown as typeof net.Server.prototype.listen;
      original = wrapper = undefined;
    }
  };
}
