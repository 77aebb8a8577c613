/**
 * `check` on a run's diag-ghost-report.json gates on a lazy container's bindings never resolved in the run as on its
 * untouched beans: an outside trial's one dead interceptor (a transient, so never tracked) was in `neverResolved`
 * alone, and the check said nothing of it. Read from report files on disk, as the CLI reads them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { countFindings, readFindings } from '../../../src/ghost/cli/check';
import { tempDir } from '../../support/temp';

it('lists the bindings never resolved in the run beside the untouched beans, once each, never a kept one', () => {
  const dir = tempDir('check-never-resolved');
  const file = path.join(dir, 'diag-ghost-report.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      trackedCount: 2,
      untouched: ['ReportBuilder'],
      neverResolved: ['CheckShutterManagerRole', 'ReportBuilder', 'KeptExporter'],
      verdicts: [
        { name: 'CheckShutterManagerRole', verdict: 'untrackable', why: 'Phase 2 cannot tell: non-singleton' },
        { name: 'KeptExporter', verdict: 'untrackable', kept: 'partner export, yearly' },
      ],
    }),
  );
  const { kind, findings } = readFindings(file);
  expect(kind).toBe('untouched-bean');
  expect(findings.map((f) => [f.bean, f.neverResolved === true])).toEqual([
    ['ReportBuilder', false],
    ['CheckShutterManagerRole', true],
  ]);
  // counted as what they are: the report's untouchedCount is the beans' alone
  expect(countFindings(findings, kind, 'new ')).toBe(
    '1 new bean untouched in this run, 1 new binding never resolved in this run',
  );
});
