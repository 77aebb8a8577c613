/**
 * What went wrong with the ledger's Redis, in a few words a person can act on, to follow "Redis at
 * redis://host:port": the writer's outage line and the reader's error (the CLI, `{base}/diag/ledger`) say it alike.
 * ioredis's own "Reached the max retries per request limit … Refer to maxRetriesPerRequest" only says that the
 * connection failed: the socket's error that came first (`connectionError`) is named instead.
 */
export function describeRedisFailure(
  err: unknown,
  connectionError: Error | undefined,
  doing: 'write' | 'read' = 'write',
): string {
  let message = err instanceof Error ? err.message : String(err);
  // ioredis's "Reached the max retries per request limit" only says the connection failed: its own error came first.
  if (/max retries per request/i.test(message)) message = connectionError?.message ?? 'no connection';
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(message)) {
    return doing === 'write'
      ? `refused the credentials in diag.ghost-tracking.ledger.url (${message}); nothing is written until they are right`
      : `refused the credentials in the ledger's URL (${message}); check the user and password in it`;
  }
  if (/NOPERM/i.test(message)) {
    return doing === 'write'
      ? `refused a command to this Redis user (${message}); the user needs read, write and scripting on diag:ledger:* (docs/ledger.md)`
      : `refused a command to this Redis user (${message}); reading needs +@read on diag:ledger:* (docs/ledger.md)`;
  }
  if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|Connection is closed|no connection/i.test(message)) {
    return doing === 'write'
      ? `is not reachable (${message})`
      : `is not reachable (${message}); check that it runs and that the ledger's URL (DIAG_GHOST_TRACKING_LEDGER_URL) names it`;
  }
  return `refused the ${doing} (${message})`;
}
