import type { DiagConfig } from '../config/properties';
import type { GhostReport, GhostTrackingDisabled } from '../ghost/tracking/types';
import type { SketchRegistryView } from '../sketch/types';
import type { EndpointId } from './exposure';

/** The resolved `management.*` settings the actuator runs from (`DiagConfig['actuator']`). */
export type ActuatorConfig = DiagConfig['actuator'];

/**
 * Everything the actuator reads. The server holds no state of its own: each request calls these, so a
 * response reflects the application up to that request. Implementations must not change state when read.
 */
export interface ActuatorSources {
  /** The live ghost snapshot, or the DISABLED object (with how to enable tracking) when Phase 2 is off. */
  ghosts(): GhostReport | GhostTrackingDisabled;
  /**
   * Optional: a number that changes whenever `ghosts()` would answer differently. The tracker can bump it on
   * each first touch, which happens at most once per bean, so in steady state it never changes. When present,
   * the serialised snapshot is reused while the number is unchanged and polling costs no serialisation; when
   * absent, every request serialises a fresh snapshot.
   */
  ghostsVersion?(): number;
  /** The start-up report (`diag-report.json` content), or undefined while the container has not finished starting. */
  diagReport(): object | undefined;
  /** The start-up timeline in Spring Boot's shape, once the container has started; optional. */
  startup?(): object | undefined;
  /**
   * The service's verdicts with their provenance (`{base}/diag/ledger`): read from the ghost ledger when one is
   * configured, else this process's run; undefined before the container has started. Optional.
   */
  ledger?(): Promise<object | undefined>;
  /** The report page with live data and its Content-Security-Policy, once the container has started; optional. */
  diagView?(): { html: string; csp: string } | undefined;
  /**
   * The sketch registry. A function rather than a value so that the registry (and the native library behind
   * it) can be created lazily: the actuator must never be the reason native code is loaded.
   */
  sketches(): SketchRegistryView;
}

/** Tuning knobs with safe defaults; tests shorten the timeouts. All durations in milliseconds. */
export interface ActuatorOptions {
  /** Time allowed to receive a request's headers (slow-loris bound). Default 10 000. */
  readonly headersTimeoutMs?: number;
  /** Time allowed to receive a whole request. Default 15 000. */
  readonly requestTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept. Default 5 000. */
  readonly keepAliveTimeoutMs?: number;
  /** A socket with no traffic at all for this long is closed. Default 30 000. */
  readonly idleSocketTimeoutMs?: number;
  /** How long `stop()` lets in-flight requests finish before closing their sockets. Default 3 000. */
  readonly gracefulStopTimeoutMs?: number;
  /** Limit on the request line plus headers, in bytes. Default 16 384. */
  readonly maxHeaderBytes?: number;
  /** Concurrent connections accepted; further ones are closed at once. Default 256. */
  readonly maxConnections?: number;
}

/** A running actuator. */
export interface ActuatorHandle {
  /** The port actually bound (the chosen one when configured with 0). */
  readonly port: number;
  /** The address bound, as configured (`127.0.0.1` by default). */
  readonly address: string;
  /** Absolute URL of the `_links` index, e.g. `http://127.0.0.1:8081/actuator`. */
  readonly url: string;
  /** Endpoint ids served after applying include and exclude. */
  readonly exposed: readonly EndpointId[];
  /**
   * Stops accepting connections, lets in-flight requests finish (up to `gracefulStopTimeoutMs`), closes
   * keep-alive sockets. Idempotent: every call returns the same promise. Never rejects.
   */
  stop(): Promise<void>;
}
