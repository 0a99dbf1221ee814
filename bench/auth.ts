/**
 * `npm run bench:auth`: GET /api/v1/users/me signed in (cookie, or Bearer with BENCH_AUTH=bearer)
 * on the built service run as an operator runs it, beside the reference server
 * `bench/reference/baseline-b.mjs`, alternating rounds on the same PostgreSQL. Prints requests
 * per second, p99, CPU per request of each server and of PostgreSQL, the ratio, and the
 * service's peak resident memory. BENCH_STATEMENTS=1 adds PostgreSQL's statement statistics.
 */
import { readFileSync } from 'node:fs';
import { startFixture } from './lib/fixture';
import { alternatingRounds, comparison, type Target } from './lib/cpu-load';
import { BENCH } from './lib/load';
import { loadAverage, peakRssMiB } from './lib/processes';
import { resetStatements, statementTimes } from './lib/statements';

const DURATION_S = BENCH.durationS;
const CONNECTIONS = BENCH.connections;
const ROUNDS = BENCH.rounds;
/** Issue 46: GET /users/me at least 0.6 × the reference's throughput. */
const TARGET_RATIO = 0.6;
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

    if (STATEMENTS) await resetStatements(fixture.sql);
    const rounds = await alternatingRounds(fixture, () => ({ target: service }), baseline);
    const logged = logLines(fixture.service.logFile) - linesBefore;
    const answered = rounds.service.reduce((sum, figures) => sum + figures.requests, 0);

    process.stdout.write(
      [
        '',
        `GET /api/v1/users/me (${BEARER ? 'Bearer' : 'cookie'}), ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${DURATION_S} s (after 2 s warm-up each)`,
        'service: node dist/main.js, NODE_ENV=production, default LOG_LEVEL; reference: bench/reference/baseline-b.mjs',
        `service's database: ${fixture.databasePath}; the reference's: direct`,
        ...comparison(rounds, TARGET_RATIO).lines,
        `service log lines written: ${logged} for ${answered} measured requests (plus warm-ups)`,
        `service peak resident memory (VmHWM): ${peakRssMiB(fixture.service.pid).toFixed(0)} MiB`,
        `load average before: ${loadBefore}; after: ${loadAverage()} (2 cores)`,
        '',
      ].join('\n'),
    );
    if (STATEMENTS) {
      const title = 'PostgreSQL statements over the measured rounds (both servers)';
      process.stdout.write(
        await statementTimes(fixture.sql, { title, minCalls: 100, unit: 'µs', limit: 8 }),
      );
    }
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

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
