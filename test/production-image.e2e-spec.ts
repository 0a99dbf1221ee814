/**
 * The operator's path, without a container engine: the project is built with `npm run build`, then
 * a folder is laid out as the Dockerfile's last stage lays out the image (dist/, package.json and
 * the production dependencies from `npm ci --omit=dev`; no src/, no ts-node), and the commands the
 * Dockerfile and docker-compose.yml name are run there against PostgreSQL.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { processTree } from '../bench/lib/processes';
import { imageEnvironment } from '../scripts/lib/image-env';
import { MIGRATIONS } from '../migrations';
import { TEST_SECRETS } from './harness/app';
import { createTestDatabase, type TestDatabase } from './harness/database';
import { exited, freePort, runCommand, waitHealthy } from './harness/processes';

const ROOT = resolve(__dirname, '..');
/** Long enough for many argon2 checks at once; memory under such load is bench:memory's bar. */
const SPRAY_MS = 5_000;
const BUILD_INPUTS = [
  'src',
  'migrations',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.migrations.json',
  'nest-cli.json',
  // Shipped in the image too (the provisioning script the service uploads to nodes).
  'deploy',
  // npm ci's postinstall.
  'scripts/check-argon2.mjs',
  // The web app: its sources, the typed client and the game rules it imports, its budget check.
  'web',
  'client',
  'scripts/web-budget.mjs',
  'scripts/web-compress.mjs',
  // The node agent: built into agent/dist/agent.js, which the image keeps for provisioning.
  'agent',
];

/** What the image keeps of the web app: the build, none of the sources. */
const WEB_SOURCES = ['web/src', 'web/index.html', 'web/vite.config.mts', 'web/tsconfig.json'];
/** What of agent/ the image does not keep: all but its bundle. */
const AGENT_SOURCES = ['agent/src', 'agent/test', 'agent/package.json', 'agent/tsconfig.json'];

/** The image's start command, read from the Dockerfile's CMD (exec form). */
function imageCommand(): string[] {
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  if (!cmd) throw new Error('the Dockerfile has no CMD in exec form');
  return JSON.parse(cmd[1]) as string[];
}

/** The `command:` of docker-compose.yml's migrate service. */
function composeMigrateCommand(): string[] {
  const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
  const service = /^ {2}migrate:\n((?: {4}.*\n|\s*\n)*)/m.exec(compose);
  const command = service && /^ {4}command: (.+)$/m.exec(service[1]);
  if (!command) throw new Error('docker-compose.yml has no migrate service with a command');
  return command[1].trim().split(/\s+/);
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** An empty database (no migrations applied), dropped by the returned function. */
async function emptyDatabase(): Promise<{ url: string; drop: () => Promise<unknown> }> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL as string;
  const name = `vpn_test_${process.env.TEST_PG_TEMPLATE?.replace('vpn_template_', '')}_empty_${randomBytes(4).toString('hex')}`;
  await query(adminUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => query(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

const appliedMigrations = (url: string) =>
  query<{ name: string }>(url, 'SELECT name FROM migrations ORDER BY id').then((rows) =>
    rows.map((row) => row.name),
  );

/** Production refuses to start with this machine as its public addresses. */
const PUBLIC_URLS = {
  PUBLIC_API_URL: 'https://api.example.test',
  APP_URL: 'https://app.example.test',
};

describe('the production image, laid out without an engine', () => {
  jest.setTimeout(120_000);
  let image: string;
  const inImage = (command: string[], env: NodeJS.ProcessEnv, input?: string) =>
    runCommand(command[0] === 'node' ? process.execPath : command[0], command.slice(1), {
      cwd: image,
      // Plain text to compare: CI=true would make the TypeORM CLI colour its output.
      env: {
        ...process.env,
        NODE_ENV: 'production',
        ...PUBLIC_URLS,
        FORCE_COLOR: '0',
        NO_COLOR: '1',
        ...env,
      },
      input,
    });

  beforeAll(async () => {
    image = mkdtempSync(join(tmpdir(), 'service-image-'));
    for (const input of BUILD_INPUTS)
      cpSync(join(ROOT, input), join(image, input), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(image, 'node_modules'));
    const build = await runCommand('npm', ['run', 'build'], { cwd: image, env: process.env });
    expect(build).toMatchObject({ code: 0 });

    // The image's last stage: dist/, web/dist/, package.json and the production dependencies only.
    for (const input of [
      ...BUILD_INPUTS.filter(
        (i) =>
          ![
            'package.json',
            'package-lock.json',
            'deploy',
            'scripts/check-argon2.mjs',
            'web',
            'agent',
          ].includes(i),
      ),
      ...WEB_SOURCES,
      ...AGENT_SOURCES,
      'node_modules',
    ]) {
      rmSync(join(image, input), { recursive: true, force: true });
    }
    const install = await runCommand(
      'npm',
      ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'],
      { cwd: image, env: process.env },
    );
    expect(install).toMatchObject({ code: 0 });
    rmSync(join(image, 'package-lock.json'));
  }, 400_000);

  afterAll(() => {
    if (image) rmSync(image, { recursive: true, force: true });
  });

  it('has the compiled entry point and no development tools', () => {
    expect(imageCommand()).toEqual(['node', 'dist/main.js']);
    expect(existsSync(join(image, 'dist/main.js'))).toBe(true);
    expect(existsSync(join(image, 'dist/cli-data-source.js'))).toBe(true);
    expect(existsSync(join(image, 'dist/migrations/0001-initial.js'))).toBe(true);
    expect(existsSync(join(image, 'dist/migrations/index.js'))).toBe(true);
    expect(existsSync(join(image, 'web/dist/index.html'))).toBe(true);
    expect(existsSync(join(image, 'web/src'))).toBe(false);
    // The agent's bundle that provisioning uploads, without its sources.
    expect(existsSync(join(image, 'agent/dist/agent.js'))).toBe(true);
    expect(existsSync(join(image, 'agent/src'))).toBe(false);
    // ts-node stays (an optional peer of typeorm), but without src/ it has nothing to run.
    expect(existsSync(join(image, 'node_modules/@nestjs/cli'))).toBe(false);
    expect(existsSync(join(image, 'node_modules/jest'))).toBe(false);
    expect(existsSync(join(image, 'src'))).toBe(false);
    expect(existsSync(join(image, 'migrations'))).toBe(false);
  });

  it("runs, shows and reverts migrations with docker-compose.yml's migrate command", async () => {
    const db = await emptyDatabase();
    try {
      const env = { DATABASE_URL: db.url };
      const run = await inImage(composeMigrateCommand(), env);
      expect(run).toMatchObject({ code: 0 });
      expect(await appliedMigrations(db.url)).toHaveLength(MIGRATIONS.length);

      const revert = await inImage(['npm', 'run', 'migration:revert'], env);
      expect(revert).toMatchObject({ code: 0 });
      expect(await appliedMigrations(db.url)).toHaveLength(MIGRATIONS.length - 1);

      const show = await inImage(['npm', 'run', 'migration:show'], env);
      expect(show.code).toBe(0);
      const newest = new MIGRATIONS[MIGRATIONS.length - 1]().name as string;
      expect(show.output).toMatch(new RegExp(`^\\[ \\] ${newest}$`, 'm'));

      expect(await inImage(['npm', 'run', 'migration:run'], env)).toMatchObject({ code: 0 });
      expect(await appliedMigrations(db.url)).toHaveLength(MIGRATIONS.length);
    } finally {
      await db.drop();
    }
  });

  it('says in one line that the migration commands need DATABASE_URL', async () => {
    // --silent: without npm's own lines about a script that failed.
    const show = await inImage(['npm', 'run', '--silent', 'migration:show'], { DATABASE_URL: '' });
    expect(show).toEqual({
      code: 1,
      output: expect.stringMatching(
        /^DATABASE_URL must be set for the migration commands, e\.g\. /,
      ),
    });
    expect(show.output.trim().split('\n')).toHaveLength(1);
  });

  it('creates the first owner with `node dist/main.js --create-owner` from piped stdin', async () => {
    const db: TestDatabase = await createTestDatabase();
    try {
      const result = await inImage(
        [...imageCommand(), '--create-owner'],
        { ...TEST_SECRETS, DATABASE_URL: db.url },
        'image_owner\ncorrect horse battery\n',
      );
      expect(result.output).toContain('created owner image_owner');
      expect(result.code).toBe(0);
      const rows = await query<{ role: string }>(
        db.url,
        "SELECT role FROM users WHERE username = 'image_owner'",
      );
      expect(rows).toEqual([{ role: 'owner' }]);

      // The npm script is the same command: it builds nothing (the image has no build tools).
      const script = await inImage(
        ['npm', 'run', '--silent', 'create-owner'],
        { ...TEST_SECRETS, DATABASE_URL: db.url },
        'script_owner\ncorrect horse battery\n',
      );
      expect(script.output).toContain('created owner script_owner');
      expect(script.code).toBe(0);
    } finally {
      await db.drop();
    }
  });

  it('two replicas started together with MIGRATIONS_RUN=true both serve, each migration applied once', async () => {
    const db = await emptyDatabase();
    const [command, ...args] = imageCommand();
    expect(command).toBe('node');
    const replicas = await Promise.all(
      [0, 1].map(async () => {
        const port = await freePort();
        const child = spawn(process.execPath, args, {
          cwd: image,
          env: {
            ...process.env,
            ...TEST_SECRETS,
            NODE_ENV: 'production',
            ...PUBLIC_URLS,
            DATABASE_URL: db.url,
            MIGRATIONS_RUN: 'true',
            HOST: '127.0.0.1',
            PORT: String(port),
            // Two replicas on one machine: the default metrics port would be taken twice.
            METRICS_PORT: '0',
            // No load balancer to wait for: SIGTERM stops at once.
            SHUTDOWN_DRAIN_S: '0',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          stdout += chunk.toString();
        });
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        return { port, child, output: () => output, stdout: () => stdout };
      }),
    );
    try {
      for (const { port, child, output } of replicas) {
        await waitHealthy(port, child, 90_000).catch((error: Error) => {
          throw new Error(`${error.message}:\n${output()}`);
        });
      }
      // The web app, served by each replica on its own origin.
      for (const { port } of replicas) {
        const page = await fetch(`http://127.0.0.1:${port}/account`);
        expect([page.status, page.headers.get('content-type')]).toEqual([
          200,
          'text/html; charset=utf-8',
        ]);
      }
      const applied = await appliedMigrations(db.url);
      expect(applied).toHaveLength(MIGRATIONS.length);
      expect(new Set(applied).size).toBe(MIGRATIONS.length);
      // One replica applied them all; the other waited for the lock and found nothing to do.
      const appliers = replicas.filter(({ output }) => output().includes('applied Initial'));
      expect(appliers).toHaveLength(1);

      // What an operator's log collector reads: every line JSON, the migrations' too; Nest's line
      // per route only at debug; the banner names no OpenAPI UI, which production does not serve.
      const lines = replicas.flatMap(({ stdout }) =>
        stdout()
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => {
            try {
              return JSON.parse(line) as { level: number; context?: string; msg: string };
            } catch {
              throw new Error(`not a JSON line: ${line}`);
            }
          }),
      );
      expect(lines.filter((line) => line.context === 'Migrations')).toEqual([
        expect.objectContaining({ level: 30, msg: expect.stringMatching(/^applied Initial/) }),
      ]);
      expect(lines.filter((line) => line.context === 'RouterExplorer')).toEqual([]);
      expect(lines.filter((line) => line.msg.startsWith('listening on'))).toHaveLength(2);
      expect(lines.filter((line) => line.msg.includes('/docs'))).toEqual([]);
    } finally {
      for (const { child } of replicas) child.kill('SIGTERM');
      for (const { child } of replicas) await exited(child);
      await db.drop();
    }
  });
  it('failed staff logins with distinct usernames from the image: each leaves its record in PostgreSQL, the service runs as one process with the allocator and heap settings of the image', async () => {
    const db: TestDatabase = await createTestDatabase();
    const port = await freePort();
    const [command, ...args] = imageCommand();
    expect(command).toBe('node');
    const child = spawn(process.execPath, args, {
      cwd: image,
      env: {
        ...process.env,
        ...TEST_SECRETS,
        ...imageEnvironment(ROOT),
        ...PUBLIC_URLS,
        DATABASE_URL: db.url,
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: '0',
        // No load balancer to wait for: SIGTERM stops at once.
        SHUTDOWN_DRAIN_S: '0',
        // Each attempt from another address, as through a reverse proxy, so no address throttle
        // stops the spray, and the global bound on unknown usernames lifted (an operator may raise
        // it): every attempt is checked against a password hash.
        TRUST_PROXY: '1',
        RATE_STAFF_LOGIN_UNKNOWN_GLOBAL: '999999/60',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await waitHealthy(port, child, 90_000).catch((error: Error) => {
        throw new Error(`${error.message}:\n${stderr}`);
      });
      const login = (username: string, n: number) =>
        fetch(`http://127.0.0.1:${port}/api/v1/auth/admin/login`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
          },
          body: JSON.stringify({ username, password: 'not the password' }),
        }).then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        });
      // One process, started with the image's allocator and heap settings.
      expect(processTree(child.pid!)).toEqual([child.pid]);
      const environment = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
      expect(environment).toContain('MALLOC_MMAP_THRESHOLD_=131072');
      expect(environment).toContain('NODE_OPTIONS=--max-semi-space-size=8');
      const statuses = new Map<number, number>();
      let sent = 0;
      const started = Date.now();
      await Promise.all(
        Array.from({ length: 32 }, async (_, worker) => {
          while (Date.now() - started < SPRAY_MS) {
            const n = sent++;
            const status = await login(`sprayed_${worker}_${n}`, n);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
          }
        }),
      );
      expect([...statuses.keys()]).toEqual([401]);
      expect(sent).toBeGreaterThan(32);
      // Every attempt left its per-username record, in PostgreSQL.
      const [{ n }] = await query<{ n: number }>(
        db.url,
        `SELECT count(*)::int AS n FROM throttle_hits WHERE key LIKE 'staff-login:StaffLoginUsername:%'`,
      );
      expect(n).toBe(sent);
    } finally {
      child.kill('SIGTERM');
      await exited(child);
      await db.drop();
    }
  }, 120_000);
});
