/**
 * The few shapes of NestJS internals the adapter reads, written structurally so that the package never
 * imports `@nestjs/core` (it must work with whichever copy and version the application loaded). Every field
 * is optional or guarded at the call site: internals move between major versions.
 */

export interface NestInstanceWrapper {
  readonly name?: unknown;
  readonly token?: unknown;
  readonly metatype?: unknown;
  readonly inject?: readonly unknown[] | null;
  readonly isAlias?: boolean;
  /** `Scope` enum: 0 DEFAULT, 1 TRANSIENT, 2 REQUEST. */
  readonly scope?: number;
  readonly host?: NestModule;
  readonly instance?: unknown;
  getCtorMetadata?(): ReadonlyArray<NestInstanceWrapper | undefined> | undefined;
  getPropertiesMetadata?(): ReadonlyArray<{ key: unknown; wrapper: NestInstanceWrapper | undefined }> | undefined;
  isDependencyTreeStatic?(): boolean;
}

export interface NestModule {
  readonly name?: string;
  readonly metatype?: unknown;
  readonly container?: NestContainer;
  /** The modules this one imports (`Set<Module>` on Nest 10-12), the global ones Nest binds to every module included. */
  readonly imports?: ReadonlySet<NestModule>;
  /** `@Global()` (and InternalCoreModule): Nest adds such a module to every module's imports. */
  readonly isGlobal?: boolean;
  readonly providers?: Map<unknown, NestInstanceWrapper>;
  readonly controllers?: Map<unknown, NestInstanceWrapper>;
  readonly injectables?: Map<unknown, NestInstanceWrapper>;
  readonly middlewares?: Map<unknown, NestInstanceWrapper>;
}

/**
 * `Injector` of `@nestjs/core`: from 11.1.4 on, `instanceDecorator` is an own property set in its constructor
 * (the identity, or the application's `instrument.instanceDecorator` behind Nest's try/catch), called inside
 * `instantiateClass` on each new instance and factory value; earlier versions have none.
 */
export interface NestInjector {
  instanceDecorator?: unknown;
}

export interface NestContainer {
  /** A `ModulesContainer` (a Map) whose `applicationId` keys the RouterModule's path metadata (Nest 8+). */
  getModules(): Map<string, NestModule> & { readonly applicationId?: string };
  /** The application's settings: global prefix, versioning (read by the endpoint inventory). */
  readonly applicationConfig?: NestApplicationConfig;
  /** The HTTP adapter of an HTTP application; undefined for an application context or a pure microservice. */
  getHttpAdapterRef?(): unknown;
}

/**
 * `ApplicationConfig` of `@nestjs/core`: what `app.setGlobalPrefix()` and `app.enableVersioning()` stored, read
 * after ready to say every route as served.
 */
export interface NestApplicationConfig {
  getGlobalPrefix?(): string;
  /** `exclude`: each excluded route compiled by Nest (`pathRegex`) with its `requestMethod`. */
  getGlobalPrefixOptions?(): { exclude?: ReadonlyArray<NestExcludedRoute> };
  getVersioning?(): NestVersioningOptions | undefined;
}

export interface NestExcludedRoute {
  readonly path?: string;
  readonly requestMethod?: number;
  readonly pathRegex?: RegExp;
}

/** `VersioningOptions` of `@nestjs/common`; `type` is the `VersioningType` enum: 0 URI, 1 HEADER, 2 MEDIA_TYPE, 3 CUSTOM. */
export interface NestVersioningOptions {
  readonly type?: number;
  readonly prefix?: string | false;
  readonly header?: string;
  readonly key?: string;
  readonly defaultVersion?: unknown;
}

/** `VersioningType` values of `@nestjs/common`. */
export const NEST_VERSIONING = { URI: 0, HEADER: 1, MEDIA_TYPE: 2, CUSTOM: 3 } as const;

/** `RequestMethod` of `@nestjs/common` (Nest 11 added the WebDAV verbs and QUERY; Nest 10 stops at SEARCH). */
export const NEST_REQUEST_METHODS: readonly string[] = [
  'GET',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'ALL',
  'OPTIONS',
  'HEAD',
  'SEARCH',
  'PROPFIND',
  'PROPPATCH',
  'MKCOL',
  'COPY',
  'MOVE',
  'LOCK',
  'UNLOCK',
  'QUERY',
];
/** `RequestMethod.ALL`: an exclusion for every verb. */
export const NEST_REQUEST_METHOD_ALL = 5;

/** `Scope` values of `@nestjs/common`. */
export const NEST_SCOPE = { DEFAULT: 0, TRANSIENT: 1, REQUEST: 2 } as const;

/** `STATIC_CONTEXT.id` in `@nestjs/core/injector/constants`: the context of startup singletons. */
export const NEST_STATIC_CONTEXT_ID = 1;

/** Tokens Nest gives global enhancers: `APP_GUARD (UUID: ...)`. The UUID changes every run. */
export const GLOBAL_ENHANCER_TOKEN = /^(APP_GUARD|APP_INTERCEPTOR|APP_PIPE|APP_FILTER) \(UUID: [^)]*\)$/;
