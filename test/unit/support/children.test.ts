/**
 * The test environment kills what a test file left running (issue #45): a child a failed test never stopped kept its
 * pipes open, and the jest worker with them ("A worker process has failed to exit gracefully").
 */
import { spawn } from 'node:child_process';
import { trackChild } from '../../support/children';
import { killLeftovers } from '../../support/environment';
import { CHILDREN_GLOBAL } from '../../support/temp-global';

it('a tracked child still running when the file ends is killed, its pipes closed; one that ended is forgotten', async () => {
  const registry = () => (globalThis as Record<string, unknown>)[CHILDREN_GLOBAL] as Set<unknown>;
  const ended = trackChild(spawn(process.execPath, ['-e', ''], { stdio: ['ignore', 'pipe', 'pipe'] }));
  await new Promise((r) => ended.once('exit', r));
  expect(registry().has(ended)).toBe(false);

  const left = trackChild(
    spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  expect(registry().has(left)).toBe(true);
  const gone = new Promise((r) => left.once('exit', (_code, signal) => r(signal)));
  await killLeftovers(registry() as never);
  expect(await gone).toBe('SIGKILL');
  expect(left.stdout!.destroyed).toBe(true);
});
