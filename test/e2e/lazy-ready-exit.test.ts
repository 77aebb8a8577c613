/**
 * A lazy container's analysis runs on turns after the server listens (src/adapters/lazy/bindings.ts): a process
 * that ends before those turns come, in its own `listening` callback (a smoke check, a CLI that serves one moment),
 * still gets its Phase 1 report, written at its exit, and ends as it would without the instrumentation.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './support/app-process';

const root = path.resolve(__dirname, '..', '..');

/** An awilix application that exits with code 3 as soon as it listens. */
const script = (instrumented: boolean): string => `
  ${instrumented ? `new (require(${JSON.stringify(root)}).DiagInstrumentation)();` : ''}
  const { asClass, createContainer } = require(${JSON.stringify(require.resolve('awilix'))});
  class Used { run() { return 1; } }
  class Unused { run() { return 2; } }
  const container = createContainer();
  container.register({ used: asClass(Used).singleton(), unused: asClass(Unused).singleton() });
  container.resolve('used').run();
  const server = require('node:http').createServer();
  server.listen(0, '127.0.0.1', () => process.exit(3));
`;

function run(instrumented: boolean): { status: number | null; reportDir: string; stderr: string } {
  const reportDir = tempDir('lazy-exit');
  const result = spawnSync(process.execPath, ['-e', script(instrumented)], {
    env: { ...process.env, DIAG_REPORT_DIR: reportDir, DIAG_LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, reportDir, stderr: result.stderr };
}

it('a process that exits in its listening callback gets its report at exit, with its own exit code', () => {
  const bare = run(false);
  const instrumented = run(true);
  expect(bare.status).toBe(3);
  expect(instrumented.status).toBe(3);
  const file = path.join(instrumented.reportDir, 'diag-report.json');
  expect(fs.existsSync(file)).toBe(true);
  const report = JSON.parse(fs.readFileSync(file, 'utf8'));
  expect(report.framework).toBe('awilix');
  expect(report.ghostCandidates.beans).toEqual(['unused']);
  expect(instrumented.stderr).toBe('');
});
