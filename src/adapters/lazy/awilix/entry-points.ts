/**
 * The web layer awilix applications pair with: awilix-express (and awilix-koa), whose controllers carry
 * awilix-router-core's route state. A class with routes is called by the framework, never a ghost candidate.
 */

/** awilix-router-core keeps a decorated class's routes under this symbol, on its prototype. */
const ROUTER_STATE = 'Router Config';

/** Why an awilix web layer calls into `cls` on its own: it is a controller with routes. */
export function awilixRouterEntryPoints(cls: unknown): string[] {
  if (typeof cls !== 'function') return [];
  const proto = (cls as { prototype?: object }).prototype;
  for (const holder of [proto, cls]) {
    if (typeof holder !== 'object' && typeof holder !== 'function') continue;
    if (holder === null || holder === undefined) continue;
    for (const key of Object.getOwnPropertySymbols(holder)) {
      if (key.description === ROUTER_STATE) return ['awilix-router-core routes'];
    }
  }
  return [];
}
