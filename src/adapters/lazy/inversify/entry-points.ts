/**
 * The web layers InversifyJS applications pair with: inversify-express-utils (`@controller()`) and the
 * @inversifyjs/http-* packages (`@Controller()`), which resolve their controllers from the container per request,
 * and the error filters of the latter (`@CatchError()`, @inversifyjs/framework-core), which they resolve when an
 * error of theirs is thrown. Each marks its class with reflect-metadata under a key of its own; such a class is
 * called by the framework, never a ghost candidate (an outside trial's error filters, never triggered before
 * ready, read never resolved).
 */
type Reflector = {
  getOwnMetadataKeys?(target: object, property?: string): unknown[];
  getOwnMetadata?(key: unknown, target: object, property?: string): unknown;
};

function keyName(key: unknown): string {
  return typeof key === 'symbol' ? (key.description ?? '') : String(key);
}

/** Why an InversifyJS web layer calls into `cls` on its own: one of its controllers, or an error filter. */
export function inversifyEntryPoints(cls: unknown): string[] {
  const r = Reflect as Reflector;
  if (typeof cls !== 'function' || typeof r.getOwnMetadataKeys !== 'function') return [];
  for (const key of r.getOwnMetadataKeys(cls)) {
    const name = keyName(key);
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

/**
 * The keys under which @inversifyjs/framework-core's decorators on a controller, or on one of its methods, name the
 * classes the web layer resolves around its handlers: `@UseGuard()`, `@UseInterceptor()`, `@ApplyMiddleware()`,
 * `@UseErrorFilter()` (`<package>/class/class[Method]<Kind>MetadataReflectKey`).
 */
const PIPELINE_KEY =
  /^(@inversifyjs\/[a-z-]+)\/.*class(?:Method)?(Guard|Interceptor|Middleware|ErrorFilter)MetadataReflectKey$/;
const PIPELINE_WORDS: Record<string, string> = {
  Guard: 'guard',
  Interceptor: 'interceptor',
  Middleware: 'middleware',
  ErrorFilter: 'error filter',
};

/**
 * The service identifiers (classes, symbols, strings) the InversifyJS web layers' controllers among `classes` name
 * in their guard, interceptor, middleware and error-filter decorators, each with why: the web layer resolves each
 * from the container around a controller's handlers, per request, so each binding of one is called by the framework
 * as the controller is. An outside trial's interceptors (`@UseInterceptor(Symbol.for('TokenCheckInterceptor'))`,
 * bound to their classes), resolved by the first request only, read never resolved by ready, and `check` said to
 * remove them.
 */
export function usedByControllers(classes: Iterable<unknown>): Map<unknown, string> {
  // per identifier: what the first decorator calls it, and where each decorator is (`UsersController.list`)
  const found = new Map<unknown, { what: string; where: string[] }>();
  const r = Reflect as Reflector;
  if (typeof r.getOwnMetadataKeys !== 'function' || typeof r.getOwnMetadata !== 'function') return new Map();
  for (const cls of classes) {
    if (typeof cls !== 'function' || !inversifyEntryPoints(cls).some((why) => why.endsWith(' controller'))) continue;
    const prototype = (cls as { prototype?: unknown }).prototype;
    const methods = typeof prototype === 'object' && prototype !== null ? Object.getOwnPropertyNames(prototype) : [];
    for (const property of [undefined, ...methods.filter((m) => m !== 'constructor')]) {
      const where = property === undefined ? cls.name : `${cls.name}.${property}`;
      for (const key of r.getOwnMetadataKeys(cls, property)) {
        const kind = PIPELINE_KEY.exec(keyName(key));
        if (kind === null) continue;
        for (const used of identifiersIn(r.getOwnMetadata(key, cls, property))) {
          const known = found.get(used);
          if (known === undefined) found.set(used, { what: `${kind[1]} ${PIPELINE_WORDS[kind[2]!]}`, where: [where] });
          else if (!known.where.includes(where)) known.where.push(where);
        }
      }
    }
  }
  return new Map([...found].map(([used, { what, where }]) => [used, `${what} of ${where.join(', ')}`]));
}

/** The service identifiers a metadata value lists: itself, or the members of an array, a set or a map's values. */
function identifiersIn(value: unknown): unknown[] {
  const members =
    Array.isArray(value) || value instanceof Set ? [...value] : value instanceof Map ? [...value.values()] : [value];
  return members.filter((m) => typeof m === 'function' || typeof m === 'symbol' || typeof m === 'string');
}
