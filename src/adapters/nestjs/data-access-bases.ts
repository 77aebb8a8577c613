import { dataProperty } from './inert-read';

/**
 * Library base classes that no framework collects: an ORM's repository. A class extending one is built by Nest like
 * any provider and used only by whoever injects it; nothing registers it through its base the way `PassportStrategy`
 * registers a strategy or `AutomapperProfile` a profile. Extending one is therefore no entry point.
 *
 * Measured on a real monorepo (issue #44, docs/precision.md): six dead registrations of classes extending TypeORM's
 * `Repository` (three nothing injected, three injected only by dead services) were kept off the candidates as
 * `extends-library-class:Repository`, out of twenty dead providers.
 *
 * A base is known by its name and by methods its prototype chain holds as data (never through a getter or a Proxy),
 * so that another library's class that happens to be called `Repository` keeps its entry point.
 */
const DATA_ACCESS_BASES: ReadonlyMap<string, readonly string[]> = new Map([
  // typeorm 0.2 and 0.3
  ['Repository', ['createQueryBuilder', 'findOne', 'save']],
  ['TreeRepository', ['findTrees', 'createQueryBuilder']],
  ['MongoRepository', ['createCursor', 'findOne']],
  // @mikro-orm/core, @mikro-orm/knex (5 and 6)
  ['EntityRepository', ['findOne', 'nativeDelete']],
  ['SqlEntityRepository', ['createQueryBuilder', 'findOne']],
]);

/** Whether `base`, a library class, is an ORM's repository base (above): extending it registers nothing. */
export function isDataAccessBase(base: Function): boolean {
  const name = dataProperty(base, 'name');
  const methods = typeof name === 'string' ? DATA_ACCESS_BASES.get(name) : undefined;
  if (methods === undefined) return false;
  const proto = dataProperty(base, 'prototype');
  return methods.every((method) => typeof dataProperty(proto, method) === 'function');
}
