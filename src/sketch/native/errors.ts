import type { ErrorCode } from '../../shared/error-codes';
import { DiagError } from '../../shared/errors';

/** Which cause the loader detected. Each maps to one stable `code`. */
export type UnsatisfiedLinkReason =
  | 'NO_BINARY'
  | 'CHECKSUM_MISMATCH'
  | 'WRONG_ARCH'
  | 'WRONG_LIBC'
  | 'NOEXEC_TEMP'
  | 'ADDONS_DISABLED'
  | 'TEMP_NOT_WRITABLE'
  | 'ABI_MISMATCH'
  | 'LOAD_FAILED';

/** Stable codes, one per reason, so callers can branch without parsing messages. */
export const UNSATISFIED_LINK_CODES: Readonly<Record<UnsatisfiedLinkReason, ErrorCode>> = {
  NO_BINARY: 'ERR_SKETCH_NATIVE_NO_BINARY',
  CHECKSUM_MISMATCH: 'ERR_SKETCH_NATIVE_CHECKSUM',
  WRONG_ARCH: 'ERR_SKETCH_NATIVE_WRONG_ARCH',
  WRONG_LIBC: 'ERR_SKETCH_NATIVE_WRONG_LIBC',
  NOEXEC_TEMP: 'ERR_SKETCH_NATIVE_NOEXEC_TEMP',
  ADDONS_DISABLED: 'ERR_SKETCH_NATIVE_ADDONS_DISABLED',
  TEMP_NOT_WRITABLE: 'ERR_SKETCH_NATIVE_TEMP_NOT_WRITABLE',
  ABI_MISMATCH: 'ERR_SKETCH_NATIVE_ABI_MISMATCH',
  LOAD_FAILED: 'ERR_SKETCH_NATIVE_LOAD_FAILED',
};

/**
 * The native sketch library could not be loaded. Named after Java's error for the same situation; the
 * message states the cause the loader detected and how to fix it, `reason` and `code` say it for code.
 */
export class UnsatisfiedLinkError extends DiagError {
  /** The detected cause. */
  readonly reason: UnsatisfiedLinkReason;
  /** Every library path the loader tried, in order. */
  readonly pathsTried: readonly string[];

  constructor(reason: UnsatisfiedLinkReason, message: string, pathsTried: readonly string[], cause?: unknown) {
    const paths = pathsTried.length > 0 ? ` Paths tried: ${pathsTried.join(', ')}.` : '';
    super(UNSATISFIED_LINK_CODES[reason], `${message}${paths}`, cause === undefined ? undefined : { cause });
    this.reason = reason;
    this.pathsTried = [...pathsTried];
  }
}
