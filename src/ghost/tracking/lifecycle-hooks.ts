/** Methods a framework calls on its own during start and shutdown; calling them is not a touch. */
export const DEFAULT_LIFECYCLE_HOOKS: readonly string[] = Object.freeze([
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);
