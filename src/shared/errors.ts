import type { ErrorCode } from './error-codes';

/**
 * Base class of every error this package throws on purpose. `code` (one of ERROR_CODES, documented in
 * docs/errors.md) is stable across releases, so callers can branch on it instead of on message text.
 */
export class DiagError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * What to print of something thrown: an error's message, or the value as a string (`throw 'text'`), never itself a
 * throw (a value whose `toString` throws). For log lines and reports, where a fault of ours is said, not raised.
 */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  try {
    return String(err);
  } catch {
    return 'unprintable error';
  }
}
