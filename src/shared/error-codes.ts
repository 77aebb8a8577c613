/**
 * Every code this package's errors carry, once, in Node's style (`ERR_<AREA>_<WHAT>`), each with the one line a
 * user reads to fix it. docs/errors.md documents each (test/unit/error-codes.test.ts keeps the two equal).
 * A code is part of the API: a 429 body, a log line or a `catch` may branch on it, so none is renamed lightly.
 */
export const ERROR_CODES = {
  ERR_ACTUATOR_LISTEN_FAILED:
    'The actuator could not listen (port in use, address not on this machine, permission): set management.server.port to a free port (0: any) or management.server.address.',
  ERR_REDIS_URL:
    'A Redis URL setting (diag.sketch.redis.url, diag.ghost-tracking.ledger.url) is not redis://[user:password@]host[:port][/db] or rediss://…: fix it; the feature stays off meanwhile.',
  ERR_LEDGER_UNREADABLE:
    'The ghost ledger could not be read (Redis refused, timed out, or the password is wrong): check the URL and that the Redis user may read the diag:ledger:* keys.',
  ERR_SKETCH_THRESHOLD:
    "A call was over its sketch decorator's threshold and was not run: the client retries after retryAfterSeconds; raise the threshold if the limit is too tight.",
  ERR_SKETCH_KEY:
    "A sketch decorator's key function threw or returned no usable key under onKeyError: 'reject': fix the key function for that request shape.",
  ERR_SKETCH_CLOSED: 'A sketch was used after close(): stop using it, or take a live one from the registry.',
  ERR_SKETCH_CONFIG: 'Invalid sketch shape or options: the message names the option and the range it accepts.',
  ERR_SKETCH_ALLOC:
    'The native memory for a sketch could not be allocated: lower memoryBytes / width × depth, or give the process more memory.',
  ERR_SKETCH_NATIVE_NO_BINARY:
    'No native sketch library for this platform (or DIAG_SKETCH_LIBRARY unreadable): use a supported platform or build one and point DIAG_SKETCH_LIBRARY at it.',
  ERR_SKETCH_NATIVE_CHECKSUM:
    'The packaged native library or its temp copy differs from SHA256SUMS: reinstall the package.',
  ERR_SKETCH_NATIVE_WRONG_ARCH:
    'The native library is for another OS or CPU: install the package on the machine that runs it.',
  ERR_SKETCH_NATIVE_WRONG_LIBC:
    'The native library links the other libc (musl vs glibc): install the package on the machine that runs it.',
  ERR_SKETCH_NATIVE_NOEXEC_TEMP:
    'The temp dir is mounted noexec: set DIAG_SKETCH_NO_EXTRACT=1 to load the packaged library in place, or TMPDIR to an executable mount.',
  ERR_SKETCH_NATIVE_ADDONS_DISABLED: "Node's permission model forbids native code: add --allow-addons.",
  ERR_SKETCH_NATIVE_TEMP_NOT_WRITABLE:
    'The native library could not be copied to the temp dir: make TMPDIR writable, or set DIAG_SKETCH_NO_EXTRACT=1.',
  ERR_SKETCH_NATIVE_ABI_MISMATCH:
    "The native library's ABI version or symbols are not this package's: DIAG_SKETCH_LIBRARY points at another build; rebuild it from native/.",
  ERR_SKETCH_NATIVE_LOAD_FAILED:
    'The native library failed to load for another reason: the message lists the usual causes.',
} as const;

/** A code of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;
