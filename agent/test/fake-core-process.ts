import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import type { Ask } from './fake-core-main';
import { tempDir } from './helpers';

let bundle: string | null = null;

/**
 * The fake core in a process of its own, as a real core is, for timings: in the test's process
 * (whose heap holds the TypeScript compiler) its half of each call costs more than the agent's.
 * Built with esbuild as the agent is; the test asks it over IPC.
 */
export class FakeCoreProcess {
  private child!: ChildProcess;
  private port = 0;
  private next = 0;
  private readonly waiting = new Map<number, (value: number) => void>();

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!bundle) {
      bundle = path.join(tempDir('fake-core-bundle'), 'fake-core.js');
      buildSync({
        entryPoints: [path.join(__dirname, 'fake-core-main.ts')],
        bundle: true,
        platform: 'node',
        target: 'node18',
        outfile: bundle,
        logLevel: 'warning',
      });
    }
    this.child = fork(bundle, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (message: { id: number; value: number }) => {
      this.waiting.get(message.id)?.(message.value);
      this.waiting.delete(message.id);
    });
    this.port = await new Promise<number>((resolve, reject) => {
      this.waiting.set(-1, resolve);
      this.child.once('exit', (code) => reject(new Error(`the fake core exited (${code})`)));
    });
  }

  /** How many users the core has. */
  size(): Promise<number> {
    return this.ask('size');
  }

  /** The core restarts: its users and counters are gone. */
  async restart(): Promise<void> {
    await this.ask('restart');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }

  private ask(op: Ask['op']): Promise<number> {
    const id = this.next;
    this.next += 1;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.send({ id, op } satisfies Ask);
    });
  }
}
