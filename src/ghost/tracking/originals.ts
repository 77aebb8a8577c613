/**
 * Which first-touch wrapper stands for which method: every wrapper first-touch.ts makes, to its original (a
 * method found already wrapped is wrapped at its original). Those a site put on a prototype are kept apart from
 * those swapped into an object's own properties, so that a site finds its own wrappers on its prototype without
 * keeping a list of them. Apart from the mechanism so that an analysis that only asks (the passport adapter, in
 * every phase) does not load Phase 2's largest module when tracking is off.
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
