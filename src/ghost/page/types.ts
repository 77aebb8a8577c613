import type { EndpointRecord } from '../analysis/bean-graph';
import type { DiagReport } from '../reports/diag-report';
import type { GhostReport } from '../tracking/types';
import type { StartupTimeline } from '../reports/startup-timeline';
import type { LedgerAnswer } from '../ledger/answer';
import type { MethodContract } from '../member-verdicts';

/** What the report page shows: embedded in the HTML as JSON, read by the page's script. */
export interface PageData {
  /** `diag-report.json` content. */
  readonly report: DiagReport;
  /** The ghost snapshot (Phase 2), when tracking is on. */
  readonly ghosts?: GhostReport;
  /** Bean creation times, for the waterfall. */
  readonly startup?: StartupTimeline;
  /**
   * One verdict per application bean with its evidence: the service's ghost ledger when one is configured and
   * has answered, else this process's run. The page's first view.
   */
  readonly verdicts?: LedgerAnswer;
  /** Why the dead methods carry no contract: their TypeScript was not where the application runs (members.ts). */
  readonly contractsNote?: string;
  /** Served live by the actuator (true) or written beside the report (false). */
  readonly live: boolean;
}

/** Where a method is defined: the TypeScript source through the app's source map, else the compiled file. */
export interface SourceLine {
  readonly file: string;
  readonly line: number;
}

/** A tracked bean's method and its verdict (`methods[]` of each bean in the ghost report and the ledger answer). */
export interface JudgedMethod {
  readonly name: string;
  readonly verdict: string;
  readonly source?: SourceLine;
  /** Rare on purpose: the reason (never a finding). */
  readonly kept?: string;
  /** Not called on this bean, but its shared (inherited) code ran on these beans (never a finding). */
  readonly calledThrough?: readonly string[];
  /** Never called, and an interface or abstract class declares it (read where the application's sources are). */
  readonly contract?: MethodContract;
}

/** An entry point and the verdict of its handler method (`endpoints[]` beside the beans' verdicts). */
export interface JudgedEndpoint extends EndpointRecord {
  readonly verdict: string;
  readonly source?: SourceLine;
  /** Rare on purpose: the reason (never a finding). */
  readonly kept?: string;
  /** Why the verdict is not the handler method's plain one (a rare job, a handler not tracked). */
  readonly why?: string;
}

/**
 * What the page reads of the method and endpoint verdicts, wherever they come from (the ledger answer first,
 * else the ghost report): the fields are optional, as a report written before them has none.
 */
export interface JudgedEntryPoints {
  readonly endpoints?: readonly JudgedEndpoint[];
  readonly beans?: ReadonlyArray<{
    readonly name: string;
    /** Its class, when the bean is named otherwise (a DI token: `WALLET_REPOSITORY`). */
    readonly className?: string;
    /** The bean's own verdict. */
    readonly verdict?: string;
    readonly module?: string;
    readonly source?: string;
    readonly methods?: readonly JudgedMethod[];
  }>;
}
