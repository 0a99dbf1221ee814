import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';

export interface LoadConfig {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  connections: number;
  durationS: number;
  /** One JSON body per line; each request sends the next. */
  bodiesFile?: string;
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
}

const scratch = mkdtempSync(join(tmpdir(), 'bench-load-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
let configs = 0;

/** Runs autocannon in its own process against `config.url`. */
export function load(config: LoadConfig): Promise<autocannon.Result> {
  const file = join(scratch, `load-${configs++}.json`);
  writeFileSync(file, JSON.stringify(config));
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(__dirname, 'load-worker.mjs'), file],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => {
        if (error) reject(error);
        else resolve(JSON.parse(stdout) as autocannon.Result);
      },
    );
  });
}

/** The figures of one autocannon run. */
export function figuresOf(result: autocannon.Result): Figures {
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    requests: result.requests.total,
  };
}

/** The round with the median throughput. */
export function median<T extends { rps: number }>(rounds: T[]): T {
  return [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor(rounds.length / 2)];
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The load every benchmark applies, from its BENCH_* settings (docs/development.md lists them). */
export const BENCH = {
  durationS: Number(process.env.BENCH_DURATION_S ?? 10),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
};
