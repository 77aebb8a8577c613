/**
 * The ready-made Prometheus rules (examples/prometheus/diag.rules.yml) through Debian's promtool: the file is
 * valid, and its unit tests (diag.rules.test.yml: eight days of two instances) pass — the alert names the one
 * bean no instance touched for 7 days, not a used one, not one deployed 3 days ago.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeWithService } from '../../support/services';
import { tempDir } from '../../support/temp';

const EXAMPLE = path.resolve(__dirname, '..', '..', '..', 'examples', 'prometheus');

describeWithService('promtool', 'the Prometheus rules for diag metrics', (promtool) => {
  const run = (cwd: string, ...args: string[]) => spawnSync(promtool, args, { cwd, encoding: 'utf8' });

  it('are valid rules', () => {
    const r = run(EXAMPLE, 'check', 'rules', 'diag.rules.yml');
    expect(r.stdout + r.stderr).toContain('SUCCESS: 6 rules found');
    expect(r.status).toBe(0);
  });

  it('pass their unit tests: recording rules, the untouched-bean alert and the fallback alert', () => {
    const r = run(EXAMPLE, 'test', 'rules', 'diag.rules.test.yml');
    expect(r.stdout + r.stderr).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('fail their unit tests when the alert would name a bean the fleet used', () => {
    const dir = tempDir('rules');
    fs.copyFileSync(path.join(EXAMPLE, 'diag.rules.yml'), path.join(dir, 'diag.rules.yml'));
    const tests = fs.readFileSync(path.join(EXAMPLE, 'diag.rules.test.yml'), 'utf8');
    const wrong = tests.replace('diag_bean_name: LegacyReportService', 'diag_bean_name: UsersService');
    expect(wrong).not.toBe(tests);
    fs.writeFileSync(path.join(dir, 'diag.rules.test.yml'), wrong);
    const r = run(dir, 'test', 'rules', 'diag.rules.test.yml');
    expect(r.status).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/FAILED/);
  });
});
