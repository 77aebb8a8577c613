/**
 * The web layers InversifyJS applications pair with: inversify-express-utils (`@controller()`) and the
 * @inversifyjs/http-* packages (`@Controller()`), which resolve their controllers from the container per request,
 * and the error filters of the latter (`@CatchError()`, @inversifyjs/framework-core), which they resolve when an
 * error of theirs is thrown. Each marks its class with reflect-metadata under a key of its own; such a class is
 * called by the framework, never a ghost candidate (an outside trial's error filters, never triggered before
 * ready, read never resolved).
 */
type Reflector = { getOwnMetadataKeys?(target: object): unknown[] };

/** Why an InversifyJS web layer calls into `cls` on its own: one of its controllers, or an error filter. */
export function inversifyEntryPoints(cls: unknown): string[] {
  const r = Reflect as Reflector;
  if (typeof cls !== 'function' || typeof r.getOwnMetadataKeys !== 'function') return [];
  for (const key of r.getOwnMetadataKeys(cls)) {
    const name = typeof key === 'symbol' ? (key.description ?? '') : String(key);
    if (!/inversify/i.test(name)) continue;
    const library = name
      .split(/[:/]/)
      .slice(0, name.startsWith('@') ? 2 : 1)
      .join('/');
    if (/controller/i.test(name)) return [`${library} controller`];
    if (/catchError/i.test(name)) return [`${library} @CatchError`];
  }
  return [];
}
