/**
 * V8's call sites of the current stack, for the adapters that ask who called them (who bound an InversifyJS
 * binding, which file applied `@Module()`). No stack text is formatted: that is most of what a stack costs.
 */

/**
 * A stack captured now and read later: V8 records the raw frames at capture and builds call sites only when
 * the stack is first read, with the `Error.prepareStackTrace` of that moment. Capturing costs a fraction of
 * reading (on InversifyJS's 1,000-binding start, reading at each value binding's `bind` was 7.8 M
 * instructions of Phase 1's start-up; docs/benchmarks.md), so an answer needed only after ready is captured
 * on the boot path and read there.
 */
export interface CapturedStack {
  readonly stack?: unknown;
}

/** Captures the frames of the code that called `below`, up to `limit` of them, for {@link readCapturedStack}. */
export function captureStack(below: Function, limit: number): CapturedStack {
  const holder: { stack?: unknown } = {};
  const previousLimit = Error.stackTraceLimit;
  try {
    // inside the try: an application that froze `Error` gets an empty capture, not a throw out of its `bind`
    Error.stackTraceLimit = limit;
    Error.captureStackTrace(holder, below);
  } catch {
    /* an empty capture reads as no call sites */
  } finally {
    if (Error.stackTraceLimit !== previousLimit) Error.stackTraceLimit = previousLimit;
  }
  return holder;
}

/** The call sites of a stack {@link captureStack} captured, innermost first; empty when it cannot be read. Once. */
export function readCapturedStack(captured: CapturedStack): NodeJS.CallSite[] {
  const prepare = Error.prepareStackTrace;
  try {
    // inside the try: this runs in the analysis at ready, which a frozen `Error` must not abort
    Error.prepareStackTrace = (_error, sites) => sites;
    const sites = captured.stack;
    return Array.isArray(sites) ? (sites as NodeJS.CallSite[]) : [];
  } catch {
    return [];
  } finally {
    if (Error.prepareStackTrace !== prepare) Error.prepareStackTrace = prepare;
  }
}

/**
 * Up to `limit` call sites, innermost first, of the code that called `below` (its own frame and those above
 * it are left out). Empty when the stack cannot be read. `Error.prepareStackTrace` and `Error.stackTraceLimit`
 * are left as they were.
 */
export function callSites(below: Function, limit: number): NodeJS.CallSite[] {
  return readCapturedStack(captureStack(below, limit));
}
