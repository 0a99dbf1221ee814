/**
 * Three tiers, each a jest project (docs/development.md, "Test tiers"); `npm test` runs them one
 * after another (scripts/test.mjs), `npx jest <file>` runs a file in whichever tier holds it.
 *
 * - unit: `*.spec.ts`, no database and no other process; only the run's temporary folder.
 * - e2e: `*.e2e-spec.ts`, the service in the test's process on one PostgreSQL for the run and a
 *   database per test file (test/harness/global-setup.mjs).
 * - slow: the e2e files listed in SLOW: the production image, browsers, the real tunnel, another
 *   PostgreSQL or several service processes, load and faults.
 *
 * Jest runs a project's global setup only when the run holds a test of that project, so a run of
 * unit tests alone starts no PostgreSQL.
 */

/** Files (or folders, ending in `/`) of the slow tier, from the repository's root. */
const SLOW = [
  'agent/test/crash.e2e-spec.ts',
  'agent/test/credentials.e2e-spec.ts',
  'agent/test/link-tunnel.e2e-spec.ts',
  'agent/test/tunnel.e2e-spec.ts',
  'test/browser/',
  'test/credentials-scale.e2e-spec.ts',
  'test/database-freeze.e2e-spec.ts',
  'test/database-lock.e2e-spec.ts',
  'test/database-restart.e2e-spec.ts',
  'test/embedded-postgres.e2e-spec.ts',
  'test/hostile-requests.e2e-spec.ts',
  'test/instances.e2e-spec.ts',
  'test/jobs-restart.e2e-spec.ts',
  'test/nodes-core-rules.e2e-spec.ts',
  'test/pgbouncer.e2e-spec.ts',
  'test/production-image.e2e-spec.ts',
  'test/shutdown.e2e-spec.ts',
  'test/slow-clients.e2e-spec.ts',
  'test/startup-database-wait.e2e-spec.ts',
  'test/startup.e2e-spec.ts',
  'test/temp-folder.e2e-spec.ts',
  'test/traffic-bodies-budget.e2e-spec.ts',
];

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What every tier shares. */
const common = {
  rootDir: '.',
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/agent'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/agent/dist/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }],
  },
  // Not jest's default (a folder in the temporary folder): a run leaves the temporary folder as it
  // found it (see test/harness/run-tmpdir.mjs).
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
};

/** One PostgreSQL for the run, a database per test file; see test/harness/global-setup.mjs. */
const withDatabase = {
  globalSetup: '<rootDir>/test/harness/global-setup.mjs',
  globalTeardown: '<rootDir>/test/harness/global-teardown.mjs',
};

module.exports = {
  testTimeout: 30000,
  maxWorkers: process.env.CI ? 2 : '50%',
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['**/*.spec.ts'],
      globalSetup: '<rootDir>/test/harness/run-tmpdir-setup.mjs',
      globalTeardown: '<rootDir>/test/harness/run-tmpdir-teardown.mjs',
    },
    {
      ...common,
      ...withDatabase,
      displayName: 'e2e',
      testMatch: ['**/*.e2e-spec.ts'],
      testPathIgnorePatterns: [
        ...common.testPathIgnorePatterns,
        ...SLOW.map((path) => `<rootDir>/${escapeRegExp(path)}`),
      ],
    },
    {
      ...common,
      ...withDatabase,
      displayName: 'slow',
      testMatch: SLOW.map((path) =>
        path.endsWith('/') ? `<rootDir>/${path}**/*.e2e-spec.ts` : `<rootDir>/${path}`,
      ),
    },
  ],
};
