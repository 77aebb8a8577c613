/**
 * The package's own logger. Diagnostics that a user must see (the native library's INFO lines, configuration
 * warnings, a report that could not be written) go through here rather than through OpenTelemetry's `diag`,
 * which is silent unless the user installs a DiagLogger.
 */
export interface DiagLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** The console logger's threshold (`DIAG_LOG_LEVEL`): lines below it are dropped; `silent` drops all. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Writes to the console as a framework's own log lines do: INFO and DEBUG to stdout, WARN and ERROR to stderr. */
export class ConsoleLogger implements DiagLogger {
  constructor(private readonly level: LogLevel = 'info') {}

  private enabled(level: LogLevel): boolean {
    return LEVELS[level] >= LEVELS[this.level];
  }

  debug(message: string): void {
    if (this.enabled('debug')) console.log(`[diag] DEBUG ${message}`);
  }
  info(message: string): void {
    if (this.enabled('info')) console.log(`[diag] INFO ${message}`);
  }
  warn(message: string): void {
    if (this.enabled('warn')) console.warn(`[diag] WARN ${message}`);
  }
  error(message: string): void {
    if (this.enabled('error')) console.error(`[diag] ERROR ${message}`);
  }
}

function levelFromEnv(): LogLevel {
  const raw = process.env.DIAG_LOG_LEVEL?.trim().toLowerCase();
  return raw !== undefined && raw in LEVELS ? (raw as LogLevel) : 'info';
}

let current: DiagLogger = new ConsoleLogger(levelFromEnv());

/** The logger every module of the package writes to. */
export function logger(): DiagLogger {
  return current;
}

/**
 * Routes the package's log lines to `next` (pino, winston, Nest's Logger all fit), or silences them with
 * `setLogger(null)`. Returns the logger that was in place, so a test or a host can put it back.
 */
export function setLogger(next: DiagLogger | null): DiagLogger {
  const previous = current;
  current = next ?? new ConsoleLogger('silent');
  return previous;
}

/** Never lets a throwing user logger reach the code that was only trying to report something. */
export function safeLog(level: keyof DiagLogger, message: string): void {
  try {
    current[level](message);
  } catch {
    /* a broken logger must not break the host */
  }
}
