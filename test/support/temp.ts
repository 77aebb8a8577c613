import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { TEMP_DIRS_GLOBAL } from './temp-global';

function registry(): Set<string> {
  const g = globalThis as Record<string, unknown>;
  let dirs = g[TEMP_DIRS_GLOBAL] as Set<string> | undefined;
  if (!dirs) g[TEMP_DIRS_GLOBAL] = dirs = new Set<string>();
  return dirs;
}

/**
 * A fresh `diag-<prefix>-*` directory under the temp dir, removed when the test file ends, pass or fail (by the
 * test environment, after the file's own afterAll hooks have stopped its processes). Inside `npm test` the
 * temp dir is the run's own (global-setup.ts), removed at the end as well.
 */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `diag-${prefix}-`));
  registry().add(dir);
  return dir;
}
