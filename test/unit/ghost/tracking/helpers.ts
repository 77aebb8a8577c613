import { withCapturedLogs } from '../../../support/logs';

/** Captures the package's log lines for the duration of `fn`. */
export function captureLogs<T>(fn: () => T): { result: T; warnings: string[] } {
  return withCapturedLogs(fn);
}
