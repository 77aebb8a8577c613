/** @type {import('jest').Config} */
module.exports = {
  // jest's node environment that also removes each test file's temporary directories when the file ends.
  testEnvironment: '<rootDir>/test/support/environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Jest's transform cache stays with the project (npm's convention for tool caches), not in the temp directory,
  // where /tmp/jest_<uid> outlived every run.
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: { warnOnly: false } }] },
  // Builds dist/ and the fixture apps that the end-to-end tests start as real node processes, gives the run
  // one temporary directory (removed by the teardown) and names any missing service program.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // End-to-end tests start real processes; two workers on a 2-core machine.
  maxWorkers: 2,
  testTimeout: 60_000,
};
