import { join } from 'node:path';
import type { MigrationInterface } from 'typeorm';

type MigrationClass = new () => MigrationInterface;

/**
 * The top-level `migrations/` folder. The build compiles it apart from `src/` (tsconfig.migrations.json)
 * into `dist/migrations`, beside the compiled `dist/database`; run from the sources (tests, ts-node,
 * the TypeORM CLI in development) this file is `src/database/migrations.ts` and the folder is two
 * levels up.
 */
export const MIGRATIONS_DIR = join(
  __dirname,
  __filename.endsWith('.ts') ? join('..', '..', 'migrations') : join('..', 'migrations'),
);

/** Every migration in order, as `migrations/index.ts` lists them. */
export function loadMigrations(): MigrationClass[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require(join(MIGRATIONS_DIR, 'index')) as { MIGRATIONS: MigrationClass[] };
  return loaded.MIGRATIONS;
}
