import * as fs from 'node:fs';
import NodeEnvironment from 'jest-environment-node';
import { TEMP_DIRS_GLOBAL } from './temp-global';

/**
 * jest's node environment, plus one duty: once a test file is over — after its own afterAll hooks have stopped
 * the processes it started, pass or fail — remove every directory it made with tempDir().
 */
export default class DiagTestEnvironment extends NodeEnvironment {
  override async teardown(): Promise<void> {
    const dirs = (this.global as Record<string, unknown>)[TEMP_DIRS_GLOBAL];
    if (dirs instanceof Set) {
      for (const dir of dirs as Set<string>) {
        try {
          fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
        } catch {
          /* the run's teardown removes what is left */
        }
      }
    }
    await super.teardown();
  }
}
