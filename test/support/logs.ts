import { setLogger, type DiagLogger } from '../../src/shared/logger';

/** Lines the package logged while a capture was installed. */
export interface CapturedLogs {
  /** Every line as `LEVEL message` (DEBUG, INFO, WARN, ERROR). */
  readonly lines: string[];
  /** The messages of WARN and ERROR lines: what tests usually assert on. */
  readonly warnings: string[];
  /** The logger that records into `lines` and `warnings`, for code that takes one directly. */
  readonly logger: DiagLogger;
  /** Puts the previous logger back. */
  restore(): void;
}

/** A recording logger, not installed. */
export function recordingLogger(): Omit<CapturedLogs, 'restore'> {
  const lines: string[] = [];
  const warnings: string[] = [];
  const line = (level: string, keep?: string[]) => (m: string) => {
    lines.push(`${level} ${m}`);
    keep?.push(m);
  };
  const logger: DiagLogger = {
    debug: line('DEBUG'),
    info: line('INFO'),
    warn: line('WARN', warnings),
    error: line('ERROR', warnings),
  };
  return { lines, warnings, logger };
}

/** Routes the package's log lines into memory until `restore()`. */
export function captureLogs(): CapturedLogs {
  const recorded = recordingLogger();
  const previous = setLogger(recorded.logger);
  return { ...recorded, restore: () => setLogger(previous) };
}

/** Runs `fn` with the package's log lines captured, and puts the logger back whatever happens. */
export function withCapturedLogs<T>(fn: () => T): { result: T; lines: string[]; warnings: string[] } {
  const capture = captureLogs();
  try {
    return { result: fn(), lines: capture.lines, warnings: capture.warnings };
  } finally {
    capture.restore();
  }
}
