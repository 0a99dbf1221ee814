import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

/** A PostgreSQL server of the test's own that it can stop and start again on the same port. */
export interface RestartablePostgres {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /**
   * Stops the server's processes with SIGSTOP: connections stay open and nothing answers, as
   * when the server's machine hangs or the network drops packets.
   */
  freeze(): void;
  /** SIGCONT to what `freeze` stopped. */
  thaw(): void;
  close(): Promise<void>;
}

/** The postmaster's pid, from `postmaster.pid` somewhere under `dir`. */
function postmasterPid(dir: string): number {
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (entry.endsWith('postmaster.pid')) {
      return Number(readFileSync(join(dir, entry), 'utf8').split('\n')[0]);
    }
  }
  throw new Error(`no postmaster.pid under ${dir}`);
}

/** `pid` and every process under it. */
function processTree(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return [pid, ...(children === '' ? [] : children.split(' ').flatMap((c) => processTree(+c)))];
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
  let frozen: number[] = [];
  const thaw = (): void => {
    for (const pid of frozen) process.kill(pid, 'SIGCONT');
    frozen = [];
  };
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
    freeze() {
      frozen = processTree(postmasterPid(dir));
      for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    },
    thaw,
    async close() {
      thaw();
      send('exit');
      await new Promise((done) => child.once('exit', done));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
