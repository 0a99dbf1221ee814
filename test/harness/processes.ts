import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Resolves with the process's exit code once it has exited. */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done(child.exitCode);
    child.once('exit', (code) => done(code));
  });
}

/** Polls GET /api/v1/health until it answers 200; fails when the process exits first. */
export async function waitHealthy(
  port: number,
  child: ChildProcess,
  timeoutMs: number,
): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/api/v1/health`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('service did not become healthy');
}

export interface CommandResult {
  code: number | null;
  output: string;
}

/** Runs a command to its end with `input` on stdin; stdout and stderr together. */
export function runCommand(
  command: string,
  args: string[],
  options: SpawnOptions & { input?: string },
): Promise<CommandResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { ...options, stdio: 'pipe' });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', fail);
    child.stdin?.end(options.input ?? '');
    child.once('close', (code) => done({ code, output }));
  });
}
