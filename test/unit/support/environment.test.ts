/**
 * A jest run ends clean however slow the machine (issue #45): jest's workers are asked to exit when the last file
 * ends and are force-killed half a second later ("A worker process has failed to exit gracefully"), so a file
 * whose server or child closes a moment after its afterAll left the warning behind on a busy machine. The test
 * environment waits for what a file opened to close, and names a file whose leftovers never do.
 *
 * Runs a real jest, in workers, on two small test files under the project's environment.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { trackChild } from '../../support/children';
import { tempDir } from '../../support/temp';

const ROOT = path.resolve(__dirname, '../../..');

/** Runs jest on `files` (name → source) with the project's test environment, in two workers. */
async function runJest(files: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const dir = tempDir('env-test');
  for (const [name, source] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), source);
  const config = {
    rootDir: dir,
    testEnvironment: path.join(ROOT, 'test/support/environment.ts'),
    // Transpiled only (the project's own run type-checks the environment): seconds instead of twenty.
    transform: {
      '^.+\\.ts$': [
        require.resolve('ts-jest'),
        { tsconfig: { target: 'ES2022', module: 'commonjs', esModuleInterop: true, isolatedModules: true } },
      ],
    },
    cacheDirectory: path.join(dir, '.cache'),
    testMatch: ['**/*.test.js'],
  };
  fs.writeFileSync(path.join(dir, 'jest.config.json'), JSON.stringify(config));
  const jest = trackChild(
    spawn(
      process.execPath,
      [require.resolve('jest/bin/jest'), '--config', path.join(dir, 'jest.config.json'), '--maxWorkers=2', '--ci'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DIAG_TEST_HANDLES: '' } },
    ),
  );
  let output = '';
  jest.stdout!.on('data', (d) => (output += d));
  jest.stderr!.on('data', (d) => (output += d));
  const code = await new Promise<number | null>((r) => jest.once('close', r));
  return { code, output };
}

/** Two files, so that jest runs them in workers; each leaves `leftover` behind after its one test. */
function twoFiles(leftover: string): Record<string, string> {
  const file = `test('passes', () => { ${leftover} expect(1).toBe(1); });\n`;
  return { 'a.test.js': file, 'b.test.js': file };
}

it('waits for what a file leaves to close a moment later: no worker is force-exited', async () => {
  // A timer a second and a half long stands for a server's keep-alive socket or a killed child's handle that
  // closes after the file ended: three times jest's grace.
  const { code, output } = await runJest(twoFiles('setTimeout(() => {}, 1500);'));
  expect(code).toBe(0);
  expect(output).toMatch(/2 passed/);
  expect(output).not.toMatch(/failed to exit gracefully/);
  expect(output).not.toMatch(/left open/);
}, 60_000);

it('names the file and what it left when its leftovers never close', async () => {
  const { output } = await runJest(twoFiles('setInterval(() => {}, 1000);'));
  expect(output).toMatch(/\[test environment\] \S*a\.test\.js left open: Timeout×1/);
}, 60_000);
