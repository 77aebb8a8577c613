import * as fs from 'node:fs';
import * as path from 'node:path';
import { InstrumentationBase, type InstrumentationNodeModuleDefinition } from '@opentelemetry/instrumentation';
import { resolveConfig, type DiagConfig } from './config/properties';
import { DiagRuntime } from './runtime';
import { NestContainerObserver } from './adapters/nestjs/container-observer';
import { nestModuleDefinitions } from './adapters/nestjs/module-definitions';
import { AwilixObserver } from './adapters/awilix/container-observer';
import { awilixModuleDefinitions } from './adapters/awilix/module-definitions';
import { InversifyObserver } from './adapters/inversify/container-observer';
import { inversifyModuleDefinitions } from './adapters/inversify/module-definitions';
import { TsyringeObserver } from './adapters/tsyringe/container-observer';
import { tsyringeModuleDefinitions } from './adapters/tsyringe/module-definitions';
import { actuatorSources, startActuator, type ActuatorHandle } from './actuator';
import type { DiagInstrumentationConfig } from './types';
import type { DiagReport } from './ghost/reports';
import type { GhostReport, GhostTrackingDisabled } from './ghost/types';
import type { SketchRegistryView } from './sketch/types';
import { safeLog } from './logger';
import { DiagTelemetry } from './telemetry';
import { configureSketchRegistry, sketchRegistry } from './sketch/registry';
import { watchEsmLibraries } from './origins/esm-libraries';

export const PACKAGE_NAME = 'diag-instrumentation';

function packageVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Fields set during `super()` (which calls init and enable) must not be class fields, or they are reset. */
interface DiagState {
  config: DiagConfig;
  runtime: DiagRuntime;
  telemetry: DiagTelemetry;
  observer: NestContainerObserver;
  tsyringe: TsyringeObserver;
  awilix: AwilixObserver;
  inversify: InversifyObserver;
  nestVersion?: string;
  actuator?: Promise<ActuatorHandle | undefined>;
  sketches?: () => SketchRegistryView | undefined;
  /** Stops indexing the packages an ESM application imports. */
  unwatchEsmLibraries?: () => void;
}

/**
 * OpenTelemetry instrumentation for NestJS that finds ghost beans: providers created at startup that nothing
 * seems to use. Phase 1 (always on) writes `diag-report.json` from the resolved dependency graph; Phase 2
 * (`ghostTracking.enabled`) flags each bean at its first method call and writes `diag-ghost-report.json`.
 *
 * ```ts
 * new NodeSDK({ instrumentations: [new DiagInstrumentation()] }).start();
 * ```
 */
export class DiagInstrumentation extends InstrumentationBase<DiagInstrumentationConfig> {
  declare private state: DiagState | undefined;

  constructor(config: DiagInstrumentationConfig = {}) {
    super(PACKAGE_NAME, packageVersion(), config);
  }

  /** Resolved lazily: the base constructor calls init() and enable() before this class's constructor body runs. */
  private get diag(): DiagState {
    if (this.state) return this.state;
    const config = resolveConfig(this.getConfig());
    configureSketchRegistry(config.sketchRedis);
    const runtime = new DiagRuntime(config);
    const telemetry = new DiagTelemetry(
      runtime,
      () => this.tracer,
      () => this.state?.sketches?.(),
    );
    const state: DiagState = {
      config,
      runtime,
      telemetry,
      // Creating the registry loads nothing native: the library is loaded when the first sketch is created.
      sketches: () => sketchRegistry(),
      observer: new NestContainerObserver(
        runtime,
        () => ({ name: '@nestjs/core', ...(this.state?.nestVersion ? { version: this.state.nestVersion } : {}) }),
        telemetry.beanObserver(),
      ),
      tsyringe: new TsyringeObserver(runtime, runtime.origins),
      awilix: new AwilixObserver(runtime, runtime.origins),
      inversify: new InversifyObserver(runtime, runtime.origins),
    };
    this.state = state;
    return state;
  }

  /** The InstrumentationBase contract: instruments are (re)created whenever the MeterProvider changes. */
  protected override _updateMetricInstruments(): void {
    this.diag.telemetry.updateMetricInstruments(this.meter);
  }

  protected init(): InstrumentationNodeModuleDefinition[] {
    const diag = this.diag;
    const wrap = (target: object, name: string, wrapper: (original: never) => unknown): void => {
      this._wrap(target as never, name as never, wrapper as never);
    };
    const unwrap = (target: object, name: string): void => this._unwrap(target as never, name as never);
    const include = diag.config.containers.include;
    const hooks = (framework: string): boolean => include.includes('*') || include.includes(framework);
    return [
      ...(hooks('nestjs')
        ? nestModuleDefinitions({
            observer: diag.observer,
            origins: diag.runtime.origins,
            wrap,
            unwrap,
            containerClosed: (container) => {
              diag.observer.settle();
              diag.runtime.flushGhostReport('close');
              // The report is written: what stays untouched is on record, and the closed application's classes
              // get their methods back rather than keeping its beans alive.
              if (container !== undefined) diag.runtime.tracker?.end(container);
            },
            setNestVersion: (version) => {
              diag.nestVersion = version;
            },
          })
        : []),
      ...(hooks('tsyringe') ? tsyringeModuleDefinitions(diag.tsyringe, { wrap, unwrap }) : []),
      ...(hooks('awilix') ? awilixModuleDefinitions(diag.awilix, { wrap, unwrap }) : []),
      ...(hooks('inversify') ? inversifyModuleDefinitions(diag.inversify, { wrap, unwrap }) : []),
    ];
  }

  override enable(): void {
    const wasEnabled = this.isEnabled();
    super.enable();
    if (wasEnabled) return;
    const diag = this.diag;
    diag.runtime.start();
    diag.unwatchEsmLibraries ??= watchEsmLibraries(diag.runtime.origins);
    if (diag.config.actuator.include !== undefined && !diag.actuator) {
      diag.actuator = startActuator(
        diag.config.actuator,
        actuatorSources({
          ghosts: () => diag.runtime.tracker,
          ghostsVersion: () => diag.runtime.tracker?.version ?? 0,
          diagReport: () => diag.runtime.diagReport(),
          startup: () => diag.runtime.startupTimeline(),
          page: () => diag.runtime.pageData(true),
          sketches: () => diag.sketches?.(),
        }),
      );
    }
  }

  override disable(): void {
    const wasEnabled = this.isEnabled();
    super.disable();
    if (!wasEnabled || !this.state) return;
    this.state.runtime.stop();
    this.state.unwatchEsmLibraries?.();
    this.state.unwatchEsmLibraries = undefined;
    void this.stopActuator();
  }

  /** The resolved configuration (environment over options over defaults). */
  get diagConfig(): DiagConfig {
    return this.diag.config;
  }

  /** The live ghost snapshot: the ghost report's fields, or `{ status: 'DISABLED' }` when Phase 2 is off. */
  ghostSnapshot(): GhostReport | GhostTrackingDisabled {
    return this.diag.runtime.ghostSnapshot();
  }

  /** The latest `diag-report.json` content, once the container has started. */
  diagReport(): DiagReport | undefined {
    return this.diag.runtime.diagReport();
  }

  /** Writes `diag-ghost-report.json` now (it is also written when the container closes and periodically). */
  writeGhostReport(): void {
    this.diag.runtime.flushGhostReport('close');
  }

  /** The running actuator, once listening; undefined when not configured or not started. */
  async actuator(): Promise<ActuatorHandle | undefined> {
    return this.state?.actuator;
  }

  private async stopActuator(): Promise<void> {
    const state = this.state;
    const pending = state?.actuator;
    if (!state || !pending) return;
    state.actuator = undefined;
    try {
      await (await pending)?.stop();
    } catch (err) {
      safeLog('warn', `actuator did not stop cleanly: ${(err as Error).message}`);
    }
  }
}
