/**
 * Reads of a bean's value that run none of the application's code: no getter, no Proxy trap. The analysis looks
 * at every instance in the container after start-up, and a value may be a Proxy whose traps throw or look up a
 * request's context (nestjs-cls proxy providers throw for any property they do not expect before a request), or
 * an object whose getters connect, count or throw. What the application never read, the analysis must not read
 * either: a read can fail, and it can change what the value does next.
 */
import { types } from 'node:util';

/** Whether the analysis may look into `value`: an object or a function that is not a Proxy. */
export function inspectable(value: unknown): value is object {
  return ((typeof value === 'object' && value !== null) || typeof value === 'function') && !types.isProxy(value);
}

/**
 * `value[key]` when a data property holds it on `value` or its prototype chain; undefined when the first
 * property found is a getter, or a Proxy stands in the way.
 */
export function dataProperty(value: unknown, key: string): unknown {
  for (let o: unknown = value; inspectable(o); o = Object.getPrototypeOf(o)) {
    const d = Object.getOwnPropertyDescriptor(o, key);
    if (d !== undefined) return 'value' in d ? d.value : undefined;
  }
  return undefined;
}
