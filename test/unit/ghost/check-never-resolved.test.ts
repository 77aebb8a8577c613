/**
 * `check` on a run's diag-ghost-report.json gates on a lazy container's bindings never resolved in the run as on its
 * untouched beans: an outside trial's one dead interceptor (a transient, so never tracked) was in `neverResolved`
 * alone, and the check said nothing of it. Read from report files on disk, as the CLI reads them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { countFindings, readFindings, runCheck } from '../../../src/ghost/cli/check';
import { tempDir } from '../../support/temp';

it('lists the bindings never resolved in the run beside the untouched beans, once each, never a kept one', () => {
  const dir = tempDir('check-never-resolved');
  const file = path.join(dir, 'diag-ghost-report.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      trackedCount: 2,
      untouched: ['ReportBuilder'],
      // UsedElsewhere: a watched singleton whose class another binding made, used though never resolved itself
      touched: ['UsedElsewhere'],
      neverResolved: ['CheckShutterManagerRole', 'ReportBuilder', 'KeptExporter', 'UsedElsewhere'],
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
  // an untouched bean no resolution ever made (a singleton class tracked from ready) is said never resolved too: an
  // outside trial's dead role check lost the words when it became a tracked bean
  expect(findings[0]!.unresolvedToo).toBe(true);
  let text = '';
  runCheck(
    { report: file, updateBaseline: false, format: 'text', version: 'test' },
    (t) => (text += t),
    () => {},
  );
  expect(text).toContain('  ReportBuilder — never resolved in this run\n');
  expect(text).toContain('  CheckShutterManagerRole — never resolved in this run\n');
});
