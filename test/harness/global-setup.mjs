// Starts one PostgreSQL for the run (embedded, or the server of TEST_DATABASE_URL), migrates
// a template database once, and tells the test files where it is. Each file then copies the
// template into a database of its own (test/harness/database.ts). The global setup of the e2e and
// slow tiers (jest.config.js): it runs once when the run holds a file of either, never for a run of
// unit files alone.
//
// Everything the run writes to the temporary folder (the embedded cluster, service data folders,
// settings files, builds) goes into one folder of its own: TMPDIR points there for the test
// files and every process they start, and global-teardown.mjs deletes it, also after failures.
import { randomBytes } from 'node:crypto';
import { adminQuery, databaseUrl, startTestServer } from '../../scripts/lib/temp-database.mjs';
import { requireTs } from '../../scripts/lib/typescript.mjs';
import { restoreTmpdir, useRunTmpdir } from './run-tmpdir.mjs';
import { buildService, removeServiceBuild } from './service-build.mjs';

export default async function globalSetup() {
  const started = Date.now();
  useRunTmpdir();
  try {
    const server = await startTestServer();
    globalThis.__testDatabaseServer = server;
    const template = `vpn_template_${randomBytes(4).toString('hex')}`;
    await adminQuery(server.adminUrl, `CREATE DATABASE "${template}"`);
    globalThis.__testDatabaseServer = { ...server, template };

    const { DataSource } = requireTs('node_modules/typeorm/index.js');
    const { dataSourceOptions } = requireTs('src/database/data-source.ts');
    const { ENTITIES } = requireTs('src/entities.ts');
    const dataSource = new DataSource(
      dataSourceOptions(databaseUrl(server.adminUrl, template), { entities: ENTITIES }),
    );
    await dataSource.initialize();
    await dataSource.runMigrations();
    await dataSource.destroy();

    process.env.TEST_PG_ADMIN_URL = server.adminUrl;
    process.env.TEST_PG_TEMPLATE = template;

    // The service as the tests that start it as a process run it (test/harness/service-process.ts).
    globalThis.__testServiceBuild = buildService();
    process.env.TEST_SERVICE_BUILD = globalThis.__testServiceBuild;
  } catch (error) {
    // Jest runs no teardown when the setup fails: undo here what was made.
    removeServiceBuild(globalThis.__testServiceBuild);
    await globalThis.__testDatabaseServer?.stop().catch(() => {});
    restoreTmpdir({ everyone: true });
    throw error;
  }
  if (process.env.TEST_HARNESS_VERBOSE)
    console.log(`\ntest database ready in ${Date.now() - started} ms`);
}
