import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

/**
 * One run of the test harness, with an embedded PostgreSQL, on a test file that writes to the
 * temporary folder and fails: afterwards the temporary folder holds what it held before.
 */
describe('the temporary folder after a test run', () => {
  jest.setTimeout(180_000);
  let outer: string;
  afterAll(() => rmSync(outer, { recursive: true, force: true }));

  it('is as it was, after a run whose test failed', async () => {
    outer = mkdtempSync(join(tmpdir(), 'outer-'));
    // Run as root, the embedded server runs as `postgres`, which must be able to pass through.
    chmodSync(outer, 0o711);
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: outer };
    delete env.TEST_DATABASE_URL;
    const run = await new Promise<{ code: number | null; output: string }>((done) => {
      const child = spawn(
        process.execPath,
        [
          'node_modules/jest/bin/jest.js',
          '--ci',
          // The tier whose global setup starts PostgreSQL, which the fixture's database needs.
          '--selectProjects',
          'e2e',
          '--testMatch',
          '**/test/fixtures/temp-files.fixture.ts',
        ],
        { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => done({ code, output }));
    });
    expect(run.output).toContain('Tests:       1 failed, 1 passed, 2 total');
    expect(run.code).toBe(1);
    expect(readdirSync(outer)).toEqual([]);
  });
});
