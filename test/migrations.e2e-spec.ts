import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source';
import { ENTITIES } from '../src/entities';
import { MIGRATIONS } from '../migrations';

async function admin(sql: string): Promise<void> {
  const client = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('migrations', () => {
  it('run on an empty database, revert all the way down, and run again', async () => {
    const name = `vpn_test_migrations_${randomBytes(5).toString('hex')}`;
    await admin(`CREATE DATABASE "${name}"`);
    const url = new URL(process.env.TEST_PG_ADMIN_URL as string);
    url.pathname = `/${name}`;
    const dataSource = new DataSource(dataSourceOptions(url.toString(), { entities: ENTITIES }));
    await dataSource.initialize();
    try {
      const tables = async (): Promise<string[]> =>
        (
          await dataSource.query(
            `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'migrations' ORDER BY 1`,
          )
        ).map((r: { table_name: string }) => r.table_name);

      expect((await dataSource.runMigrations()).length).toBe(MIGRATIONS.length);
      const full = await tables();
      expect(full).toEqual(expect.arrayContaining(['users', 'refresh_sessions', 'app_settings']));

      for (let i = 0; i < MIGRATIONS.length; i++) await dataSource.undoLastMigration();
      expect(await tables()).toEqual([]);

      expect((await dataSource.runMigrations()).length).toBe(MIGRATIONS.length);
      expect(await tables()).toEqual(full);

      // The tables every traffic report rewrites: room on each page for the new row versions, and
      // (users, devices) analyzed at the pace their dates change, not their counters (0031).
      const options = (await dataSource.query(
        `SELECT relname, reloptions FROM pg_class
          WHERE relname IN ('users', 'devices', 'nodes') ORDER BY relname`,
      )) as { relname: string; reloptions: string[] }[];
      expect(options).toEqual([
        {
          relname: 'devices',
          reloptions: ['fillfactor=70', 'autovacuum_analyze_scale_factor=2'],
        },
        { relname: 'nodes', reloptions: ['fillfactor=70'] },
        { relname: 'users', reloptions: ['fillfactor=70', 'autovacuum_analyze_scale_factor=2'] },
      ]);
    } finally {
      await dataSource.destroy();
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  });
});
