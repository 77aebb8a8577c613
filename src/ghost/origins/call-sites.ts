/**
 * V8's call sites of the current stack, for the adapters that ask who called them (who bound an InversifyJS
 * binding, which file applied `@Module()`). No stack text is formatted: that is most of what a stack costs.
 */

/**
 * Up to `limit` call sites, innermost first, of the code that called `below` (its own frame and those above
 * it are left out). Empty when the stack cannot be read. `Error.prepareStackTrace` and `Error.stackTraceLimit`
 * are left as they were.
 */
export function callSites(below: Function, limit: number): NodeJS.CallSite[] {
  const holder: { stack?: unknown } = {};
  const previousLimit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  Error.stackTraceLimit = limit;
  Error.prepareStackTrace = (_error, sites) => sites;
  try {
    Error.captureStackTrace(holder, below);
    return Array.isArray(holder.stack) ? (holder.stack as NodeJS.CallSite[]) : [];
  } catch {
    return [];
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = previousLimit;
  }
}
