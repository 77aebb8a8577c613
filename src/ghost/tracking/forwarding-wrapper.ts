/**
 * The wrapper that stands for one method while its first call is watched: the one function of the package that
 * can sit in an application's stack trace.
 *
 * A caller that captured a method before its first call (a router stores `instance[method]` at start-up; so do
 * `@Cron`, `@OnEvent` and `bean.m.bind(bean)`) keeps this wrapper for good, and every error its method throws
 * then shows one frame of ours below the application's own: `at Controller.method (…/diag-instrumentation/dist/
 * ghost/tracking/forwarding-wrapper.js:…)`. That frame cannot be avoided at no cost. The wrapper is a JavaScript
 * function, and V8 shows every user-land JavaScript frame; the only callable that can stop being one after the
 * touch is a Proxy of the original with its `apply` trap deleted, and TurboFan never inlines a call through a
 * Proxy (a Proxy per bean, the ES Proxy column of docs/tracking.md, costs 21 ns against 0.43 for a method bound
 * at start-up; a trapless Proxy of a function was not timed here), where issue #43 allows every call shape 1.00x
 * after the first call. Its name must stay the method's (`fn.name` is
 * what `context.getHandler().name` and the frame both read), so the file names it: this module holds nothing
 * but the wrapper, and the frame reads as a forwarding call of this package's, on one line of its own, one
 * frame per captured wrapper (and one per wrapper crossed on a method's very first call, when the touch is
 * seen). The bookkeeping a touch does (first-touch.ts) runs before the forward and is never on the stack.
 */
import { types } from 'node:util';
import { copyOwnMetadata, type MetadataApi } from '../../shared/reflect-metadata';

/**
 * Whether `fn` can be called with `new`. Methods, arrows and async functions have no own `prototype`;
 * generators have one but are not constructors. Only bound functions need the exact (and, because it throws,
 * slow: microseconds) test.
 */
function isConstructor(fn: Function): boolean {
  if (Object.prototype.hasOwnProperty.call(fn, 'prototype')) return !types.isGeneratorFunction(fn);
  if (!fn.name.startsWith('bound ')) return false;
  try {
    // Only reads fn.prototype, never calls fn.
    Reflect.construct(String, [], fn);
    return true;
  } catch {
    return false;
  }
}

/**
 * What a wrapper consults on each call: a field that is `false` once nothing is left to observe (the whole
 * steady-state cost of a captured wrapper) and the call that observes.
 */
export interface Gate {
  armed: boolean;
  enter(receiver: unknown, key: string): void;
}

/** Function own properties that `defineProperty` must not copy onto a wrapper (or cannot). */
const FUNCTION_INTRINSICS = new Set<string | symbol>(['length', 'name', 'prototype', 'arguments', 'caller']);

/**
 * Builds the wrapper for one method. The body is the whole steady-state cost of a captured callback: one
 * property read and a forwarding `apply` that returns exactly what the original returned (same promise, same
 * generator object), so `typeof`, `await` and `for await` see no difference.
 */
export function makeWrapper(
  original: Function,
  key: string,
  gate: Gate,
  meta: MetadataApi | undefined,
  registry: WeakMap<Function, Function>,
): Function {
  let wrapper: Function;
  if (isConstructor(original)) {
    // Old-style `function` methods and classes stored as properties can be called with `new`.
    const ctorWrapper = function (this: unknown): unknown {
      if (gate.armed) gate.enter(this, key);
      return new.target === undefined
        ? Reflect.apply(original, this, arguments)
        : Reflect.construct(original, arguments, new.target === ctorWrapper ? original : new.target);
    };
    Object.defineProperty(ctorWrapper, 'prototype', { value: (original as { prototype?: unknown }).prototype });
    wrapper = ctorWrapper;
  } else {
    wrapper = methodWrapper(original, key, gate);
  }
  // `fn.constructor === AsyncFunction`, `Object.prototype.toString` tags and inherited metadata follow the
  // original's [[Prototype]].
  const fnProto = Object.getPrototypeOf(original) as object | null;
  if (Object.getPrototypeOf(wrapper) !== fnProto) Object.setPrototypeOf(wrapper, fnProto);
  const keys = Reflect.ownKeys(original);
  // A method as a class body defines it has these two, and the literal gave the wrapper both.
  const plainMethod = keys.length === 2 && keys[0] === 'length' && keys[1] === 'name';
  if (
    !plainMethod ||
    Reflect.get(wrapper, 'name') !== Reflect.get(original, 'name') ||
    wrapper.length !== original.length
  ) {
    copyOwnProperties(original, wrapper, keys);
  }
  if (meta !== undefined) copyOwnMetadata(meta, original, wrapper);
  registry.set(wrapper, original);
  return wrapper;
}

/** Carries `original`'s own properties (`keys`) over to its wrapper, but for those a function has of its own. */
function copyOwnProperties(original: Function, wrapper: Function, keys: ReadonlyArray<string | symbol>): void {
  for (const ownKey of keys) {
    if (ownKey === 'name' || ownKey === 'length') {
      // Compared by value, without allocating descriptors: the computed key already gave the wrapper its
      // name, and a method without parameters its length. (Attributes redefined on the original alone, with
      // the same value, are not carried over.)
      const value: unknown = Reflect.get(original, ownKey);
      if (Reflect.get(wrapper, ownKey) !== value)
        Object.defineProperty(wrapper, ownKey, Object.getOwnPropertyDescriptor(original, ownKey)!);
    } else if (!FUNCTION_INTRINSICS.has(ownKey)) {
      // Some libraries mark handlers with plain properties instead of metadata.
      const desc = Object.getOwnPropertyDescriptor(original, ownKey);
      if (desc !== undefined) Object.defineProperty(wrapper, ownKey, desc);
    }
  }
}

/**
 * A method shorthand: like the class methods it stands for, it has no `prototype` and cannot be `new`-ed. The
 * computed key names it natively, and it declares as many parameters as the original, so that `length` is
 * its own too: a function whose `name` or `length` was redefined gets a hidden class of its own, which V8
 * calls through a slower path from every call site that does not inline it (Nest's handler invoker, a cron
 * tick): +8-10 ns per call on `bench:tracker` (captured), about what the forwarding itself costs there.
 * Originals with more parameters get their `length` redefined (see `makeWrapper`).
 */
function methodWrapper(original: Function, key: string, gate: Gate): Function {
  const name = typeof original.name === 'string' ? original.name : '';
  // One literal per arity: the parameters are there for `length` only, the call forwards `arguments`.
  switch (original.length) {
    case 1:
      return {
        [name](this: unknown, _1: unknown): unknown {
          if (gate.armed) gate.enter(this, key);
          return Reflect.apply(original, this, arguments);
        },
      }[name]!;
    case 2:
      return {
        [name](this: unknown, _1: unknown, _2: unknown): unknown {
          if (gate.armed) gate.enter(this, key);
          return Reflect.apply(original, this, arguments);
        },
      }[name]!;
    case 3:
      return {
        [name](this: unknown, _1: unknown, _2: unknown, _3: unknown): unknown {
          if (gate.armed) gate.enter(this, key);
          return Reflect.apply(original, this, arguments);
        },
      }[name]!;
    case 4:
      return {
        [name](this: unknown, _1: unknown, _2: unknown, _3: unknown, _4: unknown): unknown {
          if (gate.armed) gate.enter(this, key);
          return Reflect.apply(original, this, arguments);
        },
      }[name]!;
    default:
      return {
        [name](this: unknown): unknown {
          if (gate.armed) gate.enter(this, key);
          return Reflect.apply(original, this, arguments);
        },
      }[name]!;
  }
}
