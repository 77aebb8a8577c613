/**
 * Base class of every error this package throws on purpose. `code` is stable across releases, so callers
 * can branch on it instead of on message text.
 */
export class DiagError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}
