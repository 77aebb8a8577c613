/**
 * A monorepo's application (test/fixtures/apps/mono-app: apps/api using libs/shared), started from its own main
 * script as a monorepo starts it: Phase 1 alone says which candidates live in a shared library (issue #44).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LOADING_CASES, launchSpec, quietOtelEnv, tempDir } from './support/app-process';

describe.each(LOADING_CASES)('a monorepo application (%s)', (loading) => {
  let report: any;
  let logs = '';

  beforeAll(async () => {
    const spec = launchSpec(loading, 'mono-app');
    const reportDir = tempDir('report');
    const proc = spawn(spec.node, [...spec.args.slice(0, 2), path.join('apps', 'api', 'src', 'main.js')], {
      cwd: spec.cwd,
      env: { ...process.env, ...quietOtelEnv(), DIAG_REPORT_DIR: reportDir, DIAG_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    try {
      const deadline = Date.now() + 30_000;
      // The start-up line comes once the report is written (it names it): waited for, not raced (a loaded run read
      // the output between the two).
      while (
        !/LISTENING \d+/.test(out) ||
        !fs.existsSync(path.join(reportDir, 'diag-report.json')) ||
        !/ghost candidates: \d+ of \d+ application beans/.test(out)
      ) {
        if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`did not start:\n${out}\n${logs}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      logs += out;
      report = JSON.parse(fs.readFileSync(path.join(reportDir, 'diag-report.json'), 'utf8'));
    } finally {
      proc.kill('SIGTERM');
      await exited;
    }
  });

  it("says which candidates live in a shared library, outside the application's own source root", () => {
    expect(report.ghostCandidates.beans).toEqual(['LocalDraft', 'PushSender']);
    const node = (name: string) => report.graph.nodes.find((n: any) => n.name === name);
    expect(node('PushSender')).toMatchObject({ sharedLibrary: 'libs/shared' });
    expect(node('LocalDraft').sharedLibrary).toBeUndefined();
    expect(logs).toMatch(/1 of them in shared library \(libs\/shared\): remove the registration here, not the class/);
  });
});
