/**
 * What the hot-path benchmarks run against: one throw-away embedded PostgreSQL with two scratch
 * databases (or, with DATABASE_URL set, two scratch databases created on that server and dropped
 * at the end: its role needs CREATEDB, and its own database is never touched), the built service (`node dist/main.js`) as an operator runs it (NODE_ENV=production,
 * the default LOG_LEVEL, its log lines written to a file) and the reference server
 * `bench/reference/baseline-b.mjs`, each in its own process. Everything is deleted on close.
 * BENCH_POOLER=pgbouncer puts a real PgBouncer in transaction mode (BENCH_PGBOUNCER_POOL server
 * connections, 20 by default) between the service and its database, with DB_POOLER=pgbouncer.
 * The embedded server is reached over its Unix socket, by the service and the reference alike, when
 * it has one (the run's folder is a short enough path); PgBouncer reaches it over TCP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { imageEnvironment } from '../../scripts/lib/image-env';
import { type PgBouncer, startPgBouncer } from '../../test/harness/pgbouncer';
import { freePort } from './load';
import { parentOf } from './processes';

const ROOT = resolve(__dirname, '..', '..');
export const BASELINE_B = resolve(ROOT, 'bench', 'reference', 'baseline-b.mjs');

export interface Server {
  url: string;
  pid: number;
}

export interface Fixture {
  /** A scratch folder of this run, deleted on close. */
  dir: string;
  service: Server & { logFile: string; env: Record<string, string> };
  baseline: Server;
  /** The service's database itself (not through PgBouncer). */
  serviceDatabaseUrl: string;
  /** How the service reaches its database, for the printed figures. */
  databasePath: string;
  postmasterPid: number;
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export const SERVICE_SECRETS = {
  JWT_ACCESS_SECRET: 'bench-jwt-access-secret-0123456789abcdefgh',
  INTERNAL_SECRET: 'bench-internal-secret-0123456789abcdefghij',
  PROXY_TOKEN_SECRET: 'bench-proxy-token-secret-0123456789abcdef',
  DATA_ENCRYPTION_KEY: 'bench-data-encryption-key-0123456789abcde',
  SEED_PEPPER: 'bench-seed-pepper-0123456789abcdefghijklmn',
};

export async function startFixture(
  options: {
    statements?: boolean;
    /** False: none of the Dockerfile's ENV lines, the service started exactly as `node dist/main.js`. */
    imageEnv?: boolean;
    /** False: no reference server (benchmarks that compare against none). */
    baseline?: boolean;
    /** Settings of the service on top of the fixture's own. */
    env?: Record<string, string>;
    /** PostgreSQL server flags on top of the fixture's own. */
    postgresFlags?: string[];
  } = {},
): Promise<Fixture> {
  if (!existsSync(join(ROOT, 'dist', 'main.js'))) throw new Error('run `npm run build` first');
  if (!existsSync(BASELINE_B)) throw new Error(`the reference server is missing: ${BASELINE_B}`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  chmodSync(dir, 0o755); // as root the server runs as `postgres`, which must reach the folder
  const external = process.env.DATABASE_URL;
  const flags = [
    ...['-c', 'max_connections=200'],
    ...(options.postgresFlags ?? []),
    // BENCH_POSTGRES_FLAGS: server settings to try, as `-c name=value` pairs apart by spaces.
    ...(process.env.BENCH_POSTGRES_FLAGS ?? '').split(' ').filter(Boolean),
    ...(options.statements ? ['-c', 'shared_preload_libraries=pg_stat_statements'] : []),
    ...(options.statements ? ['-c', 'pg_stat_statements.track_planning=on'] : []),
  ];
  const pg = external ? await scratchDatabases(external, dir) : await embeddedDatabases(dir, flags);
  if (external && (options.postgresFlags?.length || options.statements)) {
    process.stdout.write(
      `DATABASE_URL is set: the server's own settings apply, not ${flags.slice(2).join(' ')}\n`,
    );
  }
  const children: ChildProcess[] = [];
  let bouncer: PgBouncer | undefined;
  const close = async (): Promise<void> => {
    await Promise.all(children.map(stopChild));
    await bouncer?.stop();
    await pg.stop();
    // BENCH_SERVICE_LOG=<file>: the service's log kept there (with BENCH_NODE_FLAGS' lines).
    const kept = process.env.BENCH_SERVICE_LOG;
    if (kept && existsSync(join(dir, 'service.log'))) copyFileSync(join(dir, 'service.log'), kept);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const postmasterPid = await pg.postmasterPid();
    const serviceDatabaseUrl = pg.databaseUrl('service');
    const poolSize = Number(process.env.BENCH_PGBOUNCER_POOL ?? 20);
    if (process.env.BENCH_POOLER === 'pgbouncer') {
      // Its test harness configures PgBouncer with the URL's host and port: TCP.
      bouncer = await startPgBouncer(pg.tcpDatabaseUrl('service'), { poolSize, maxClients: 200 });
    }
    const databasePath = bouncer
      ? `through PgBouncer (transaction mode, default_pool_size = ${poolSize}), DB_POOLER=pgbouncer, ` +
        `over TCP (the reference server: direct, ${pg.transport})`
      : `direct to PostgreSQL, ${pg.transport} (the reference server too)`;

    const logFile = join(dir, 'service.log');
    const servicePort = await freePort();
    const serviceEnv = {
      ...SERVICE_SECRETS,
      NODE_ENV: 'production',
      // Production refuses localhost as the addresses nodes and users are given.
      PUBLIC_API_URL: 'https://api.bench.test',
      APP_URL: 'https://app.bench.test',
      HOST: '127.0.0.1',
      PORT: String(servicePort),
      // On, as by default, on a port of its own: other benchmarks may run at the same time.
      METRICS_PORT: String(await freePort()),
      DATABASE_URL: bouncer?.url ?? serviceDatabaseUrl,
      ...(bouncer ? { DB_POOLER: 'pgbouncer', DATABASE_DIRECT_URL: serviceDatabaseUrl } : {}),
      MIGRATIONS_RUN: 'true',
      DATA_DIR: dir,
      // The staff logins come from many addresses, as they would through a reverse proxy.
      TRUST_PROXY: '1',
      // One access token serves a whole run, however many rounds it has.
      ACCESS_TOKEN_TTL_S: String(24 * 3600),
      // No load balancer to wait for: SIGTERM stops at once.
      SHUTDOWN_DRAIN_S: '0',
      // As the image runs it (the Dockerfile's ENV lines); BENCH_IMAGE_ENV=0 leaves them out.
      ...(process.env.BENCH_IMAGE_ENV === '0' || options.imageEnv === false
        ? {}
        : imageEnvironment(ROOT)),
      // BENCH_NODE_OPTIONS: V8 flags to try on the service instead of the image's.
      ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
      ...options.env,
    };
    const service = await startChild(
      children,
      process.execPath,
      [...profileFlags(), join(ROOT, 'dist', 'main.js')],
      serviceEnv,
      logFile,
    );
    const serviceUrl = `http://127.0.0.1:${servicePort}/api/v1`;
    await waitFor(`${serviceUrl}/health`, service).catch((error: Error) => {
      throw new Error(`${error.message}\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
    });

    let baseline: Server = { url: '', pid: 0 };
    if (options.baseline !== false) {
      const baselinePort = await freePort();
      const child = await startChild(
        children,
        process.execPath,
        [BASELINE_B],
        { DATABASE_URL: pg.databaseUrl('b'), PORT: String(baselinePort) },
        join(dir, 'baseline.log'),
      );
      baseline = { url: `http://127.0.0.1:${baselinePort}`, pid: child.pid! };
      await waitFor(baseline.url, child);
    }

    const sql = (text: string, params: unknown[] = []) =>
      sqlOnce(serviceDatabaseUrl, text, params) as Promise<Record<string, unknown>[]>;
    return {
      dir,
      service: { url: serviceUrl, pid: service.pid!, logFile, env: serviceEnv },
      baseline,
      serviceDatabaseUrl,
      databasePath,
      postmasterPid,
      sql,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

interface BenchDatabases {
  /**
   * The URL of this run's scratch database for the service ('service') or the reference ('b'): over
   * the embedded server's Unix socket when it has one, for both.
   */
  databaseUrl(name: 'service' | 'b'): string;
  /** The same over TCP (or as DATABASE_URL says, when set), for PgBouncer. */
  tcpDatabaseUrl(name: 'service' | 'b'): string;
  /** How `databaseUrl` reaches the server, for the printed figures. */
  transport: string;
  /** The server's postmaster, for its CPU; 0 when the server is not on this machine. */
  postmasterPid(): Promise<number>;
  stop(): Promise<void>;
}

/** A throw-away embedded PostgreSQL in `dir` with the two scratch databases. */
async function embeddedDatabases(dir: string, flags: string[]): Promise<BenchDatabases> {
  const pg = await startEmbeddedPostgres({ dir, persistent: false, flags });
  const url = (database: string, base = pg.socketUrl ?? pg.url) =>
    base.replace(/\/app$/, `/${database}`);
  try {
    await createDatabases(pg.url, ['bench_service', 'bench_b']);
  } catch (error) {
    await pg.stop();
    throw error;
  }
  return {
    databaseUrl: (name) => url(`bench_${name}`),
    tcpDatabaseUrl: (name) => url(`bench_${name}`, pg.url),
    transport: pg.socketUrl
      ? 'over its Unix socket'
      : `over TCP on 127.0.0.1 (${pg.clusterDir} is too long a path for a socket)`,
    postmasterPid: () =>
      Promise.resolve(
        Number(readFileSync(join(pg.clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]),
      ),
    stop: () => pg.stop(),
  };
}

/**
 * Two scratch databases of this run on the server of `serverUrl` (DATABASE_URL), named after the
 * run's folder so that runs at the same time never share one; dropped by `stop`.
 */
async function scratchDatabases(serverUrl: string, dir: string): Promise<BenchDatabases> {
  const suffix = basename(dir)
    .replace(/[^a-zA-Z0-9]/g, '_')
    .toLowerCase();
  const names = { service: `bench_service_${suffix}`, b: `bench_b_${suffix}` };
  const url = (database: string) => {
    const parsed = new URL(serverUrl);
    parsed.pathname = `/${database}`;
    return parsed.toString();
  };
  await createDatabases(serverUrl, Object.values(names));
  return {
    databaseUrl: (name) => url(names[name]),
    tcpDatabaseUrl: (name) => url(names[name]),
    transport: 'as DATABASE_URL says',
    postmasterPid: async () => {
      // The server's backends are children of its postmaster, when it runs on this machine:
      // asked while this connection's backend still lives.
      const client = new Client({ connectionString: url(names.service) });
      await client.connect();
      try {
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        return parentOf(rows[0].pid) ?? 0;
      } finally {
        await client.end();
      }
    },
    stop: async () => {
      for (const name of Object.values(names)) {
        await sqlOnce(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    },
  };
}

async function createDatabases(serverUrl: string, names: string[]): Promise<void> {
  for (const name of names) await sqlOnce(serverUrl, `CREATE DATABASE ${name}`);
}

/** One statement on a connection of its own. */
async function sqlOnce(url: string, text: string, params: unknown[] = []): Promise<unknown[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as unknown[];
  } finally {
    await client.end();
  }
}

/** Starts a server with its output in `logFile`, from the project root (baseline-b resolves `pg` there). */
async function startChild(
  children: ChildProcess[],
  command: string,
  args: string[],
  env: Record<string, string>,
  logFile: string,
): Promise<ChildProcess> {
  const out = openSync(logFile, 'a');
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  children.push(child);
  return child;
}

/**
 * The node flags of the service and of a fleet's own processes: BENCH_CPU_PROF=<folder> has each
 * write a V8 CPU profile there when it stops; BENCH_NODE_FLAGS adds flags NODE_OPTIONS refuses
 * (`--trace-gc-nvp`: a line for every garbage collection, in the service's log).
 */
export function profileFlags(): string[] {
  const folder = process.env.BENCH_CPU_PROF;
  const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  return [...(folder ? ['--cpu-prof', `--cpu-prof-dir=${resolve(folder)}`] : []), ...flags];
}

async function waitFor(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited (${child.exitCode})`);
    const ok = await fetch(url)
      .then((response) => response.status < 500)
      .catch(() => false);
    if (ok) return;
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`${url}: no answer within 60 s`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  return exited;
}
