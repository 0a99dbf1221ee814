import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chownSync,
  constants,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './processes';

/** Debian's package puts it here; `PGBOUNCER` names another binary. */
const DEBIAN_BINARY = '/usr/sbin/pgbouncer';
const HOW_TO_INSTALL =
  "install Debian's package (`apt-get install pgbouncer`; CI's .ci/run does) or set PGBOUNCER " +
  'to the binary';

export interface PgBouncer {
  /** `postgresql://user:password@127.0.0.1:<port>/<database>` through the pooler. */
  url: string;
  /** What PgBouncer logged so far (its warnings name refused startup parameters, for one). */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Server connections per user and database: the pool the whole service shares. */
  poolSize: number;
  /** Clients PgBouncer accepts at once. */
  maxClients?: number;
}

/** The binary, or an error that says how to get it (in CI and elsewhere: never a silent skip). */
export function pgbouncerBinary(): string {
  const candidates = [
    process.env.PGBOUNCER,
    DEBIAN_BINARY,
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'pgbouncer')),
  ].filter((path): path is string => Boolean(path));
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // the next one
    }
  }
  throw new Error(`pgbouncer was not found (${candidates.join(', ')}): ${HOW_TO_INSTALL}`);
}

/** The uid and gid of `nobody`, which PgBouncer runs as when the tests run as root. */
function nobody(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('nobody:'));
  if (!line) throw new Error('PgBouncer refuses to run as root, and there is no user nobody');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * A real PgBouncer in transaction mode in front of the PostgreSQL of `databaseUrl` (embedded or the
 * server of TEST_DATABASE_URL), on a loopback port of its own. Clients sign in with SCRAM as the
 * URL's user; PgBouncer signs in to PostgreSQL with the URL's password (a server that trusts
 * local connections, as the machine's usually does, needs none: a random one is made up for the
 * clients). As root it runs as `nobody` (`-u`), its files in a temporary folder that user owns.
 */
export async function startPgBouncer(
  databaseUrl: string,
  { poolSize, maxClients = 500 }: PgBouncerOptions,
): Promise<PgBouncer> {
  const binary = pgbouncerBinary();
  const target = new URL(databaseUrl);
  const user = decodeURIComponent(target.username) || 'postgres';
  const password = decodeURIComponent(target.password) || randomBytes(12).toString('hex');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  const files = {
    ini: join(dir, 'pgbouncer.ini'),
    users: join(dir, 'userlist.txt'),
  };
  writeFileSync(
    files.ini,
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${files.users}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'min_pool_size = 0',
      'reserve_pool_size = 0',
      `max_client_conn = ${maxClients}`,
      'query_wait_timeout = 60',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  writeFileSync(files.users, `"${user}" "${password}"\n`, { mode: 0o600 });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = nobody();
    for (const path of [dir, files.ini, files.users]) chownSync(path, uid, gid);
  }

  const child = spawn(binary, [...(asRoot ? ['-u', 'nobody'] : []), files.ini], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${port}`;
  url.username = encodeURIComponent(user);
  url.password = encodeURIComponent(password);

  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitAccepting(url.toString(), child, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: url.toString(), log: () => log, stop };
}

/** Until a client gets through PgBouncer to PostgreSQL; fails when PgBouncer exits first. */
async function waitAccepting(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const until = Date.now() + 15_000;
  let last: unknown;
  while (Date.now() < until) {
    if (child.exitCode !== null) {
      throw new Error(`pgbouncer exited with ${child.exitCode}: ${log()}`);
    }
    const client = new Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      last = error;
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`pgbouncer did not accept connections: ${String(last)}\n${log()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // SIGINT: PgBouncer's "safe shutdown" waits for clients; SIGTERM closes at once.
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
