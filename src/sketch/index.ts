/**
 * The sketch part of the package (`diag-instrumentation/sketch`): count-min sketches whose counters live in
 * native memory, a sliding-window variant for rate limiting, the registry of sketches by id, and the
 * native library loader.
 */
export { CountMinSketch, DEFAULT_DEPTH, DEFAULT_WIDTH, type CountMinSketchOptions } from './count-min-sketch';
export {
  WindowedCountMinSketch,
  DEFAULT_MEMORY_BYTES,
  DEFAULT_SUB_WINDOWS,
  type WindowedSketchOptions,
} from './window';
export {
  SketchAllocationError,
  SketchClosedError,
  SketchConfigError,
  resolveShape,
  type SketchShapeOptions,
} from './counters';
export {
  SketchRegistry,
  sketchRegistry,
  type RegistrySketchOptions,
  type SketchRegistryOptions,
} from './registry';
export type { SketchCounters, SketchRegistryStats } from './registry';
export type { SketchInfo, SketchPlacement, SketchRegistryView, SketchStats } from './types';
export { nativeSketchStore } from './stores/native';
export type { FleetMode, FleetStatus, SketchStore, SketchStoreKind, SyncEvent } from './stores/types';
export {
  RedisSketchStore,
  DEFAULT_KEY_PREFIX,
  DEFAULT_SYNC_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
  type RedisSketchStoreOptions,
} from './stores/redis/store';
export type { RedisPipelineClient } from './stores/redis/connection';
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
  answerTooManyRequests,
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
  LIBRARY_PATH_ENV,
  NO_EXTRACT_ENV,
  type LoaderOptions,
  type NativeLibrary,
} from './native/loader';
export { platformTarget, type Libc, type PlatformTarget } from './native/platform';
export {
  UnsatisfiedLinkError,
  UNSATISFIED_LINK_CODES,
  type UnsatisfiedLinkReason,
} from './native/errors';
export { inspectBinary, type BinaryInfo, type BinaryFormat } from './native/binary-header';
export { EXPECTED_ABI_VERSION } from './native/bindings';
