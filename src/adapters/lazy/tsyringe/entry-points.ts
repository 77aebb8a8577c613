/**
 * The web layer tsyringe applications pair with: routing-controllers, whose controllers it resolves from the
 * container per request (`useContainer`). A controller is called by the framework, never a ghost candidate.
 */

/** routing-controllers keeps its decorators' records on the global object, one store per process. */
interface RoutingControllersStorage {
  controllers?: Array<{ target?: unknown; type?: string }>;
  middlewares?: Array<{ target?: unknown }>;
  interceptors?: Array<{ target?: unknown }>;
}

function storage(): RoutingControllersStorage | undefined {
  const s = (globalThis as { routingControllersMetadataArgsStorage?: unknown }).routingControllersMetadataArgsStorage;
  return typeof s === 'object' && s !== null ? (s as RoutingControllersStorage) : undefined;
}

/** Why routing-controllers calls into `cls` on its own: its controller, middleware or interceptor. */
export function routingControllersEntryPoints(cls: unknown): string[] {
  if (typeof cls !== 'function') return [];
  const s = storage();
  if (s === undefined) return [];
  const reasons: string[] = [];
  const controller = s.controllers?.find((c) => c.target === cls);
  if (controller !== undefined)
    reasons.push(
      controller.type === 'json' ? 'routing-controllers @JsonController' : 'routing-controllers @Controller',
    );
  if (s.middlewares?.some((m) => m.target === cls) === true) reasons.push('routing-controllers @Middleware');
  if (s.interceptors?.some((i) => i.target === cls) === true) reasons.push('routing-controllers @Interceptor');
  return reasons;
}
