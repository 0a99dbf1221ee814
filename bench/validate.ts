/**
 * `npm run bench:validate`: POST /api/v1/internal/validate with a fresh session token per request
 * (each validates once: a signature check, then one statement that records its id and reads the
 * user's standing), sent as a node's agent sends it, with the node's own secret (found once, then
 * remembered while no node changes), 50 connections, on the built service run as an operator runs it (see
 * lib/fixture.ts), beside the reference server `bench/reference/baseline-b.mjs`, alternating
 * rounds on the same PostgreSQL. Prints requests per second, p99 and CPU per request.
 */
import { startFixture } from './lib/fixture';
import { alternatingRounds, comparison, type Target } from './lib/cpu-load';
import { BENCH } from './lib/load';
import { loadAverage } from './lib/processes';
import {
  benchNodeSecret,
  freshTokenBodies,
  freshTokenBody,
  seedAccounts,
  seedDemoPlans,
  seedNodes,
  subscribe,
} from './lib/seed';

const DURATION_S = BENCH.durationS;
const CONNECTIONS = BENCH.connections;
const ROUNDS = BENCH.rounds;
/** More tokens than any round can spend (checked after each round). */
const TOKENS_PER_SECOND = 8000;
/** Issue 46: at least 0.75 × the reference in every run (issue 28 asked 0.55 ×). */
const TARGET_RATIO = 0.75;

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const fixture = await startFixture();
  try {
    await seedDemoPlans(fixture.service.env);
    const [nodeId] = await seedNodes(fixture.sql, 1);
    const userIds = await seedAccounts(fixture.sql, 100);
    await subscribe(fixture.sql, userIds);

    const url = `${fixture.service.url}/internal/validate`;
    const headers = {
      'content-type': 'application/json',
      'x-internal-secret': benchNodeSecret(1),
    };
    const tokens = (seconds: number): Target => ({
      url,
      method: 'POST',
      headers,
      bodiesFile: freshTokenBodies(fixture.dir, userIds, nodeId, seconds * TOKENS_PER_SECOND),
    });
    const check = await fetch(url, {
      method: 'POST',
      headers,
      body: freshTokenBody(userIds[0], nodeId),
    });
    const answer = (await check.json()) as { valid?: boolean };
    if (answer.valid !== true) throw new Error(`validate answered ${JSON.stringify(answer)}`);
    const baseline: Target = { url: `${fixture.baseline.url}/users/me` };

    const rounds = await alternatingRounds(
      fixture,
      () => ({ target: tokens(DURATION_S), warmUp: tokens(2) }),
      baseline,
    );
    if (rounds.service.some((figures) => figures.bodiesUsed > DURATION_S * TOKENS_PER_SECOND)) {
      throw new Error('ran out of fresh tokens: raise TOKENS_PER_SECOND');
    }
    const [{ spent }] = await fixture.sql(`SELECT count(*)::int AS spent FROM used_session_tokens`);
    const answered = rounds.service.reduce((sum, figures) => sum + figures.requests, 0);
    process.stdout.write(
      [
        '',
        `POST /api/v1/internal/validate, a fresh token per request, the node's own secret, ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${DURATION_S} s (after 2 s warm-up each)`,
        'service: node dist/main.js, NODE_ENV=production, default LOG_LEVEL; reference: bench/reference/baseline-b.mjs',
        ...comparison(rounds, TARGET_RATIO).lines,
        `token ids spent: ${String(spent)} for ${answered} measured requests (plus the warm-ups and the check)`,
        `load average before: ${loadBefore}; after: ${loadAverage()} (2 cores)`,
        '',
      ].join('\n'),
    );
  } finally {
    await fixture.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
