import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { TEST_SECRETS } from './harness/app';
import { serviceArgs } from './harness/service-process';

const ROOT = resolve(__dirname, '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function main(args: string[]): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...serviceArgs(), ...args], {
      cwd: ROOT,
      // Were the service started by mistake, it would fail on this address at once and say so.
      env: {
        ...process.env,
        ...TEST_SECRETS,
        NODE_ENV: 'test',
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        DB_STARTUP_WAIT_S: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

const COMMANDS = ['--create-owner', '--reset-password', '--seed-demo', '--reseal-secrets'];

describe('node dist/main.js arguments', () => {
  jest.setTimeout(60_000);

  it('--help prints every command and where the settings come from, exit 0', async () => {
    const result = await main(['--help']);
    expect(result.code).toBe(0);
    for (const command of COMMANDS) expect(result.stdout).toContain(`node dist/main.js ${command}`);
    expect(result.stdout).toContain('.env.example');
    expect(result.stdout).toContain('secrets.json');
    expect(result.stderr).toBe('');
  });

  it('an unknown flag exits 2 with the list instead of starting the service', async () => {
    const result = await main(['--create-ownr']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown argument: --create-ownr');
    for (const command of COMMANDS) expect(result.stderr).toContain(command);
    // The service never got as far as its database.
    expect(result.stdout + result.stderr).not.toMatch(/start-up failed|ECONNREFUSED/);
  });

  it('two commands at once are refused too, exit 2', async () => {
    const result = await main(['--seed-demo', '--create-owner']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown argument: --create-owner');
  });
});
