import { safeLog } from '../../shared/logger';
import { connectIORedis, parseRedisUrl, type RedisPipelineClient, type RedisTarget } from '../../shared/redis';
import type { EvidenceThresholds } from '../verdicts';
import { LedgerWriter } from './writer';

/**
 * The ghost ledger (issue #36): the touches of every replica, restart and deploy of a service meet in the Redis
 * the team already runs, so that a verdict rests on weeks of production instead of one process's run. Required
 * only when `diag.ghost-tracking.ledger.url` is set.
 */
export { LedgerWriter } from './writer';
export { readLedger, LedgerReadError } from './reader';
export {
  thisProcessLedger,
  type JudgedThresholds,
  type LedgerAnswer,
  type LedgerBean,
  type LedgerProvenance,
} from './answer';
export { applicationBeans, withMembers } from './inventory';
export { ledgerIdentity, type ServiceIdentity } from './identity';
import { ledgerIdentity, type ServiceIdentity } from './identity';

/** The ledger settings (`diag.ghost-tracking.ledger.*`) a writer needs. */
export interface LedgerWriterSettings {
  readonly url?: string;
  readonly service?: string;
  readonly pushIntervalMs: number;
  readonly heartbeatIntervalMs: number;
  readonly retentionDays: number;
}

/** A connection to the ledger's Redis, or why there is none (a WARN already logged). */
export function connectLedger(
  url: string,
): { client: RedisPipelineClient; target: RedisTarget; connectionError: () => Error | undefined } | undefined {
  let target: RedisTarget;
  try {
    target = parseRedisUrl(url);
  } catch (err) {
    safeLog(
      'warn',
      `ignoring diag.ghost-tracking.ledger.url (DIAG_GHOST_TRACKING_LEDGER_URL): ${(err as Error).message}; the ghost ledger is off`,
    );
    return undefined;
  }
  try {
    // A round left unanswered this long is given up and sent again (it is idempotent); the outage is said sooner.
    let lastError: Error | undefined;
    const client = connectIORedis(target, 30_000, (err) => {
      lastError = err;
      safeLog('debug', `ghost ledger connection to ${target.address}: ${target.redact(err.message)}`);
    });
    return { client, target, connectionError: () => lastError };
  } catch (err) {
    const missing = (err as { code?: string }).code === 'MODULE_NOT_FOUND';
    safeLog(
      'warn',
      missing
        ? 'diag.ghost-tracking.ledger.url is set but ioredis is not installed (npm install ioredis); the ghost ledger is off'
        : `could not create the Redis client for ${target.address}: ${target.redact((err as Error).message)}; the ghost ledger is off`,
    );
    return undefined;
  }
}

/**
 * The writer the settings ask for, or undefined (with one WARN saying why) when the URL is unusable, ioredis is
 * missing, or no service name is known.
 */
export function startLedgerWriter(
  settings: LedgerWriterSettings,
  tracking: boolean,
  resource: ServiceIdentity | undefined,
  /** The thresholds this process's settings judge by: stated in the ledger for every reader. */
  thresholds?: EvidenceThresholds,
): LedgerWriter | undefined {
  if (settings.url === undefined) return undefined;
  const identity = ledgerIdentity(settings.service, resource);
  if (identity.serviceName === undefined) {
    safeLog(
      'warn',
      "diag.ghost-tracking.ledger.url is set but this process names no service: set OTEL_SERVICE_NAME (or the SDK resource's service.name) or diag.ghost-tracking.ledger.service (DIAG_GHOST_TRACKING_LEDGER_SERVICE); the ghost ledger is off",
    );
    return undefined;
  }
  const connection = connectLedger(settings.url);
  if (!connection) return undefined;
  return new LedgerWriter({
    client: connection.client,
    address: connection.target.address,
    redact: connection.target.redact,
    service: identity.serviceName,
    ...(identity.serviceVersion !== undefined ? { serviceVersion: identity.serviceVersion } : {}),
    tracking,
    pushIntervalMs: settings.pushIntervalMs,
    heartbeatIntervalMs: settings.heartbeatIntervalMs,
    retentionDays: settings.retentionDays,
    ...(thresholds ? { thresholds } : {}),
    // An outage is said after two rounds without an answer, 5 s at most (the default round is 5 s).
    timeoutMs: Math.min(5_000, Math.max(1_000, 2 * settings.pushIntervalMs)),
    ownsClient: true,
    connectionError: connection.connectionError,
  });
}
