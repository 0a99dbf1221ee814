import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source';

/**
 * The advisory lock every instance of the service takes around `MIGRATIONS_RUN`. Any fixed number
 * works; this one is only ours.
 */
const MIGRATION_LOCK = 4_180_377_201;

/**
 * Applies the pending migrations while holding a PostgreSQL advisory lock, so replicas that start
 * together apply each migration once: the first applies them, the others wait and find none left.
 * Returns the names of the migrations applied by this call.
 */
export async function runMigrationsLocked(url: string): Promise<string[]> {
  // The migrations are SQL of their own: no entity is needed to apply them.
  const dataSource = new DataSource(dataSourceOptions(url, { entities: [] }, { poolSize: 2 }));
  await dataSource.initialize();
  const lockHolder = dataSource.createQueryRunner();
  try {
    await lockHolder.connect();
    await lockHolder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((migration) => migration.name);
    } finally {
      await lockHolder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await lockHolder.release();
    await dataSource.destroy();
  }
}
