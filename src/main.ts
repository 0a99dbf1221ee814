import { Logger } from '@nestjs/common';
import { createApp } from './app.factory';
import { runCreateOwner } from './auth/create-owner.command';
import { runSeedDemo } from './billing/seed-demo.command';
import { loadSettings, type Settings, SettingsError } from './config/settings';
import { type EmbeddedDatabase, startEmbeddedPostgres } from './database/embedded-postgres';
import { join } from 'node:path';

async function main(): Promise<void> {
  const settings = loadSettingsOrExit();
  let database: EmbeddedDatabase | undefined;
  let app: Awaited<ReturnType<typeof createApp>> | undefined;

  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) return;
    closing = true;
    new Logger('Main').log(`${signal} received, shutting down`);
    await app?.close().catch(() => undefined);
    await database?.stop().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGINT', (signal) => void shutdown(signal));
  process.once('SIGTERM', (signal) => void shutdown(signal));

  try {
    database = await openDatabase(settings);
    const command = process.argv.includes('--create-owner')
      ? runCreateOwner
      : process.argv.includes('--seed-demo')
        ? runSeedDemo
        : null;
    if (command) {
      const code = await command(settings, database.url);
      await database.stop();
      process.exit(code);
    }
    app = await createApp({ settings, databaseUrl: database.url, schedule: true });
    await app.listen(settings.port, settings.host);
    new Logger('Main').log(`listening on http://${settings.host}:${settings.port}/api/v1`);
  } catch (error) {
    console.error('start-up failed:', error instanceof Error ? error.message : error);
    await app?.close().catch(() => undefined);
    await database?.stop().catch(() => undefined);
    process.exit(1);
  }
}

function loadSettingsOrExit(): Settings {
  try {
    return loadSettings();
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

async function openDatabase(settings: Settings): Promise<EmbeddedDatabase> {
  if (settings.databaseUrl) return { url: settings.databaseUrl, stop: async () => undefined };
  const dir = join(settings.dataDir, 'postgres');
  console.warn(
    `WARNING: DATABASE_URL is unset; using an embedded PostgreSQL in ${dir} (development only).`,
  );
  return startEmbeddedPostgres({ dir, persistent: true });
}

void main();
