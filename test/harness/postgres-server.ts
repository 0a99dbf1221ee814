import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

/** A PostgreSQL server of the test's own that it can stop and start again on the same port. */
export interface RestartablePostgres {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'vpn-restart-pg-'));
  const child: ChildProcess = spawn(
    process.execPath,
    [resolve(__dirname, 'restartable-postgres.mjs'), dir],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const events = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (expected: string): Promise<{ event: string; url?: string }> => {
    const { value, done } = await events.next();
    if (done) throw new Error(`the PostgreSQL helper exited before "${expected}"`);
    const message = JSON.parse(String(value)) as { event: string; url?: string };
    if (message.event !== expected) throw new Error(`expected ${expected}, got ${message.event}`);
    return message;
  };
  const send = (command: string) => child.stdin!.write(`${command}\n`);
  const { url } = await next('started');
  return {
    url: url!,
    async stop() {
      send('stop');
      await next('stopped');
    },
    async start() {
      send('start');
      await next('started');
    },
    async close() {
      send('exit');
      await new Promise((done) => child.once('exit', done));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
