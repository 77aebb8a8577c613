import type { DiagReport } from '../reports/diag-report';
import type { GhostReport } from '../tracking/types';
import type { StartupTimeline } from '../reports/startup-timeline';
import type { LedgerAnswer } from '../ledger/answer';

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
  /** Served live by the actuator (true) or written beside the report (false). */
  readonly live: boolean;
}
