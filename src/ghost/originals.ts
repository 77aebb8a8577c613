/**
 * Which first-touch wrapper stands for which method. Apart from the mechanism (first-touch.ts) so that an
 * analysis that only asks (the passport adapter, in every phase) does not load Phase 2's largest module when
 * tracking is off.
 */

/** Wrappers put on a class prototype (a site), to the methods they stand for. */
export const siteOriginals = new WeakMap<Function, Function>();
/** Wrappers swapped in for an object's own function-valued properties, to the functions they stand for. */
export const ownOriginals = new WeakMap<Function, Function>();

/**
 * The method a first-touch wrapper stands for, or `fn` itself. For analyses that must call a tracked bean's
 * method without that call counting as the application's touch.
 */
export function originalOf<T extends Function>(fn: T): T {
  return ((siteOriginals.get(fn) ?? ownOriginals.get(fn)) as T | undefined) ?? fn;
}
