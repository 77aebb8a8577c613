/**
 * The HTTP routes of a NestJS controller as the application serves them: `GET /api/v1/items/:id`, with the
 * global prefix (and its exclusions), URI versioning, the RouterModule's path, the controller's and the
 * method's paths, every combination of them. Nest keeps no list of the routes it registered (its graph
 * inspector records them only with `snapshot: true`, and the router's own layers hold closures, not handlers),
 * so the routes are worked out after ready from the metadata Nest itself read to register them, by the same
 * rules (`RoutesResolver`, `RouterExplorer`, `RoutePathFactory`); test/e2e/endpoints.test.ts calls each route
 * through a real HTTP client, so that this cannot drift from what Nest serves.
 *
 * Header, media-type and custom versioning serve every version on the same path: the route says its version
 * in words, `GET /api/items/:id (header X-API-Version: 2)`.
 */
import type { MetadataApi } from '../../shared/reflect-metadata';
import {
  NEST_REQUEST_METHOD_ALL,
  NEST_REQUEST_METHODS,
  NEST_VERSIONING,
  type NestContainer,
  type NestExcludedRoute,
  type NestModule,
  type NestVersioningOptions,
} from './nest-types';

/** `@nestjs/common`'s metadata keys, written out so that no Nest package is loaded to read them. */
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';
const VERSION_METADATA = '__version__';
const HOST_METADATA = 'host';
/** The RouterModule's path of a module, suffixed with the application's id since Nest 8. */
const MODULE_PATH = '__module_path__';

/** What the application set for all its routes: read once per container. */
export interface HttpSettings {
  /** With a leading slash, as `NestApplication.registerRouter` hands it on; '' when none. */
  readonly globalPrefix: string;
  readonly exclude: readonly NestExcludedRoute[];
  readonly versioning: NestVersioningOptions | undefined;
  /** The ModulesContainer's id: the key of each module's RouterModule path. */
  readonly applicationId: string | undefined;
}

/** The settings of an HTTP application; undefined when the container serves no HTTP (an application context). */
export function httpSettings(container: NestContainer): HttpSettings | undefined {
  if (typeof container.getHttpAdapterRef !== 'function' || !container.getHttpAdapterRef()) return undefined;
  const config = container.applicationConfig;
  const prefix = config?.getGlobalPrefix?.() ?? '';
  const exclude = config?.getGlobalPrefixOptions?.()?.exclude;
  return {
    globalPrefix: addLeadingSlash(prefix),
    exclude: Array.isArray(exclude) ? exclude : [],
    versioning: config?.getVersioning?.() ?? undefined,
    applicationId: container.getModules().applicationId,
  };
}

/** The module's RouterModule path (`RouterModule.register([{ path: 'admin', module: AdminModule }])`). */
export function modulePath(meta: MetadataApi, settings: HttpSettings, module: NestModule): string | undefined {
  const cls = module.metatype;
  if (typeof cls !== 'function') return undefined;
  const path =
    (settings.applicationId !== undefined ? meta.getMetadata(MODULE_PATH + settings.applicationId, cls) : undefined) ??
    meta.getMetadata(MODULE_PATH, cls);
  return typeof path === 'string' ? path : undefined;
}

/** What a controller says of all its routes: its paths, version and host. */
export interface ControllerRouting {
  readonly paths: readonly string[];
  readonly version: unknown;
  readonly host: unknown;
  readonly modulePath: string | undefined;
}

/** A controller's routing, or undefined for a class that is no HTTP controller (no `@Controller()` path). */
export function controllerRouting(
  meta: MetadataApi,
  settings: HttpSettings,
  controller: Function,
  modulePathOfHost: string | undefined,
): ControllerRouting | undefined {
  const path = meta.getMetadata(PATH_METADATA, controller);
  if (path === undefined) return undefined;
  return {
    paths: pathList(path),
    // Only with versioning on does a version (or the default one) change anything.
    version: settings.versioning
      ? (meta.getMetadata(VERSION_METADATA, controller) ?? settings.versioning.defaultVersion)
      : undefined,
    host: meta.getMetadata(HOST_METADATA, controller),
    modulePath: modulePathOfHost,
  };
}

/** The routes one handler method serves, `'<VERB> <path>'` each; empty for a method that is no route. */
export function methodRoutes(
  meta: MetadataApi,
  settings: HttpSettings,
  controller: ControllerRouting,
  handler: Function,
): string[] {
  const path = meta.getMetadata(PATH_METADATA, handler);
  if (path === undefined) return [];
  const requestMethod = meta.getMetadata(METHOD_METADATA, handler);
  const verb = typeof requestMethod === 'number' ? (NEST_REQUEST_METHODS[requestMethod] ?? 'GET') : 'GET';
  const version = meta.getMetadata(VERSION_METADATA, handler) || controller.version;
  const versioning = version && settings.versioning ? settings.versioning : undefined;
  const uri = versioning?.type === NEST_VERSIONING.URI;
  const said = versioning && !uri ? ` (${versionInWords(versioning, version)})` : '';
  const host = controller.host !== undefined ? ` (host ${hostInWords(controller.host)})` : '';
  const routes: string[] = [];
  for (const controllerPath of controller.paths) {
    for (const methodPath of pathList(path)) {
      for (const served of servedPaths(settings, {
        modulePath: controller.modulePath,
        controllerPath,
        methodPath,
        versions: uri ? versionList(version) : undefined,
        requestMethod: typeof requestMethod === 'number' ? requestMethod : 0,
      })) {
        routes.push(`${verb} ${served}${said}${host}`);
      }
    }
  }
  return routes;
}

interface PathParts {
  readonly modulePath: string | undefined;
  readonly controllerPath: string;
  readonly methodPath: string;
  /** URI versioning only: each version the route serves. */
  readonly versions: readonly unknown[] | undefined;
  readonly requestMethod: number;
}

/** One path per URI version (a version-neutral one has no version segment), prefixed unless excluded. */
function servedPaths(settings: HttpSettings, parts: PathParts): string[] {
  const prefix = settings.versioning?.type === NEST_VERSIONING.URI ? uriVersionPrefix(settings.versioning) : 'v';
  const versioned = (parts.versions ?? [undefined]).map((version) => ({
    version,
    segment: version === undefined || isVersionNeutral(version) ? '' : `/${prefix}${String(version)}`,
  }));
  return versioned.map(({ version, segment }) => {
    let path = segment;
    for (const fragment of [parts.modulePath, parts.controllerPath, parts.methodPath]) {
      if (fragment) path = stripEndSlash(path) + addLeadingSlash(fragment);
    }
    if (settings.globalPrefix && !excluded(settings, path, segment, version, parts.requestMethod)) {
      path = stripEndSlash(settings.globalPrefix) + path;
    }
    path = addLeadingSlash(path || '/');
    return path !== '/' ? stripEndSlash(path) : path;
  });
}

/**
 * Whether an exclusion of `setGlobalPrefix(prefix, { exclude })` takes the route out of the prefix: tested, as
 * Nest does, on the path without its version segment, against the pattern Nest compiled for each exclusion.
 */
function excluded(
  settings: HttpSettings,
  path: string,
  segment: string,
  version: unknown,
  requestMethod: number,
): boolean {
  const unversioned =
    segment !== '' && version !== undefined && path.startsWith(segment) ? path.slice(segment.length) : path;
  return settings.exclude.some((route) => {
    const method = route.requestMethod;
    if (method !== NEST_REQUEST_METHOD_ALL && method !== -1 && method !== requestMethod) return false;
    return route.pathRegex instanceof RegExp && route.pathRegex.test(addLeadingSlash(unversioned));
  });
}

function uriVersionPrefix(versioning: NestVersioningOptions): string {
  if (versioning.prefix === false) return '';
  return typeof versioning.prefix === 'string' ? versioning.prefix : 'v';
}

function versionList(version: unknown): unknown[] {
  return Array.isArray(version) ? [...new Set(version)] : [version];
}

/** `VERSION_NEUTRAL` is a `Symbol('VERSION_NEUTRAL')` of whichever copy of `@nestjs/common` loaded. */
function isVersionNeutral(version: unknown): boolean {
  return typeof version === 'symbol' && version.description === 'VERSION_NEUTRAL';
}

/** The version of a route that header, media-type or custom versioning serves on an unversioned path. */
function versionInWords(versioning: NestVersioningOptions, version: unknown): string {
  const versions = versionList(version).map((v) => (isVersionNeutral(v) ? 'neutral' : String(v)));
  const list = versions.join(' or ');
  if (versioning.type === NEST_VERSIONING.HEADER) return `header ${versioning.header ?? 'version'}: ${list}`;
  if (versioning.type === NEST_VERSIONING.MEDIA_TYPE) {
    return `media type ${versions.map((v) => `${versioning.key ?? ''}${v}`).join(' or ')}`;
  }
  return `version ${list}`;
}

function hostInWords(host: unknown): string {
  const hosts = Array.isArray(host) ? host : [host];
  return hosts.map((h) => (h instanceof RegExp ? h.source : String(h))).join(' or ');
}

function pathList(path: unknown): string[] {
  return (Array.isArray(path) ? path : [path]).map((p) => addLeadingSlash(typeof p === 'string' ? p : ''));
}

/** A leading slash, unless the path has one or opens an optional group (`{/:id}`); '' for no path. */
function addLeadingSlash(path: string): string {
  if (!path) return '';
  return path.charAt(0) !== '/' && !path.startsWith('{/') ? `/${path}` : path;
}

function stripEndSlash(path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path;
}
