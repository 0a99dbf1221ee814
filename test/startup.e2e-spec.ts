import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TEST_SECRETS } from './harness/app';
import { exited, freePort, runCommand, waitHealthy } from './harness/processes';
import { serviceArgs } from './harness/service-process';

const ROOT = resolve(__dirname, '..');

function postgresProcessesUsing(dir: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', `postgres -D ${dir}`], { encoding: 'utf8' })
      .trim()
      .split('\n');
  } catch {
    return [];
  }
}

/** The environment of a checkout with nothing configured: no DATABASE_URL, no NODE_ENV. */
function unconfigured(dataDir: string, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    // Other test files run services at the same time: no fixed metrics port.
    METRICS_PORT: '0',
  };
  delete env.DATABASE_URL;
  delete env.NODE_ENV;
  return { ...env, LOG_LEVEL: 'warn' };
}

const MAIN = serviceArgs();

function startService(dataDir: string, port: number): ChildProcess {
  return spawn(process.execPath, MAIN, {
    cwd: ROOT,
    env: unconfigured(dataDir, port),
    stdio: 'ignore',
  });
}

/** A data folder of its own; when tests run as root the server runs as `postgres`, which must reach it. */
function newDataDir(): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-data-'));
  chmodSync(dataDir, 0o755);
  return dataDir;
}

describe('the service with no configuration (embedded PostgreSQL)', () => {
  jest.setTimeout(120_000);

  it('starts, serves health and config, and stops on SIGINT without leaving postgres behind', async () => {
    const dataDir = newDataDir();
    const clusterDir = join(dataDir, 'postgres', 'cluster');

    for (const run of ['first start (initialises)', 'second start (already initialised)']) {
      const port = await freePort();
      const child = startService(dataDir, port);
      try {
        await waitHealthy(port, child, 90_000);
        const config = await fetch(`http://127.0.0.1:${port}/api/v1/config`);
        expect(await config.json()).toEqual({
          bot_username: null,
          grafana_url: null,
          payment_methods: [],
          demo_payments: false,
        });
        expect(postgresProcessesUsing(clusterDir)).not.toEqual([]);
      } finally {
        child.kill('SIGINT');
      }
      expect([run, await exited(child)]).toEqual([run, 0]);
      expect(postgresProcessesUsing(clusterDir)).toEqual([]);
    }
  });

  it('creates the first owner beside the running service, on its embedded database', async () => {
    const dataDir = newDataDir();
    const port = await freePort();
    const child = startService(dataDir, port);
    try {
      await waitHealthy(port, child, 90_000);
      // What the start-up banner suggests, in another terminal while the service runs.
      const created = await runCommand(process.execPath, [...MAIN, '--create-owner'], {
        cwd: ROOT,
        env: unconfigured(dataDir, await freePort()),
        input: 'beside_owner\ncorrect horse battery\n',
      });
      expect(created.output).toContain('created owner beside_owner');
      expect(created.code).toBe(0);

      const login = await fetch(`http://127.0.0.1:${port}/api/v1/auth/admin/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'beside_owner', password: 'correct horse battery' }),
      });
      expect(login.status).toBe(200);
      expect(await login.json()).toMatchObject({ user: { role: 'owner' } });

      // A second service on the same data folder stops at once, saying why in one sentence.
      const second = await runCommand(process.execPath, MAIN, {
        cwd: ROOT,
        env: unconfigured(dataDir, await freePort()),
      });
      expect(second.code).toBe(1);
      expect(second.output).toMatch(
        /the embedded PostgreSQL in \S+ is already running \(process \d+\), probably for another instance of the service: stop that one first, or set DATABASE_URL\./,
      );
      const health = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      expect(health.status).toBe(200);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited(child)).toBe(0);
  });

  it('refuses invalid configuration with a message naming the setting and exit code 1', async () => {
    const child = spawn(process.execPath, MAIN, {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: 'not-a-port',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'service-data-')),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exited(child)).toBe(1);
    expect(stderr).toMatch(/PORT: must be a whole number/);
  });

  it('in production, says what is missing in one JSON line (its only output), as a log collector reads it', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', PORT: 'not-a-port' };
    for (const name of ['JWT_ACCESS_SECRET', 'INTERNAL_SECRET', 'DATABASE_URL']) delete env[name];
    const run = await runCommand(process.execPath, MAIN, {
      cwd: ROOT,
      env,
    });
    expect(run.code).toBe(1);
    const lines = run.output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 60,
      msg: expect.stringMatching(
        /JWT_ACCESS_SECRET: required when NODE_ENV=production[\s\S]*PORT: must be a whole number/,
      ),
    });
  });

  it('on a terminal, lists what is wrong one problem a line, in production too', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', PORT: 'not-a-port' };
    for (const name of ['JWT_ACCESS_SECRET', 'DATABASE_URL']) delete env[name];
    // `script` gives the service a terminal, as an operator trying it by hand has.
    const run = await runCommand(
      'script',
      ['-q', '-E', 'never', '-ec', [process.execPath, ...MAIN].join(' '), '/dev/null'],
      { cwd: ROOT, env },
    );
    expect(run.code).toBe(1);
    const lines = run.output.trim().split(/\r?\n/);
    expect(lines[0]).toBe('invalid configuration:');
    expect(lines).toContainEqual(
      expect.stringMatching(/^ {2}- JWT_ACCESS_SECRET: required when NODE_ENV=production$/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}- PORT: must be a whole number/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}- DATABASE_URL: required/));
    expect(run.output).not.toContain('{');
  });

  it('refuses production without DATABASE_URL or with localhost public addresses, starting no database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'service-data-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...TEST_SECRETS,
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      METRICS_PORT: '0',
    };
    delete env.DATABASE_URL;
    delete env.PUBLIC_API_URL;
    delete env.APP_URL;
    const child = spawn(process.execPath, MAIN, {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    expect(await exited(child)).toBe(1);
    expect(output).toMatch(/DATABASE_URL: required when NODE_ENV=production/);
    expect(output).toMatch(/PUBLIC_API_URL: .*not http:\/\/localhost:\d+/);
    expect(output).toMatch(/APP_URL: .*not http:\/\/localhost:\d+/);
    expect(output).not.toMatch(/embedded PostgreSQL/);
    expect(existsSync(join(dataDir, 'postgres'))).toBe(false);
  });
});
