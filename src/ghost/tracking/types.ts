import type { BeanVerdict } from '../verdicts';
import type { EndpointVerdict } from '../member-verdicts';
/**
 * Shapes of the ghost detector's outputs. Field names are the contract's (SPEC 3); readers outside the core
 * (actuator, telemetry) depend on these types only.
 */

import type { BeanScope } from '../analysis/bean-graph';
import type { UnsupportedPackage } from '../../patching/versions';

/** Why a bean is not tracked in Phase 2. Strings are the report's own. */
export type UntrackableReason =
  | 'already-proxied'
  | 'factory-bean'
  | 'final-class'
  /** The class's prototype is frozen, sealed or not extensible: the wrappers live there (an addition to SPEC 3). */
  | 'frozen-prototype'
  | 'non-singleton'
  | 'excluded'
  | 'no-methods'
  /**
   * A `useExisting` alias: its instance is its target's, whose calls are the target's; the alias is used when
   * something resolves its token (Phase 1's edges and lookups), which no call on the instance can tell.
   */
  | 'alias'
  | `proxy-failed: ${string}`;

/** `diag-ghost-report.json` and the live snapshot (Phase 2 on). */
export interface GhostReport {
  readonly disclaimer: string;
  readonly trackedCount: number;
  readonly touchedCount: number;
  readonly untouchedCount: number;
  readonly untouched: string[];
  readonly touched: string[];
  readonly untrackableCount: number;
  readonly untrackable: Record<string, string>;
  readonly frameworkSkipped: number;
  /** Which dependency-injection framework the beans belong to (`nestjs`, `tsyringe`…), once one is known. */
  readonly framework?: string;
  /**
   * Lazy containers only (InversifyJS, tsyringe, awilix): application bindings never resolved since the
   * process started, kept current as the application runs. One still listed after real traffic is the
   * strongest sign of a dead binding these containers can give.
   */
  readonly neverResolvedCount?: number;
  readonly neverResolved?: string[];
  /**
   * One verdict per application bean from both phases and this run's evidence (`in-use`, `never-touched`,
   * `insufficient-evidence`, `untrackable`), most likely dead first: present once the start-up report exists.
   */
  readonly verdicts?: BeanVerdict[];
  /**
   * Method depth (`diag.ghost-tracking.depth=method`, the default): each tracked bean's methods (its class
   * chain's, lifecycle hooks left out), each to the ISO time of its first call on any instance of the class,
   * or null while it has not been called. What processes merge; the verdicts carry the judged form.
   */
  readonly methods?: Record<string, Record<string, string | null>>;
  /**
   * The entry points the framework calls (routes, resolvers, listeners, jobs), each with its handler method's
   * verdict, most likely dead first: present beside `verdicts` once the inventory has them.
   */
  readonly endpoints?: EndpointVerdict[];
  /**
   * The containers' packages this process loaded in a version diag-instrumentation does not support: left
   * unpatched, so nothing of theirs is in the lists above (said once in the log as well).
   */
  readonly unsupported?: UnsupportedPackage[];
}

/** What the live snapshot answers with Phase 2 off. */
export interface GhostTrackingDisabled {
  readonly status: 'DISABLED';
  readonly message: string;
}

/** Anything that can produce the live ghost snapshot (the tracker, or a fake in tests). */
export interface GhostSnapshotSource {
  ghostSnapshot(): GhostReport | GhostTrackingDisabled;
}

// One scope vocabulary for the graph and the tracker: an adapter hands the tracker the scope it put in the graph.
export type { BeanScope };

/** What the caller (the framework hook) knows about a bean when it hands it to `GhostTracker.track`. */
export interface TrackOptions {
  /**
   * Defaults to `singleton`. Anything else is reported as `non-singleton`: only singletons are tracked, since one
   * flag per name would misstate beans that have many instances.
   */
  readonly scope?: BeanScope;
  /** A bean registered by the framework or a library module: counted in `frameworkSkipped`, never wrapped. */
  readonly framework?: boolean;
  /** Container infrastructure (factories, internal providers): reported as `factory-bean`, never wrapped. */
  readonly infrastructure?: boolean;
  /** A `useExisting` alias: reported as `alias`, never linked to its target's touches. */
  readonly alias?: boolean;
  /** What the bean belongs to (an application's container): `GhostTracker.end(owner)` ends its tracking. */
  readonly owner?: object;
}

/** The result of one `GhostTracker.track` call. The instance is never replaced: there is nothing to swap in. */
export type TrackOutcome =
  | {
      /** Wrapped now, or linked to the flag of an instance the tracker already wraps (`aliasOf`). */
      readonly status: 'tracked';
      readonly name: string;
      /** Number of methods whose first call flips the flag. */
      readonly methods: number;
      /** Set when the same object was already tracked under another name: both names now share its touches. */
      readonly aliasOf?: string;
    }
  | {
      /** The same object was already tracked under this very name; nothing was changed. */
      readonly status: 'already-tracked';
      readonly name: string;
    }
  | { readonly status: 'untrackable'; readonly name: string; readonly reason: UntrackableReason }
  | {
      /** Counted in `frameworkSkipped`, not named in the report. */
      readonly status: 'framework';
      readonly name: string;
    };
