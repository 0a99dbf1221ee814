import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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

describe('the embedded PostgreSQL on its Unix socket', () => {
  jest.setTimeout(120_000);

  /** A folder of its own that the postgres account reaches (when the tests run as root). */
  function openFolder(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    chmodSync(dir, 0o755);
    return dir;
  }

  /** Where the server answering `url` says the connection came in: null over a Unix socket. */
  async function serverAddress(url: string): Promise<{ address: string | null; db: string }> {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ address: string | null; db: string }>(
        'SELECT inet_server_addr()::text AS address, current_database() AS db',
      );
      return rows[0];
    } finally {
      await client.end();
    }
  }

  it('answers over a socket in the cluster folder, and still over TCP', async () => {
    const dir = openFolder('socket-');
    const server = await startEmbeddedPostgres({ dir, persistent: false });
    try {
      expect(server.socketUrl).not.toBeNull();
      expect(existsSync(join(server.clusterDir, `.s.PGSQL.${new URL(server.url).port}`))).toBe(
        true,
      );
      expect(await serverAddress(server.socketUrl!)).toEqual({ address: null, db: 'app' });
      expect(await serverAddress(server.url)).toEqual({ address: '127.0.0.1/32', db: 'app' });
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a one-off command beside the running server takes its socket only when the socket answers', async () => {
    const dir = openFolder('attach-');
    const server = await startEmbeddedPostgres({ dir, persistent: false });
    const socketFile = join(server.clusterDir, `.s.PGSQL.${new URL(server.url).port}`);
    try {
      const beside = await startEmbeddedPostgres({ dir, persistent: false, attach: true });
      expect(beside.socketUrl).toBe(server.socketUrl);
      expect(await serverAddress(beside.socketUrl!)).toEqual({ address: null, db: 'app' });

      // Something that is not the server's socket where the socket would be: TCP, as without one.
      renameSync(socketFile, `${socketFile}.away`);
      writeFileSync(socketFile, '');
      const overTcp = await startEmbeddedPostgres({ dir, persistent: false, attach: true });
      expect(overTcp.socketUrl).toBeNull();
      expect(await serverAddress(overTcp.url)).toEqual({ address: '127.0.0.1/32', db: 'app' });
    } finally {
      if (existsSync(`${socketFile}.away`)) {
        rmSync(socketFile, { force: true });
        renameSync(`${socketFile}.away`, socketFile);
      }
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts on TCP only when the socket path would pass 107 bytes', async () => {
    const dir = openFolder(`${'long-folder-name-'.repeat(6)}-`);
    const server = await startEmbeddedPostgres({ dir, persistent: false });
    try {
      const port = new URL(server.url).port;
      expect(Buffer.byteLength(join(server.clusterDir, `.s.PGSQL.${port}`))).toBeGreaterThan(107);
      expect(server.socketUrl).toBeNull();
      expect(await serverAddress(server.url)).toEqual({ address: '127.0.0.1/32', db: 'app' });
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
