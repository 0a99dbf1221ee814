/**
 * `npm run bench:traffic`: POST /api/v1/internal/traffic with 10,000-entry reports, one after
 * another and 50 at once (50 nodes, the same 10,000 users), on the built service run as an
 * operator runs it (see lib/fixture.ts), beside a bare `pg` client on the same users in the same
 * run, with two statements: the service's own (`ADD_TRAFFIC_SQL` after `ORDERED_JOINS`, ids
 * sorted), and the plain `UPDATE … FROM unnest` the planner joins its own way (a hash join, in
 * numeric arithmetic, no over-limit answer), the baseline of the earlier figures in RESULTS.md;
 * and the textbook way to the same lock order, which the ordered joins are kept against: the rows
 * locked in id order first (`WHERE id IN (SELECT … ORDER BY id FOR NO KEY UPDATE)`, as nodes are),
 * with the planner's own join.
 * Entries per second.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { Client, type QueryConfig } from 'pg';
import { startFixture } from './lib/fixture';
import { loadAverage, processCpuUs } from './lib/processes';
import { postReport } from './lib/reports';
import { seedAccounts, seedNodes } from './lib/seed';
import { resetStatements, statementTimes } from './lib/statements';
import { canonicalUuid, sortedUuids } from '../src/common/uuid';
import { bigintArray, statementName, uuidArray } from '../src/database/sql';
import { ADD_TRAFFIC_SQL, ORDERED_JOINS } from '../src/users/user-traffic.repository';

/** `ADD_TRAFFIC_SQL` locking its users in id order first, the way nodes are (`NODES_LOCKED_IN_ID_ORDER`). */
const TEXTBOOK_ADD_TRAFFIC_SQL = ADD_TRAFFIC_SQL.replace(
  'WHERE u.id = v.id',
  'WHERE u.id = v.id AND u.id IN (SELECT id FROM users WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE)',
);
if (TEXTBOOK_ADD_TRAFFIC_SQL === ADD_TRAFFIC_SQL)
  throw new Error('ADD_TRAFFIC_SQL changed its join');
const ENTRIES = 10_000;
/**
 * Accounts in the database: the reports name ENTRIES of them. By default only those; a fleet's
 * node names a small share of a large table (`BENCH_TRAFFIC_ACCOUNTS=200000`), where the plans differ.
 */
const ACCOUNTS = Math.max(ENTRIES, Number(process.env.BENCH_TRAFFIC_ACCOUNTS ?? ENTRIES));
const SEQUENTIAL = Number(process.env.BENCH_REPORTS ?? 20);
const CONCURRENT = 50;
/** BENCH_STATEMENTS=1: PostgreSQL's own timing of each statement of the one-at-a-time rounds. */
const STATEMENTS = process.env.BENCH_STATEMENTS === '1';

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const fixture = await startFixture({ statements: STATEMENTS });
  const bare = new Client({ connectionString: fixture.serviceDatabaseUrl });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENT });
  try {
    const ids = (await seedAccounts(fixture.sql, ACCOUNTS)).slice(0, ENTRIES);
    const nodes = await seedNodes(fixture.sql, CONCURRENT);
    await fixture.sql('ANALYZE users');

    const url = new URL(`${fixture.service.url}/internal/traffic`);
    const body = (node: string, shift: number): Buffer =>
      Buffer.from(
        JSON.stringify({
          node_id: node,
          report_id: randomUUID(),
          entries: ids.map((_, i) => ({
            user_id: ids[(i + shift) % ids.length],
            bytes_up: 1000 + i,
            bytes_down: 50_000 + i,
          })),
        }),
      );
    /** Sends the reports at once; the time each took, and the whole. */
    const send = async (payloads: Buffer[]): Promise<{ eachMs: number[]; allMs: number }> => {
      const started = performance.now();
      const eachMs = await Promise.all(
        payloads.map(async (payload) => {
          const sent = performance.now();
          const answer = await postReport(url, payload, agent);
          if (answer.status !== 200) {
            throw new Error(`report answered ${answer.status}: ${answer.text}`);
          }
          return performance.now() - sent;
        }),
      );
      return { eachMs, allMs: performance.now() - started };
    };
    const post = async (payload: Buffer): Promise<number> => (await send([payload])).eachMs[0];

    // Warm-up: JIT, pools, the users' pages in cache; and a report of every node, as a running
    // fleet's nodes have all reported before: a node's first report after the service starts is
    // applied without a guess of its record, a round trip more (`InternalService.applyOnGuess`).
    for (let i = 0; i < 3; i++) await post(body(nodes[0], i));
    for (const node of nodes.slice(1)) await post(body(node, 0));

    await bare.connect();
    const rotated = (shift: number): string[] => ids.map((_, i) => ids[(i + shift) % ids.length]);
    /** The statements in one transaction; the clock includes making their parameters. */
    const inTransaction = async (
      statements: () => [string | QueryConfig, unknown[]][],
    ): Promise<number> => {
      const started = performance.now();
      await bare.query('BEGIN');
      for (const [query, values] of statements()) await bare.query(query, values);
      await bare.query('COMMIT');
      return performance.now() - started;
    };
    /** The planner's own plain UPDATE, unsorted ids. */
    const bareOnce = (shift: number): Promise<number> => {
      const order = rotated(shift);
      return inTransaction(() => [
        [
          `UPDATE users u SET traffic_used_bytes = LEAST(u.traffic_used_bytes::numeric + v.bytes,
             9223372036854775807)::bigint
             FROM unnest($1::uuid[], $2::numeric[]) AS v(id, bytes) WHERE u.id = v.id`,
          [order, order.map((_, i) => String(51_000 + 2 * i))],
        ],
      ]);
    };
    /**
     * The service's own statement, sent as the service sends it: ids sorted (in the clock, as in
     * the service), ordered joins, both arrays in binary format.
     */
    const sameOnce = (shift: number): Promise<number> => {
      const given = rotated(shift).map((id) => canonicalUuid(id)!);
      return inTransaction(() => {
        const order = sortedUuids(given);
        return [
          [{ name: statementName(ORDERED_JOINS), text: ORDERED_JOINS }, []],
          [
            ADD_TRAFFIC_SQL,
            [uuidArray(order), bigintArray(order.map((_, i) => 51_000 + 2 * i)), '1000000000000'],
          ],
        ];
      });
    };
    /** The service's statement with the locks taken in id order first, the planner left alone. */
    const textbookOnce = (shift: number): Promise<number> => {
      const order = sortedUuids(rotated(shift).map((id) => canonicalUuid(id)!));
      return inTransaction(() => [
        [
          TEXTBOOK_ADD_TRAFFIC_SQL,
          [uuidArray(order), bigintArray(order.map((_, i) => 51_000 + 2 * i)), '1000000000000'],
        ],
      ]);
    };
    for (let i = 0; i < 3; i++) await bareOnce(i);
    for (let i = 0; i < 3; i++) await textbookOnce(i);
    for (let i = 0; i < 3; i++) await sameOnce(i);
    if (STATEMENTS) await resetStatements(fixture.sql);

    const serviceMs: number[] = [];
    const bareMs: number[] = [];
    const sameMs: number[] = [];
    const textbookMs: number[] = [];
    /** The service's own CPU over its one-at-a-time reports (it is idle while the others run). */
    let serviceCpuUs = 0;
    for (let i = 0; i < SEQUENTIAL; i++) {
      // Each body is built before its clock starts, as a node would have it ready.
      const payload = body(nodes[i % nodes.length], i * 7);
      const cpuBefore = processCpuUs(fixture.service.pid);
      serviceMs.push(await post(payload));
      serviceCpuUs += processCpuUs(fixture.service.pid) - cpuBefore;
      bareMs.push(await bareOnce(i * 7));
      sameMs.push(await sameOnce(i * 7));
      textbookMs.push(await textbookOnce(i * 7));
    }
    const statements = STATEMENTS
      ? await statementTimes(fixture.sql, {
          title: 'PostgreSQL statements of the one-at-a-time rounds (service and bare client)',
          minCalls: SEQUENTIAL,
          unit: 'ms',
        })
      : '';
    const payloads = nodes.map((node, n) => body(node, n * 200));
    const concurrentMs = (await send(payloads)).allMs;

    const service = median(serviceMs);
    const bareMedian = median(bareMs);
    const sameMedian = median(sameMs);
    const textbookMedian = median(textbookMs);
    const share = (ms: number): string => `${((ms / service) * 100).toFixed(0)}%`;
    const rate = (ms: number): string => ((ENTRIES / ms) * 1000).toFixed(0);
    process.stdout.write(
      [
        '',
        `POST /api/v1/internal/traffic, ${ENTRIES}-entry reports over ${ACCOUNTS} accounts; median of ${SEQUENTIAL} runs, the three paths in turn`,
        'service: node dist/main.js, NODE_ENV=production, default LOG_LEVEL',
        '| path | ms per report | entries/s |',
        '|---|---|---|',
        `| service, one report at a time (HTTP, validation, transaction) | ${service.toFixed(1)} | ${rate(service)} |`,
        `| (of which the service's own CPU, mean) | ${(serviceCpuUs / SEQUENTIAL / 1000).toFixed(1)} | |`,
        `| bare pg: the service's statement as it sends it (ids sorted, ORDERED_JOINS, then ADD_TRAFFIC_SQL with binary arrays) in a transaction | ${sameMedian.toFixed(1)} | ${rate(sameMedian)} |`,
        `| bare pg: the same UPDATE with the users locked in id order first (WHERE id IN (SELECT … ORDER BY id FOR NO KEY UPDATE)), no planner settings | ${textbookMedian.toFixed(1)} | ${rate(textbookMedian)} |`,
        `| bare pg: plain UPDATE … FROM unnest in a transaction (unsorted ids, the planner's own join, numeric; no report record, no over-limit answer) | ${bareMedian.toFixed(1)} | ${rate(bareMedian)} |`,
        `| service, ${CONCURRENT} reports at once from ${CONCURRENT} nodes (same users) | ${(concurrentMs / CONCURRENT).toFixed(1)} (all: ${concurrentMs.toFixed(0)}) | ${((CONCURRENT * ENTRIES * 1000) / concurrentMs).toFixed(0)} |`,
        `service / bare, the same statement: ${share(sameMedian)} (target ≥ 85%, issue 46); the plain UPDATE: ${share(bareMedian)} (target ≥ 70%); one report ${service.toFixed(0)} ms (target ≤ 100 ms, ≥ 100,000 entries/s)`,
        `load average before: ${loadBefore}; after: ${loadAverage()} (2 cores)`,
        statements,
      ].join('\n'),
    );
  } finally {
    agent.destroy();
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
