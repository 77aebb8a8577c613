/**
 * The start-up timeline's shape (src/ghost/reports/boot-profile.ts builds it), apart so that the report page's
 * browser code can use the types without the builder's Node imports.
 */

/** What a step is. */
export type BootStepKind =
  'process' | 'node' | 'preload' | 'diag' | 'package' | 'application' | 'phase' | 'bean' | 'hook';

/** One step of the start-up, times in milliseconds since process start (`performance.now()`). */
export interface BootStep {
  readonly id: number;
  /** `node.bootstrap`, `package.load`, `nest.scan`, `onModuleInit`… (docs/startup.md lists them). */
  readonly name: string;
  readonly kind: BootStepKind;
  readonly start: number;
  readonly end: number;
  /** The part no child step covers. */
  self: number;
  /** A hook's or an async factory's awaited time: from its call's return to its promise settling. */
  readonly wait?: number;
  parent?: number;
  /** On the critical path: what the step's parent waited for last. */
  critical?: boolean;
  /** `package.load`: the package; a bean or hook: its module. */
  readonly package?: string;
  readonly bean?: string;
  readonly module?: string;
  /** `package.load`: files of the package loaded in this step; `application.load`: files of the application. */
  readonly files?: number;
  /** `package.load` from ES modules: evaluation only, estimated (docs/startup.md). */
  readonly esm?: boolean;
  /**
   * `package.load` from inside a function at run time (no load around it) that only packages required: the
   * first of them. Such a package is not one the application loads itself (`topLevel` false).
   */
  readonly requiredBy?: string;
}

/** One package's loads, all entries into it added up. */
export interface PackageLoad {
  readonly name: string;
  readonly version?: string;
  /** Wall time of its outermost loads, nested packages included. */
  readonly inclusive: number;
  /** Without the packages it loaded. */
  readonly self: number;
  /** Times the package was entered from another package or the application. */
  readonly loads: number;
  readonly files: number;
  /** Loaded by the application itself (or a preload), not only by another package. */
  readonly topLevel: boolean;
  readonly esm?: boolean;
}

/** Time no step covers, between two steps. */
export interface BootGap {
  readonly start: number;
  readonly end: number;
  /** The step that ended last before it, and the one that starts after it. */
  readonly after?: string;
  readonly before?: string;
}

export interface BootProfile {
  /** `performance.timeOrigin`: the process start, ms since the epoch. */
  readonly timeOrigin: number;
  /** Ready, ms since process start (undefined when the process has not become ready). */
  readonly ready?: number;
  /** `listen`, `init` (a Nest application context), `listening` or `diagReady` (a lazy container). */
  readonly readyCause?: string;
  /** Where the timeline ends: ready, or now when the process is not ready yet. */
  readonly end: number;
  /** Every step, parents before children (ids in that order). */
  readonly steps: BootStep[];
  /** Packages by self time, slowest first. */
  readonly packages: PackageLoad[];
  /**
   * The instrumentation's own cost on the start-up, ms of self time: its load, its construction, its patches
   * as the packages load, its modules loaded later, and its analysis and report page when they ran before
   * ready. (Its two clock readings per bean and per hook run inside the framework's steps: see
   * docs/benchmarks.md for what they cost.)
   */
  readonly diag: {
    readonly load: number;
    readonly enable: number;
    readonly patch: number;
    readonly modules: number;
    readonly analysis: number;
    readonly total: number;
  };
  readonly coverage: {
    /** ms of [process start, end] inside some step. */
    readonly attributed: number;
    readonly unattributed: number;
    /** attributed ÷ end. */
    readonly share: number;
    readonly gaps: BootGap[];
  };
  /** Modules loaded before the instrumentation (not timed per package): how many, and of which packages. */
  readonly beforeInstrumentation?: {
    readonly modules: number;
    readonly packages: Array<{ name: string; files: number }>;
  };
  /** The close, when one ran: its phases and each bean's hooks. */
  readonly shutdown?: { readonly start: number; readonly end: number; readonly steps: BootStep[] };
}

/** One phase of the report's `startup` section, with its lifecycle hooks when it runs some. */
export interface StartupPhase {
  readonly name: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly selfMs: number;
  readonly critical?: boolean;
}

/** One bean's lifecycle hook. */
export interface StartupHook {
  readonly hook: string;
  readonly bean: string;
  readonly module?: string;
  readonly startMs: number;
  readonly endMs: number;
  /** Time spent before it returned (its code), and awaiting what it returned. */
  readonly syncMs: number;
  readonly waitMs: number;
  readonly critical?: boolean;
}

/** `diag-report.json`'s `startup`: where the process's start went, ms since process start. */
export interface StartupSection {
  /** `performance.timeOrigin` as ISO: the process start the times count from. */
  readonly processStart: string;
  readonly readyMs?: number;
  readonly readyCause?: string;
  readonly coverage: { attributedMs: number; unattributedMs: number; share: number };
  /** The top of the timeline and every framework phase under it, in start order. */
  readonly phases: StartupPhase[];
  readonly packages: Array<Omit<PackageLoad, 'inclusive' | 'self'> & { inclusiveMs: number; selfMs: number }>;
  readonly hooks: StartupHook[];
  /** The instrumentation's own cost, ms. */
  readonly diag: {
    loadMs: number;
    enableMs: number;
    patchMs: number;
    modulesMs: number;
    analysisMs: number;
    totalMs: number;
  };
  /** Time no step covers, with the steps around it. */
  readonly unattributed: Array<{ startMs: number; endMs: number; after?: string; before?: string }>;
  readonly beforeInstrumentation?: BootProfile['beforeInstrumentation'];
  readonly shutdown?: { startMs: number; endMs: number; phases: StartupPhase[]; hooks: StartupHook[] };
}
