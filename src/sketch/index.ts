/**
 * The sketch part of the package (`diag-instrumentation/sketch`): count-min sketches whose counters live in
 * native memory, a sliding-window variant for rate limiting, the registry of sketches by id, and the
 * native library loader.
 *
 * What a user calls (docs/sketches.md, "API"), and nothing else: test/unit/exports.test.ts lists the runtime
 * names, so a new one is a decision. Defaults, environment variable names and the codes table are documented
 * values, not exports.
 */
export { CountMinSketch, type CountMinSketchOptions } from './count-min-sketch';
export { WindowedCountMinSketch, type WindowedSketchOptions } from './window';
export { SketchAllocationError, SketchClosedError, SketchConfigError, type SketchShapeOptions } from './counters';
export { SketchRegistry, sketchRegistry, type RegistrySketchOptions, type SketchRegistryOptions } from './registry';
export type { SketchCounters, SketchRegistryStats } from './registry';
export type { SketchInfo, SketchPlacement, SketchRegistryView, SketchStats } from './types';
export { nativeSketchStore } from './stores/native';
export type { FleetMode, FleetStatus, SketchStore, SketchStoreKind, SyncEvent } from './stores/types';
export { RedisSketchStore, type RedisSketchStoreOptions } from './stores/redis/store';
export type { RedisPipelineClient } from '../shared/redis';
export { SketchKeys } from './nestjs/keys';
export {
  SketchLimit,
  SketchShield,
  SketchFraud,
  defineSketchDecorator,
  SkipSketch,
  SketchGuard,
  SketchModule,
  SketchThresholdError,
  SketchKeyError,
  SketchThresholdFilter,
  hashSketchKey,
  type SketchMethodDecorator,
  type SketchDecorator,
  type SketchCommonOptions,
  type SketchLimitOptions,
  type SketchShieldOptions,
  type SketchFraudOptions,
  type SketchDecoratorOptions,
  type SketchKey,
  type SketchKeyFunction,
  type SketchMode,
  type SketchMessage,
  type KeyErrorPolicy,
  type SketchDynamicModule,
  type SketchExecutionContext,
  type SketchGlobalLimit,
  type SketchGuardCommonOptions,
  type SketchGuardKeyFunction,
  type SketchModuleAsyncOptions,
  type SketchModuleOptions,
  type SketchThresholdBody,
  type SketchThresholdDetails,
  type ArgumentsHostLike,
  type RateLimitHeaders,
} from './nestjs';
export {
  loadNativeLibrary,
  nativeLibrary,
  resetNativeLibrary,
  detectLibc,
  type LoaderOptions,
  type NativeLibrary,
} from './native/loader';
export { platformTarget, type Libc, type PlatformTarget } from './native/platform';
export { UnsatisfiedLinkError, type UnsatisfiedLinkReason } from './native/errors';
export { inspectBinary, type BinaryInfo, type BinaryFormat } from './native/binary-header';
