/**
 * Cost of one throttle hit counted in PostgreSQL (the rate limiter's storage: one upsert), beside
 * a bare `SELECT 1` on the same pool (the floor of any round trip) and a fixed-window counter in
 * this process's memory (per instance, no round trip: wrong behind a load balancer), measured in
 * the same run.
 *
 *   node -r ts-node/register/transpile-only bench/throttle.ts [hits] [concurrency]
 */
import { DataSource } from 'typeorm';
import { ThrottleHitsRepository } from '../src/common/throttling/throttle-hits.repository';
import { startStandaloneApp } from '../scripts/lib/standalone-app';

const HITS = Number(process.argv[2] ?? 5_000);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const KEYS = 500;

interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
}

/** Runs `HITS` calls of `hit`, `CONCURRENCY` at a time; latency of each in ms. */
async function measure(hit: (i: number) => Promise<unknown>): Promise<Figures> {
  for (let i = 0; i < 200; i++) await hit(i);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < HITS) {
        const i = next++;
        const t0 = performance.now();
        await hit(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { perSecond: HITS / seconds, p50: at(0.5), p99: at(0.99) };
}

/** The in-memory reference: hits per key within a fixed window, as an in-process limiter keeps. */
class MemoryCounter {
  private readonly windows = new Map<string, { hits: number; endsAt: number }>();

  async hit(key: string, windowMs: number): Promise<number> {
    const now = Date.now();
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      this.windows.set(key, { hits: 1, endsAt: now + windowMs });
      return 1;
    }
    return ++window.hits;
  }
}

const say = (text: string) => process.stdout.write(`${text}\n`);

async function main(): Promise<void> {
  const standalone = await startStandaloneApp();
  try {
    const postgres = standalone.app.get(ThrottleHitsRepository);
    const dataSource = standalone.app.get(DataSource);
    const memory = new MemoryCounter();
    const key = (i: number) => `bench-key-${i % KEYS}`;
    const rows: [string, Figures][] = [];
    for (let round = 0; round < 3; round++) {
      rows.push([
        'PostgreSQL storage (upsert)',
        await measure((i) => postgres.hit(key(i), 60_000, 1e9, 60_000)),
      ]);
      rows.push(['floor: SELECT 1 on the pool', await measure(() => dataSource.query('SELECT 1'))]);
      rows.push(['in-memory counter', await measure((i) => memory.hit(key(i), 60_000))]);
    }
    say(`${HITS} hits per round, ${CONCURRENCY} at a time, ${KEYS} keys; 3 rounds`);
    say('storage                         hits/s     p50 ms   p99 ms');
    for (const [name, f] of rows) {
      say(
        `${name.padEnd(30)} ${f.perSecond.toFixed(0).padStart(8)} ${f.p50.toFixed(3).padStart(9)} ${f.p99.toFixed(3).padStart(8)}`,
      );
    }
  } finally {
    await standalone.close();
  }
}

void main();
