import { metrics, trace, type Meter, type MeterProvider, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { Instrumentation, InstrumentationModuleDefinition } from '@opentelemetry/instrumentation';
import { resolveConfig, type DiagConfig } from '../config/properties';
import { GhostDetector } from '../ghost/detector';
import type { ServiceIdentity } from '../ghost/ledger';
import { CONTAINER_ADAPTERS } from '../adapters/registry';
import type { ActuatorHandle } from '../actuator';
import type { DiagInstrumentationConfig } from './types';
import type { DiagReport } from '../ghost/reports/diag-report';
import type { GhostReport, GhostTrackingDisabled } from '../ghost/tracking/types';
import type { SketchRegistryView } from '../sketch/types';
import { safeLog } from '../shared/logger';
import { BOOT_MARKS } from '../shared/boot-clock';
import { DiagTelemetry } from '../telemetry';
import { configureSketchRegistry, existingSketchRegistry } from '../sketch/registry-settings';
import { watchEsmLibraries } from '../ghost/origins/esm-libraries';
import {
  ModuleHooks,
  stopTimingModuleLoads,
  timeModuleLoads,
  unsupportedPackages,
  type DeferredDefinitions,
} from '../patching/module-hooks';
import { unwrapMethod, wrapMethod } from '../patching/wrap';
import { packageVersionAt } from '../patching/package-version';
import { PACKAGE_ROOT } from '../shared/package-root';
import { sayActuatorOffOnce } from '../actuator/off-hint';

export const PACKAGE_NAME = 'diag-instrumentation';

function packageVersion(): string {
  return packageVersionAt(PACKAGE_ROOT) ?? '0.0.0';
}

/**
 * The service name and version of the SDK's resource, read from the tracer the SDK handed over: its resource is
 * not on OpenTelemetry's API, so this reads the SDK's Tracer (`_resource` in 2.x, `resource` in 1.x) behind the
 * API's ProxyTracer, and gives undefined for any other shape (the ledger then reads OTEL_SERVICE_NAME itself).
 */
function serviceIdentityOf(tracer: Tracer): ServiceIdentity | undefined {
  try {
    const proxy = tracer as { _getTracer?(): unknown };
    const sdkTracer = (typeof proxy._getTracer === 'function' ? proxy._getTracer() : tracer) as {
      _resource?: { attributes?: Record<string, unknown> };
      resource?: { attributes?: Record<string, unknown> };
    };
    const attributes = (sdkTracer._resource ?? sdkTracer.resource)?.attributes;
    if (!attributes) return undefined;
    const name = attributes['service.name'];
    const version = attributes['service.version'];
    return {
      ...(typeof name === 'string' ? { serviceName: name } : {}),
      ...(typeof version === 'string' ? { serviceVersion: version } : {}),
    };
  } catch {
    return undefined;
  }
}

interface DiagState {
  config: DiagConfig;
  detector: GhostDetector;
  telemetry: DiagTelemetry;
  actuator?: Promise<ActuatorHandle | undefined>;
  sketches: () => SketchRegistryView;
  /** Stops indexing the packages an ESM application imports. */
  unwatchEsmLibraries?: () => void;
}

/**
 * OpenTelemetry instrumentation for NestJS (and InversifyJS, tsyringe, awilix) that finds ghost beans: providers
 * created at startup that nothing seems to use. Phase 1 (always on) writes `diag-report.json` from the resolved
 * dependency graph; Phase 2 (`ghostTracking.enabled`) flags each bean at its first method call and writes
 * `diag-ghost-report.json`.
 *
 * ```ts
 * new NodeSDK({ instrumentations: [new DiagInstrumentation()] }).start();
 * ```
 *
 * It implements OpenTelemetry's `Instrumentation` interface rather than extending `InstrumentationBase`: the
 * base class's require hook costs every application ~100 ms of start-up (see `src/patching/module-hooks.ts`). Like
 * any instrumentation, it enables itself when constructed unless `enabled: false`; its configuration is read then.
 */
export class DiagInstrumentation implements Instrumentation<DiagInstrumentationConfig> {
  readonly instrumentationName = PACKAGE_NAME;
  readonly instrumentationVersion = packageVersion();
  private config: DiagInstrumentationConfig;
  private tracer: Tracer;
  private meter: Meter;
  private enabled = false;
  private readonly state: DiagState;
  private readonly hooks: ModuleHooks;

  constructor(config: DiagInstrumentationConfig = {}) {
    const constructed = performance.now();
    this.config = { enabled: true, ...config };
    this.tracer = trace.getTracer(this.instrumentationName, this.instrumentationVersion);
    this.meter = metrics.getMeter(this.instrumentationName, this.instrumentationVersion);
    this.state = this.createState();
    this.state.telemetry.updateMetricInstruments(this.meter);
    this.hooks = new ModuleHooks(this.moduleDefinitions());
    if (this.config.enabled !== false) {
      // Built later than the package's import turn: module loads are timed again from here.
      timeModuleLoads();
      this.enable();
    } else {
      // `enabled: false` means no patch at all, the load timer's included (until `enable()`).
      stopTimingModuleLoads();
    }
    // The first instrumentation's construction is the start-up timeline's `diag.instrumentation.enable`.
    if (Number.isNaN(BOOT_MARKS.diagEnableStart)) {
      BOOT_MARKS.diagEnableStart = constructed;
      BOOT_MARKS.diagEnableEnd = performance.now();
    }
  }

  private createState(): DiagState {
    const config = resolveConfig(this.config);
    configureSketchRegistry(config.sketchRedis);
    // The ledger names a process by the SDK's resource (service.name, service.version), read when first needed.
    const detector = new GhostDetector(config, {
      resource: () => serviceIdentityOf(this.tracer),
      unsupported: unsupportedPackages,
    });
    const telemetry = new DiagTelemetry(
      detector,
      () => this.tracer,
      // Telemetry reports the sketches an application created; it never creates the registry.
      existingSketchRegistry,
    );
    return {
      config,
      detector,
      telemetry,
      /* eslint-disable @typescript-eslint/no-require-imports -- the sketches are required when first used */
      // Loaded when the actuator first asks: an application without sketches never loads the sketch code.
      // Creating the registry loads nothing native either: the library is loaded with the first sketch.
      sketches: () => (require('../sketch/registry') as typeof import('../sketch/registry')).sketchRegistry(),
      /* eslint-enable @typescript-eslint/no-require-imports */
    };
  }

  setTracerProvider(tracerProvider: TracerProvider): void {
    this.tracer = tracerProvider.getTracer(this.instrumentationName, this.instrumentationVersion);
  }

  /** Instruments are (re)created whenever the MeterProvider changes. */
  setMeterProvider(meterProvider: MeterProvider): void {
    this.meter = meterProvider.getMeter(this.instrumentationName, this.instrumentationVersion);
    this.state.telemetry.updateMetricInstruments(this.meter);
  }

  getConfig(): DiagInstrumentationConfig {
    return this.config;
  }

  /** Stores the options; the diag settings were resolved at construction (environment over options). */
  setConfig(config: DiagInstrumentationConfig): void {
    this.config = { enabled: true, ...config };
  }

  isEnabled(): boolean {
    return this.enabled;
  }

  /** The module definitions the hooks run (OpenTelemetry's experimental API for bundler-time instrumentation). */
  getModuleDefinitions(): InstrumentationModuleDefinition[] {
    return this.hooks.definitions();
  }

  /**
   * The module definitions of every container in `diag.containers.include` (src/adapters/registry.ts), each
   * built when one of its packages first loads.
   */
  private moduleDefinitions(): DeferredDefinitions[] {
    const { detector, telemetry, config } = this.state;
    const include = config.containers.include;
    const host = {
      detector,
      patcher: { wrap: wrapMethod, unwrap: unwrapMethod },
      beans: () => telemetry.beanObserver(),
    };
    return CONTAINER_ADAPTERS.filter((adapter) => include.includes('*') || include.includes(adapter.name)).map(
      (adapter) => ({ packages: adapter.packages, build: () => adapter.moduleDefinitions(host) }),
    );
  }

  enable(): void {
    if (this.enabled) return;
    this.enabled = true;
    const diag = this.state;
    diag.detector.start();
    diag.unwatchEsmLibraries ??= watchEsmLibraries(diag.detector.origins);
    this.hooks.enable();
    // Off until exposed: one INFO line per process names the switch, since an off actuator is otherwise silent.
    sayActuatorOffOnce(diag.config.actuator);
    if (diag.config.actuator.include !== undefined && !diag.actuator) {
      // Required here, not at the top: an application without the actuator never loads its server.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { actuatorSources, startActuator } = require('../actuator') as typeof import('../actuator');
      diag.actuator = startActuator(
        diag.config.actuator,
        actuatorSources({
          // The detector, not the tracker: its snapshot carries the verdicts. They also change as time passes
          // (insufficient-evidence → never-touched), so the cached answer is renewed each minute at least.
          ghosts: () => (diag.detector.tracker ? diag.detector : undefined),
          ghostsVersion: () => (diag.detector.tracker?.version ?? 0) * 1e7 + Math.floor(Date.now() / 60_000),
          diagReport: () => diag.detector.diagReport(),
          startup: () => diag.detector.startupTimeline(),
          page: () => diag.detector.pageData(true),
          ledger: () => diag.detector.ledgerAnswer(),
          sketches: diag.sketches,
        }),
      );
    }
  }

  disable(): void {
    if (!this.enabled) return;
    this.enabled = false;
    this.hooks.disable();
    this.state.detector.stop();
    this.state.unwatchEsmLibraries?.();
    this.state.unwatchEsmLibraries = undefined;
    void this.stopActuator();
  }

  /** The resolved configuration (environment over options over defaults). */
  get diagConfig(): DiagConfig {
    return this.state.config;
  }

  /** The live ghost snapshot: the ghost report's fields, or `{ status: 'DISABLED' }` when Phase 2 is off. */
  ghostSnapshot(): GhostReport | GhostTrackingDisabled {
    return this.state.detector.ghostSnapshot();
  }

  /** The latest `diag-report.json` content, once the container has started. */
  diagReport(): DiagReport | undefined {
    return this.state.detector.diagReport();
  }

  /** Writes `diag-ghost-report.json` now (it is also written when the container closes and periodically). */
  writeGhostReport(): void {
    this.state.detector.flushGhostReport('close');
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
