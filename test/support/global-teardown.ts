import * as fs from 'node:fs';
import { RUN_TMP_ENV } from './global-setup';

/** Removes the run's temporary directory, even when tests failed or a started process left files behind. */
export default async function globalTeardown(): Promise<void> {
  const runTmp = process.env[RUN_TMP_ENV];
  if (runTmp) fs.rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
}
