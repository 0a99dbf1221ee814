/**
 * `npm run bench:auth`: GET /api/v1/users/me signed in (cookie, or Bearer with BENCH_AUTH=bearer)
 * on the built service run as an operator runs it, beside the reference server
 * `bench/reference/baseline-b.mjs`, alternating rounds on the same PostgreSQL. Prints requests
 * per second, p99, CPU per request of each server and of PostgreSQL, the ratio, and the
 * service's peak resident memory. BENCH_STATEMENTS=1 adds PostgreSQL's statement statistics.
 */
import { readFileSync } from 'node:fs';
import { startFixture } from './lib/fixture';
import { alternatingRounds, row, TABLE_HEAD, type Target } from './lib/cpu-load';
import { BENCH, median } from './lib/load';
import { loadAverage, peakRssMiB } from './lib/processes';

const DURATION_S = BENCH.durationS;
const CONNECTIONS = BENCH.connections;
const ROUNDS = BENCH.rounds;
const BEARER = process.env.BENCH_AUTH === 'bearer';
const STATEMENTS = process.env.BENCH_STATEMENTS === '1';

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const fixture = await startFixture({ statements: STATEMENTS });
  try {
    const accessToken = await signUp(fixture.service.url);
    const service: Target = {
      url: `${fixture.service.url}/users/me`,
      headers: BEARER
        ? { authorization: `Bearer ${accessToken}` }
        : { cookie: `access_token=${accessToken}` },
    };
    const baseline: Target = { url: `${fixture.baseline.url}/users/me` };
    const linesBefore = logLines(fixture.service.logFile);

    if (STATEMENTS) {
      await fixture.sql('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await fixture.sql('SELECT pg_stat_statements_reset()');
    }
    const rounds = await alternatingRounds(fixture, () => ({ target: service }), baseline);
    const serviceRounds = rounds.service;
    const baselineRounds = rounds.reference;
    const serviceFigures = median(serviceRounds);
    const baselineFigures = median(baselineRounds);
    const logged = logLines(fixture.service.logFile) - linesBefore;
    const answered = serviceRounds.reduce((sum, figures) => sum + figures.requests, 0);
    const ratio = serviceFigures.rps / baselineFigures.rps;

    process.stdout.write(
      [
        '',
        `GET /api/v1/users/me (${BEARER ? 'Bearer' : 'cookie'}), ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${DURATION_S} s (after 2 s warm-up each)`,
        'service: node dist/main.js, NODE_ENV=production, default LOG_LEVEL; reference: bench/reference/baseline-b.mjs',
        ...TABLE_HEAD,
        row('service', serviceFigures),
        row('reference (baseline B)', baselineFigures),
        `service / reference throughput: ${ratio.toFixed(2)} × (target: at least 0.5 ×)`,
        `service rounds (req/s): ${serviceRounds.map((f) => f.rps.toFixed(0)).join(', ')}; reference rounds: ${baselineRounds.map((f) => f.rps.toFixed(0)).join(', ')}`,
        `service log lines written: ${logged} for ${answered} measured requests (plus warm-ups)`,
        `service peak resident memory (VmHWM): ${peakRssMiB(fixture.service.pid).toFixed(0)} MiB`,
        `load average before: ${loadBefore}; after: ${loadAverage()} (2 cores)`,
        '',
      ].join('\n'),
    );
    if (STATEMENTS) await printStatements(fixture.sql);
  } finally {
    await fixture.close();
  }
}

/** A new anonymous account; its access token. */
async function signUp(base: string): Promise<string> {
  const response = await fetch(`${base}/auth/seed`, { method: 'POST' });
  if (response.status !== 201) throw new Error(`POST /auth/seed answered ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

function logLines(file: string): number {
  return readFileSync(file, 'utf8').split('\n').length - 1;
}

async function printStatements(
  sql: (text: string) => Promise<Record<string, unknown>[]>,
): Promise<void> {
  const rows = await sql(
    `SELECT calls, round(total_plan_time::numeric * 1000 / calls, 1) AS plan_us,
            round(total_exec_time::numeric * 1000 / calls, 1) AS exec_us,
            left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query
       FROM pg_stat_statements WHERE calls > 100 ORDER BY calls * (total_exec_time + total_plan_time) DESC LIMIT 8`,
  );
  process.stdout.write('PostgreSQL statements over the measured rounds (both servers):\n');
  for (const r of rows) {
    const each = `planned in ${String(r.plan_us)} µs, run in ${String(r.exec_us)} µs`;
    process.stdout.write(`  ${String(r.calls)} calls, ${each}: ${String(r.query)}\n`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
