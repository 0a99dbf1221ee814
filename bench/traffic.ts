/**
 * `npm run bench:traffic`: POST /api/v1/internal/traffic with 10,000-entry reports, one after
 * another and 50 at once (50 nodes, the same 10,000 users), on the built service run as an
 * operator runs it (see lib/fixture.ts), beside a bare `pg` client running the same
 * `UPDATE … FROM unnest` on the same users in the same run. Entries per second.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { SERVICE_SECRETS, startFixture } from './lib/fixture';
import { loadAverage } from './lib/processes';
import { seedAccounts, seedNodes } from './lib/seed';

const ENTRIES = 10_000;
const SEQUENTIAL = Number(process.env.BENCH_REPORTS ?? 20);
const CONCURRENT = 50;

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const fixture = await startFixture();
  const bare = new Client({ connectionString: fixture.serviceDatabaseUrl });
  try {
    const ids = await seedAccounts(fixture.sql, ENTRIES);
    const nodes = await seedNodes(fixture.sql, CONCURRENT);
    await fixture.sql('ANALYZE users');

    const url = `${fixture.service.url}/internal/traffic`;
    const body = (node: string, shift: number): string =>
      JSON.stringify({
        node_id: node,
        report_id: randomUUID(),
        entries: ids.map((_, i) => ({
          user_id: ids[(i + shift) % ids.length],
          bytes_up: 1000 + i,
          bytes_down: 50_000 + i,
        })),
      });
    /** Sends the reports at once; the time each took, and the whole. */
    const send = async (payloads: string[]): Promise<{ eachMs: number[]; allMs: number }> => {
      const started = performance.now();
      const eachMs = await Promise.all(
        payloads.map(async (payload) => {
          const sent = performance.now();
          const response = await fetch(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-internal-secret': SERVICE_SECRETS.INTERNAL_SECRET,
            },
            body: payload,
          });
          const answer = await response.text();
          if (response.status !== 200)
            throw new Error(`report answered ${response.status}: ${answer}`);
          return performance.now() - sent;
        }),
      );
      return { eachMs, allMs: performance.now() - started };
    };
    const post = async (payload: string): Promise<number> => (await send([payload])).eachMs[0];

    // Warm-up: JIT, pools, the users' pages in cache.
    for (let i = 0; i < 3; i++) await post(body(nodes[0], i));

    await bare.connect();
    const bareOnce = async (shift: number): Promise<number> => {
      const order = ids.map((_, i) => ids[(i + shift) % ids.length]);
      const started = performance.now();
      await bare.query('BEGIN');
      await bare.query(
        `UPDATE users u SET traffic_used_bytes = LEAST(u.traffic_used_bytes::numeric + v.bytes,
           9223372036854775807)::bigint
           FROM unnest($1::uuid[], $2::numeric[]) AS v(id, bytes) WHERE u.id = v.id`,
        [order, order.map((_, i) => String(51_000 + 2 * i))],
      );
      await bare.query('COMMIT');
      return performance.now() - started;
    };
    for (let i = 0; i < 3; i++) await bareOnce(i);

    const serviceMs: number[] = [];
    const bareMs: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      // Each body is built before its clock starts, as a node would have it ready.
      const payload = body(nodes[i % nodes.length], i * 7);
      serviceMs.push(await post(payload));
      bareMs.push(await bareOnce(i * 7));
    }
    const payloads = nodes.map((node, n) => body(node, n * 200));
    const concurrentMs = (await send(payloads)).allMs;

    const service = median(serviceMs);
    const bareMedian = median(bareMs);
    const rate = (ms: number): string => ((ENTRIES / ms) * 1000).toFixed(0);
    process.stdout.write(
      [
        '',
        `POST /api/v1/internal/traffic, ${ENTRIES}-entry reports; median of ${SEQUENTIAL} alternating runs`,
        'service: node dist/main.js, NODE_ENV=production, default LOG_LEVEL',
        '| path | ms per report | entries/s |',
        '|---|---|---|',
        `| service, one report at a time (HTTP, validation, transaction) | ${service.toFixed(1)} | ${rate(service)} |`,
        `| bare pg: UPDATE … FROM unnest in a transaction (unsorted ids, the planner's own join; no report record, no over-limit answer) | ${bareMedian.toFixed(1)} | ${rate(bareMedian)} |`,
        `| service, ${CONCURRENT} reports at once from ${CONCURRENT} nodes (same users) | ${(concurrentMs / CONCURRENT).toFixed(1)} (all: ${concurrentMs.toFixed(0)}) | ${((CONCURRENT * ENTRIES * 1000) / concurrentMs).toFixed(0)} |`,
        `service / bare: ${((bareMedian / service) * 100).toFixed(0)}% (target ≥ 70%); one report ${service.toFixed(0)} ms (target ≤ 100 ms, ≥ 100,000 entries/s)`,
        `load average before: ${loadBefore}; after: ${loadAverage()} (2 cores)`,
        '',
      ].join('\n'),
    );
  } finally {
    await bare.end().catch(() => undefined);
    await fixture.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
