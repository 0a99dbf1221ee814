import { DataSource } from 'typeorm';
import { loadDatabaseUrls, SettingsError } from './config/settings';
import { dataSourceOptions } from './database/data-source';
import { ENTITIES } from './entities';

/**
 * The TypeORM CLI's data source (`npm run migration:*`): `DATABASE_DIRECT_URL` names the database
 * when the service goes through a pooler (migrations apply to PostgreSQL itself), else `DATABASE_URL`.
 */
let url: string | null;
try {
  const { databaseUrl, databaseDirectUrl } = loadDatabaseUrls();
  url = databaseDirectUrl ?? databaseUrl;
} catch (error) {
  if (!(error instanceof SettingsError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
if (!url) {
  // One line, not the CLI's stack trace of a failed data source load.
  process.stderr.write(
    'DATABASE_URL must be set for the migration commands, e.g. ' +
      'DATABASE_URL=postgresql://user:password@host:5432/database npm run migration:run\n',
  );
  process.exit(1);
}

export default new DataSource(dataSourceOptions(url, { entities: ENTITIES }));
