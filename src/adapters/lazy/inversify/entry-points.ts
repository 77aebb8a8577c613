/**
 * The web layers InversifyJS applications pair with: inversify-express-utils (`@controller()`) and the
 * @inversifyjs/http-* packages (`@Controller()`), which resolve their controllers from the container per request.
 * Both mark a controller class with reflect-metadata under a key of their own; a controller is called by the
 * framework, never a ghost candidate.
 */
type Reflector = { getOwnMetadataKeys?(target: object): unknown[] };

/** Why an InversifyJS web layer calls into `cls` on its own: it is one of its controllers. */
export function inversifyEntryPoints(cls: unknown): string[] {
  const r = Reflect as Reflector;
  if (typeof cls !== 'function' || typeof r.getOwnMetadataKeys !== 'function') return [];
  for (const key of r.getOwnMetadataKeys(cls)) {
    const name = typeof key === 'symbol' ? (key.description ?? '') : String(key);
    if (/inversify/i.test(name) && /controller/i.test(name)) return [`${name.split(':')[0]} controller`];
  }
  return [];
}
