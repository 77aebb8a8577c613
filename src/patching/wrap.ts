/**
 * Method wrapping with the markers OpenTelemetry's shimmer sets (`__original`, `__unwrap`, `__wrapped`), so that
 * `isWrapped()` from `@opentelemetry/instrumentation` and other instrumentations recognise these patches and can
 * stack on them. Written here because the instrumentation no longer extends `InstrumentationBase` (whose
 * require-in-the-middle hook is what start-up paid for; see `module-hooks.ts`).
 */

import { isWrapped } from '@opentelemetry/instrumentation';

type Target = Record<PropertyKey, unknown>;

/** Redefines a property keeping its enumerability, as an assignment would (class methods stay non-enumerable). */
function define(target: object, name: PropertyKey, value: unknown): void {
  const enumerable = Object.prototype.propertyIsEnumerable.call(target, name);
  Object.defineProperty(target, name, { configurable: true, enumerable, writable: true, value });
}

function mark(fn: Function, name: string, value: unknown): void {
  Object.defineProperty(fn, name, { configurable: true, enumerable: false, writable: true, value });
}

/**
 * Replaces `target[name]` with `wrapper(original)`. A method already wrapped this way is unwrapped first, so a
 * second enable never stacks two wrappers. Does nothing (and says why) when there is no function to wrap.
 */
export function wrapMethod(target: object, name: string, wrapper: (original: never) => unknown): void {
  const t = target as Target;
  if (isWrapped(t[name])) unwrapMethod(target, name);
  const original = t[name];
  if (typeof original !== 'function') throw new TypeError(`no function ${name} to wrap`);
  const wrapped = wrapper(original as never);
  if (typeof wrapped !== 'function') throw new TypeError(`the wrapper of ${name} returned no function`);
  mark(wrapped, '__original', original);
  mark(wrapped, '__unwrap', () => {
    // Only if nothing replaced it since: a later wrapper on top keeps working, pointing at ours.
    if (t[name] === wrapped) define(target, name, original);
  });
  mark(wrapped, '__wrapped', true);
  define(target, name, wrapped);
}

/** Puts the original back when `target[name]` is a wrapper with the markers; otherwise leaves it alone. */
export function unwrapMethod(target: object, name: string): void {
  const current = (target as Target)[name];
  if (isWrapped(current)) current.__unwrap();
}
