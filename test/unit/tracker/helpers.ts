import { setLogger, type DiagLogger } from '../../../src/logger';

/** Captures the package's log lines for the duration of `fn`. */
export function captureLogs<T>(fn: () => T): { result: T; warnings: string[] } {
  const warnings: string[] = [];
  const sink: DiagLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (m) => warnings.push(m),
    error: (m) => warnings.push(m),
  };
  const previous = setLogger(sink);
  try {
    return { result: fn(), warnings };
  } finally {
    setLogger(previous);
  }
}
