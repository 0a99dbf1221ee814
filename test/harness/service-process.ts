import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { TEST_SECRETS } from './app';

const ROOT = resolve(__dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  /** What the process wrote to stderr so far. */
  stderr(): string;
  /** What the process wrote to stdout (its log) so far. */
  stdout(): string;
  exited(): Promise<number | null>;
}

/**
 * Node's arguments that run the service from this repository's sources: the run's compiled build
 * (test/harness/service-build.mjs, made by the global setup of the e2e and slow tiers), or
 * `src/main.ts` through ts-node where there is none. Arguments of the service itself go after.
 */
export function serviceArgs(): string[] {
  const build = process.env.TEST_SERVICE_BUILD;
  return build
    ? [resolve(build, 'main.js')]
    : ['-r', 'ts-node/register/transpile-only', 'src/main.ts'];
}

/**
 * The service as operators run it: its own Node process (`serviceArgs`), with the
 * test secrets and `env` on top of the test's environment, listening on `port`.
 */
export function spawnService(port: number, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, serviceArgs(), {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      ...TEST_SECRETS,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return {
    child,
    baseUrl: `http://127.0.0.1:${port}`,
    stderr: () => stderr,
    stdout: () => stdout,
    exited: () =>
      new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode);
        child.once('exit', (code) => done(code));
      }),
  };
}

/** Waits for `GET /health` to answer 200; fails early when the process exits. */
export async function waitHealthy(service: ServiceProcess, timeoutMs = 90_000): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (service.child.exitCode !== null) {
      throw new Error(`service exited with ${service.child.exitCode}: ${service.stderr()}`);
    }
    const ok = await fetch(`${service.baseUrl}/api/v1/health`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`service did not become healthy: ${service.stderr()}`);
}

/** SIGTERM, then SIGKILL if it is still there after `graceMs`. */
export async function stopService(service: ServiceProcess, graceMs = 15_000): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  const timer = setTimeout(() => service.child.kill('SIGKILL'), graceMs);
  await service.exited();
  clearTimeout(timer);
}
