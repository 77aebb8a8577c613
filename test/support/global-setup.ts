import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  findProgram,
  missingServiceMessage,
  REQUIRE_SERVICES_ENV,
  servicesRequired,
  SERVICES,
  type ServiceName,
} from './services';

const prepareFixtures = require('../../scripts/prepare-test-fixtures.js') as () => Promise<void>;

/** Where this run's temporary files go; global-teardown.ts removes it whatever the tests did. */
export const RUN_TMP_ENV = 'DIAG_TEST_RUN_TMP';

/**
 * Jest globalSetup: one temporary directory for the whole run, handed to every worker and every process a
 * test starts through TMPDIR (so even a crashed app's extraction directory goes there), the fixtures built,
 * and one line per missing service program.
 */
export default async function globalSetup(): Promise<void> {
  const runTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-test-run-'));
  process.env[RUN_TMP_ENV] = runTmp;
  process.env.TMPDIR = runTmp;

  const missing = (Object.keys(SERVICES) as ServiceName[]).filter((name) => findProgram(name) === undefined);
  for (const name of missing) {
    process.stdout.write(
      `\nservice tests ${servicesRequired() ? 'FAIL' : 'skipped'}: ${missingServiceMessage(name)}\n`,
    );
  }
  if (missing.length > 0 && !servicesRequired()) {
    process.stdout.write(`(set ${REQUIRE_SERVICES_ENV}=1 to make a missing service a failure, as CI does)\n`);
  }
  try {
    await prepareFixtures();
  } catch (err) {
    // Jest runs no teardown after a failed setup (a build that does not compile): the run's directory goes here.
    fs.rmSync(runTmp, { recursive: true, force: true });
    throw err;
  }
}
