import type { Server } from 'node:net';

/**
 * This package's own servers (the actuator). A lazy container is ready when the application's first server
 * listens, so the actuator marks its server here and the readiness watch passes it by: neither imports the
 * other.
 */
const own = new WeakSet<Server>();

/** Marks one of this package's own servers: its listening does not make the application ready. */
export function markOwnServer(server: Server): void {
  own.add(server);
}

export function isOwnServer(server: Server): boolean {
  return own.has(server);
}
