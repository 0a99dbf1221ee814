// Drops what this run made on a shared server, stops the embedded one, and deletes the run's
// temporary folder (see global-setup.mjs). Jest runs it whether the tests passed or not.
import { adminQuery } from '../../scripts/lib/temp-database.mjs';
import { restoreTmpdir } from './run-tmpdir.mjs';
import { removeServiceBuild } from './service-build.mjs';

export default async function globalTeardown() {
  const server = globalThis.__testDatabaseServer;
  try {
    if (server?.template && process.env.TEST_DATABASE_URL) {
      const suffix = server.template.replace('vpn_template_', '');
      const { rows } = await adminQuery(
        server.adminUrl,
        `SELECT datname FROM pg_database WHERE datname LIKE 'vpn_test_${suffix}_%' OR datname = '${server.template}'`,
      );
      for (const { datname } of rows) {
        await adminQuery(
          server.adminUrl,
          `DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`,
        ).catch(() => {});
      }
    }
    await server?.stop();
  } finally {
    removeServiceBuild(globalThis.__testServiceBuild);
    restoreTmpdir();
  }
}
