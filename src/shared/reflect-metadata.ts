/**
 * reflect-metadata's API, when the application loaded it (Nest always does; a lazy container may not). Looked up
 * at call time, never imported: the package must not load its own copy beside the application's, whose store
 * is the one frameworks read.
 */
export interface MetadataApi {
  getMetadata(key: unknown, target: object, propertyKey?: string | symbol): unknown;
  getOwnMetadataKeys(target: object, propertyKey?: string | symbol): unknown[];
  getOwnMetadata(key: unknown, target: object, propertyKey?: string | symbol): unknown;
  hasOwnMetadata(key: unknown, target: object, propertyKey?: string | symbol): boolean;
  defineMetadata(key: unknown, value: unknown, target: object, propertyKey?: string | symbol): void;
}

/** The API if every function of it is present, else undefined. */
export function metadataApi(): MetadataApi | undefined {
  const r = Reflect as unknown as Partial<MetadataApi>;
  return typeof r.getMetadata === 'function' &&
    typeof r.getOwnMetadataKeys === 'function' &&
    typeof r.getOwnMetadata === 'function' &&
    typeof r.hasOwnMetadata === 'function' &&
    typeof r.defineMetadata === 'function'
    ? (r as MetadataApi)
    : undefined;
}

/**
 * Copies every own metadata entry of `from` (of its `propertyKey`, if given) onto `to`: decorators store theirs
 * on the function itself, so a replacement without them would lose what they meant. `onlyMissing` keeps the
 * entries `to` already has.
 */
export function copyOwnMetadata(
  meta: MetadataApi,
  from: object,
  to: object,
  propertyKey?: string,
  onlyMissing = false,
): void {
  for (const key of meta.getOwnMetadataKeys(from, propertyKey)) {
    if (onlyMissing && meta.hasOwnMetadata(key, to, propertyKey)) continue;
    meta.defineMetadata(key, meta.getOwnMetadata(key, from, propertyKey), to, propertyKey);
  }
}
