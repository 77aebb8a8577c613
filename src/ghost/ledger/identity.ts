/** The resource attributes the ledger names a process by, as the OpenTelemetry SDK resolved them. */
export interface ServiceIdentity {
  readonly serviceName?: string;
  readonly serviceVersion?: string;
}

/** `OTEL_RESOURCE_ATTRIBUTES`'s `key=value,…`, values percent-decoded as the specification says. */
function resourceAttribute(env: NodeJS.ProcessEnv, key: string): string | undefined {
  for (const part of (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === key) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return part.slice(eq + 1).trim();
      }
    }
  }
  return undefined;
}

const usable = (name: string | undefined): string | undefined =>
  name !== undefined && name.trim() !== '' && !name.startsWith('unknown_service') ? name.trim() : undefined;

/**
 * The service and version a process speaks for: the setting, else the SDK's resource, else the environment the
 * SDK would read (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`). The SDK's default `unknown_service:node` is
 * no name: replicas of different services would share one ledger under it.
 */
export function ledgerIdentity(
  configured: string | undefined,
  resource: ServiceIdentity | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ServiceIdentity {
  const serviceName =
    usable(configured) ??
    usable(resource?.serviceName) ??
    usable(env.OTEL_SERVICE_NAME) ??
    usable(resourceAttribute(env, 'service.name'));
  const serviceVersion = usable(resource?.serviceVersion) ?? usable(resourceAttribute(env, 'service.version'));
  return { ...(serviceName ? { serviceName } : {}), ...(serviceVersion ? { serviceVersion } : {}) };
}
