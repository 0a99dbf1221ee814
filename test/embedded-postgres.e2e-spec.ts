import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { SHARED_ROOT } from '../src/database/postgres-placement';

describe('the embedded PostgreSQL in a folder closed to others (a clone under /root, mode 700)', () => {
  jest.setTimeout(120_000);

  it('starts and answers; as root its cluster moves where the postgres account can reach it', async () => {
    const closed = mkdtempSync(join(tmpdir(), 'private-'));
    chmodSync(closed, 0o700);
    const dir = join(closed, '.data', 'postgres');
    mkdirSync(dir, { recursive: true });
    const server = await startEmbeddedPostgres({ dir, persistent: false });
    try {
      const client = new Client({ connectionString: server.url });
      await client.connect();
      const { rows } = await client.query<{ user: string }>('SELECT current_user AS user');
      await client.end();
      expect(rows).toEqual([{ user: 'postgres' }]);
      const asRoot = process.getuid?.() === 0;
      expect(server.clusterDir.startsWith(`${SHARED_ROOT}/clusters/`)).toBe(asRoot);
      expect(server.clusterDir.startsWith(closed)).toBe(!asRoot);
    } finally {
      await server.stop();
      rmSync(closed, { recursive: true, force: true });
    }
  });
});
