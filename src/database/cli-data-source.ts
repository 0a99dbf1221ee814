import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source';

/**
 * The TypeORM CLI's data source (`npm run migration:*`): `DATABASE_DIRECT_URL` names the database
 * when the service goes through a pooler (migrations apply to PostgreSQL itself), else `DATABASE_URL`.
 */
const url = process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL;
if (!url) {
  throw new Error('DATABASE_URL must be set for the migration commands');
}

export default new DataSource(dataSourceOptions(url));
