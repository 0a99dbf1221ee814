/** One PostgreSQL for the run, a database per test file; see test/harness/global-setup.mjs. */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/agent'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/agent/dist/'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }],
  },
  globalSetup: '<rootDir>/test/harness/global-setup.mjs',
  globalTeardown: '<rootDir>/test/harness/global-teardown.mjs',
  testTimeout: 30000,
  // Not jest's default (a folder in the temporary folder): a run leaves the temporary folder as it
  // found it (see test/harness/run-tmpdir.mjs).
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  maxWorkers: process.env.CI ? 2 : '50%',
};
