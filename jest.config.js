/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: { warnOnly: false } }] },
  // Builds dist/ and the fixture apps that the end-to-end tests start as real node processes.
  globalSetup: '<rootDir>/scripts/prepare-test-fixtures.js',
  // End-to-end tests start real processes; two workers on a 2-core machine.
  maxWorkers: 2,
  testTimeout: 60_000,
};
