/**
 * diag-ghost-report.json written by several node processes of one run at once, from dist/ (the locked merge in
 * src/ghost/reports/ghost-report-file.ts); its merge rules in one process are in test/unit/ghost/reports.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../support/temp';

const tmp = (): string => tempDir('report-writers');

describe('diag-ghost-report.json shared by several processes', () => {
  it('loses no touch when many writers race (forked processes)', async () => {
    const { fork } = await import('node:child_process');
    const dir = tmp();
    const file = path.join(dir, 'diag-ghost-report.json');
    const script = path.join(dir, 'writer.js');
    const src = path.resolve(__dirname, '../../../src');
    fs.writeFileSync(
      script,

      `const { writeGhostReport } = require(${JSON.stringify(path.join(src, '..', 'dist', 'ghost', 'reports', 'ghost-report-file.js'))});
         const { GhostTracker } = require(${JSON.stringify(path.join(src, '..', 'dist', 'ghost', 'tracking', 'tracker.js'))});
         const me = process.argv[2];
         const t = new GhostTracker();
         const names = Array.from({ length: 8 }, (_, i) => 'Bean' + i);
         const beans = names.map((n) => { const b = { go() { return 1; } }; t.track(n, b); return b; });
         beans[Number(me)].go();
         for (let i = 0; i < 20; i++) writeGhostReport(${JSON.stringify(file)}, t.snapshot(), 'shared-run');`,
    );
    if (!fs.existsSync(path.join(src, '..', 'dist', 'ghost', 'reports', 'ghost-report-file.js'))) {
      throw new Error('dist/ is missing: run the global setup (npm test) first');
    }
    const children = Array.from({ length: 8 }, (_, i) => fork(script, [String(i)], { stdio: 'ignore' }));
    const codes = await Promise.all(children.map((c) => new Promise((r) => c.once('exit', r))));
    expect(codes).toEqual(Array(8).fill(0));
    const final = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(final.touched).toHaveLength(8);
    expect(final.untouchedCount).toBe(0);
    expect(final.processes).toHaveLength(8);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp') || f.endsWith('.lock'))).toEqual([]);
  });
});
