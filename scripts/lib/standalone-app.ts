/**
 * The whole service on a throw-away embedded PostgreSQL, with dummy secrets: for tooling that needs
 * the real app outside jest (bench:billing, bench:throttle, client:types). Everything is deleted
 * on close.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.factory';
import { loadSettings, type Settings } from '../../src/config/settings';
import { dataSourceOptions } from '../../src/database/data-source';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { ENTITIES } from '../../src/entities';

export interface StandaloneApp {
  app: NestExpressApplication;
  settings: Settings;
  databaseUrl: string;
  close(): Promise<void>;
}

export async function startStandaloneApp(
  options: { postgresFlags?: string[] } = {},
): Promise<StandaloneApp> {
  const dir = mkdtempSync(join(tmpdir(), 'standalone-app-'));
  // As root the server runs as `postgres`, which must be able to reach the folder.
  chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir, persistent: false, flags: options.postgresFlags });
  const cleanUp = async (): Promise<void> => {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const migrate = new DataSource(dataSourceOptions(pg.url, { entities: ENTITIES }));
    await migrate.initialize();
    await migrate.runMigrations();
    await migrate.destroy();

    const settings = loadSettings({
      NODE_ENV: 'production',
      DATA_DIR: dir,
      DATABASE_URL: pg.url,
      PUBLIC_API_URL: 'https://api.example.test',
      APP_URL: 'https://app.example.test',
      LOG_LEVEL: 'silent',
      JWT_ACCESS_SECRET: 'standalone-jwt-access-secret-0123456789ab',
      INTERNAL_SECRET: 'standalone-internal-secret-0123456789abcd',
      PROXY_TOKEN_SECRET: 'standalone-proxy-token-secret-0123456789',
      DATA_ENCRYPTION_KEY: 'standalone-data-encryption-key-01234567',
      SEED_PEPPER: 'standalone-seed-pepper-0123456789abcdefgh',
    });
    const app = await createApp({ settings, databaseUrl: pg.url, schedule: false });
    return {
      app,
      settings,
      databaseUrl: pg.url,
      async close() {
        await app.close();
        await cleanUp();
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
