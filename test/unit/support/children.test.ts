/**
 * The test environment kills what a test file left running (issue #45): a child a failed test never stopped kept its
 * pipes open, and the jest worker with them ("A worker process has failed to exit gracefully").
 */
import { spawn } from 'node:child_process';
import { trackChild } from '../../support/children';
import { killLeftovers } from '../../support/environment';
import { CHILDREN_GLOBAL } from '../../support/temp-global';

it('a tracked child still running when the file ends is killed; its pipes are closed, and those of one that ended', async () => {
  const registry = () => (globalThis as Record<string, unknown>)[CHILDREN_GLOBAL] as Set<unknown>;
  // A child that ended, but whose stdout a grandchild it started (and named) still holds open.
  const ended = trackChild(
    spawn(
      process.execPath,
      [
        '-e',
        "const g = require('child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'inherit', detached: true }); g.unref(); console.log(g.pid)",
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  let printed = '';
  ended.stdout!.on('data', (d) => (printed += d));
  await new Promise((r) => ended.once('exit', r));
  const grandchild = Number(printed.trim());
  try {
    expect(ended.stdout!.destroyed).toBe(false);
    await checkLeftovers(registry, ended);
  } finally {
    try {
      process.kill(grandchild, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

async function checkLeftovers(registry: () => Set<unknown>, ended: ReturnType<typeof spawn>): Promise<void> {
  const left = trackChild(
    spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  expect(registry().has(left)).toBe(true);
  const gone = new Promise((r) => left.once('exit', (_code, signal) => r(signal)));
  await killLeftovers(registry() as never);
  expect(await gone).toBe('SIGKILL');
  expect(left.stdout!.destroyed).toBe(true);
  expect(ended.stdout!.destroyed).toBe(true);
}
