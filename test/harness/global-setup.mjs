// Starts one PostgreSQL for the whole run (embedded, or the server of TEST_DATABASE_URL), migrates
// a template database once, and tells the test files where it is. Each file then copies the
// template into a database of its own (test/harness/database.ts).
import { randomBytes } from 'node:crypto';
import { adminQuery, databaseUrl, startTestServer } from '../../scripts/lib/temp-database.mjs';
import { requireTs } from '../../scripts/lib/typescript.mjs';

export default async function globalSetup() {
  const started = Date.now();
  const server = await startTestServer();
  const template = `vpn_template_${randomBytes(4).toString('hex')}`;
  await adminQuery(server.adminUrl, `CREATE DATABASE "${template}"`);

  const { DataSource } = requireTs('node_modules/typeorm/index.js');
  const { dataSourceOptions } = requireTs('src/database/data-source.ts');
  const dataSource = new DataSource(dataSourceOptions(databaseUrl(server.adminUrl, template)));
  await dataSource.initialize();
  await dataSource.runMigrations();
  await dataSource.destroy();

  process.env.TEST_PG_ADMIN_URL = server.adminUrl;
  process.env.TEST_PG_TEMPLATE = template;
  globalThis.__testDatabaseServer = { ...server, template };
  if (process.env.TEST_HARNESS_VERBOSE)
    console.log(`\ntest database ready in ${Date.now() - started} ms`);
}
