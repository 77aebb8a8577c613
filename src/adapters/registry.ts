import type { InstrumentationModuleDefinition } from '@opentelemetry/instrumentation';
import type { GhostDetector } from '../ghost/detector';
import type { BeanObserver } from '../ghost/reports/startup-timeline';
import type * as NestObserverModule from './nestjs/container-observer';
import type * as NestDefinitionsModule from './nestjs/module-definitions';
import type * as TsyringeObserverModule from './lazy/tsyringe/container-observer';
import type * as TsyringeDefinitionsModule from './lazy/tsyringe/module-definitions';
import type * as AwilixObserverModule from './lazy/awilix/container-observer';
import type * as AwilixDefinitionsModule from './lazy/awilix/module-definitions';
import type * as InversifyObserverModule from './lazy/inversify/container-observer';
import type * as InversifyDefinitionsModule from './lazy/inversify/module-definitions';
import { NEST_LIBRARY_PACKAGES } from './nestjs/packages';

/*
 * The one list of containers the detector hooks: the instrumentation builds its module definitions from it and
 * the settings take the names `diag.containers.include` accepts from it. A new container is a folder under
 * adapters/ and one entry here.
 *
 * Everything an entry loads is required inside it, never at the top of this file: the settings read the names
 * without loading any adapter, an adapter's module definitions are loaded when one of its packages first loads
 * (never for a container left out of `diag.containers.include` or one the application does not use), and an
 * adapter's observer (the bulk of its code) is required only when one of its hooks first
 * runs, that is when the application loads the container (start-up cost, docs/benchmarks.md).
 */

/** What the instrumentation hands each adapter. */
export interface AdapterHost {
  readonly detector: GhostDetector;
  /** shimmer-style wrap and unwrap (`src/patching/wrap.ts`). */
  readonly patcher: {
    wrap(target: object, name: string, wrapper: (original: never) => unknown): void;
    unwrap(target: object, name: string): void;
  };
  /** Where a container that times its bean creations reports them (the start-up spans); asked when its observer is created. */
  readonly beans: () => BeanObserver;
}

/** One container the detector can hook. */
export interface ContainerAdapter {
  /** How `diag.containers.include` and the reports' `framework` name it. */
  readonly name: string;
  /**
   * Every package its module definitions hook: the first of them the application loads builds the definitions
   * (src/patching/module-hooks.ts, `DeferredDefinitions`), so an adapter's code waits for its container.
   */
  readonly packages: readonly string[];
  /** Its module definitions (OpenTelemetry's format), built when one of its packages loads; its observer is created at its first hook. */
  moduleDefinitions(host: AdapterHost): InstrumentationModuleDefinition[];
}

/** `create` run once, at the first call: how each adapter's observer (and its code) waits for its container. */
function lazily<T>(create: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= create());
}

/* eslint-disable @typescript-eslint/no-require-imports -- lazy loading is the point of this table (see above) */
export const CONTAINER_ADAPTERS: readonly ContainerAdapter[] = [
  {
    name: 'nestjs',
    packages: ['@nestjs/core', ...NEST_LIBRARY_PACKAGES],
    moduleDefinitions: ({ detector, patcher, beans }) => {
      let nestVersion: string | undefined;
      const observer = lazily(() => {
        const { NestContainerObserver } = require('./nestjs/container-observer') as typeof NestObserverModule;
        return new NestContainerObserver(
          detector,
          () => ({ name: '@nestjs/core', ...(nestVersion ? { version: nestVersion } : {}) }),
          beans(),
        );
      });
      const { nestModuleDefinitions } = require('./nestjs/module-definitions') as typeof NestDefinitionsModule;
      return nestModuleDefinitions({
        get observer() {
          return observer();
        },
        origins: detector.origins,
        ...patcher,
        containerClosed: (container) => {
          observer().settle();
          detector.writePendingReport();
          detector.flushGhostReport('close');
          // The report is written: what stays untouched is on record, and the closed application's classes
          // get their methods back rather than keeping its beans alive.
          if (container !== undefined) detector.tracker?.end(container);
        },
        setNestVersion: (version) => {
          nestVersion = version;
        },
        // Published 100 ms after ready; the analysis runs on the turn after ready, usually before it (when it
        // takes longer, the section is added to its report once the analysis has run).
        startupReady: () => detector.startupReady(),
        shutdownFinished: () => detector.shutdownFinished(),
      });
    },
  },
  {
    name: 'inversify',
    packages: ['inversify', '@inversifyjs/core'],
    moduleDefinitions: ({ detector, patcher }) => {
      const { inversifyModuleDefinitions } =
        require('./lazy/inversify/module-definitions') as typeof InversifyDefinitionsModule;
      const observer = lazily(() => {
        const { InversifyObserver } = require('./lazy/inversify/container-observer') as typeof InversifyObserverModule;
        return new InversifyObserver(detector);
      });
      return inversifyModuleDefinitions(observer, patcher);
    },
  },
  {
    name: 'tsyringe',
    packages: ['tsyringe'],
    moduleDefinitions: ({ detector, patcher }) => {
      const { tsyringeModuleDefinitions } =
        require('./lazy/tsyringe/module-definitions') as typeof TsyringeDefinitionsModule;
      const observer = lazily(() => {
        const { TsyringeObserver } = require('./lazy/tsyringe/container-observer') as typeof TsyringeObserverModule;
        return new TsyringeObserver(detector);
      });
      return tsyringeModuleDefinitions(observer, patcher);
    },
  },
  {
    name: 'awilix',
    packages: ['awilix'],
    moduleDefinitions: ({ detector, patcher }) => {
      const { awilixModuleDefinitions } = require('./lazy/awilix/module-definitions') as typeof AwilixDefinitionsModule;
      const observer = lazily(() => {
        const { AwilixObserver } = require('./lazy/awilix/container-observer') as typeof AwilixObserverModule;
        return new AwilixObserver(detector);
      });
      return awilixModuleDefinitions(observer, patcher);
    },
  },
];
/* eslint-enable @typescript-eslint/no-require-imports */

/** The names `diag.containers.include` may list besides `*`. */
export const CONTAINER_NAMES: readonly string[] = CONTAINER_ADAPTERS.map((adapter) => adapter.name);
