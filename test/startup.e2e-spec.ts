import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exited, freePort, waitHealthy } from './harness/processes';

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

function startService(dataDir: string, port: number): ChildProcess {
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
  return spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...env, TS_NODE_PROJECT: 'tsconfig.json', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
}

describe('the service with no configuration (embedded PostgreSQL)', () => {
  jest.setTimeout(120_000);

  it('starts, serves health and config, and stops on SIGINT without leaving postgres behind', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'service-data-'));
    // When tests run as root the server runs as `postgres`, which must be able to reach the folder.
    chmodSync(dataDir, 0o755);
    const clusterDir = join(dataDir, 'postgres', 'cluster');

    for (const run of ['first start (initialises)', 'second start (already initialised)']) {
      const port = await freePort();
      const child = startService(dataDir, port);
      try {
        await waitHealthy(port, child, 90_000);
        const config = await fetch(`http://127.0.0.1:${port}/api/v1/config`);
        expect(await config.json()).toEqual({ bot_username: null, grafana_url: null });
        expect(postgresProcessesUsing(clusterDir)).not.toEqual([]);
      } finally {
        child.kill('SIGINT');
      }
      expect([run, await exited(child)]).toEqual([run, 0]);
      expect(postgresProcessesUsing(clusterDir)).toEqual([]);
    }
  });

  it('refuses invalid configuration with a message naming the setting and exit code 1', async () => {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', 'src/main.ts'],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          PORT: 'not-a-port',
          DATA_DIR: mkdtempSync(join(tmpdir(), 'service-data-')),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exited(child)).toBe(1);
    expect(stderr).toMatch(/PORT: must be a whole number/);
  });
});
