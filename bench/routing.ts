/**
 * `npm run bench:routing`: GET /api/v1/nodes/routing (50 nodes, a fresh session token for each)
 * with a Bearer session on the built service run as an operator runs it (see lib/fixture.ts),
 * beside the reference server `bench/reference/baseline-b.mjs`, alternating rounds on the same
 * PostgreSQL. Prints requests per second, p99 and CPU per request of each server and of PostgreSQL.
 */
import { startFixture } from './lib/fixture';
import { alternatingRounds, comparison, type Target } from './lib/cpu-load';
import { BENCH } from './lib/load';
import { loadAverage } from './lib/processes';
import { seedDemoPlans, seedNodes, subscribe } from './lib/seed';

const DURATION_S = BENCH.durationS;
const CONNECTIONS = BENCH.connections;
const ROUNDS = BENCH.rounds;
const NODES = 50;
const TARGET_RPS = 2235;
/** Issue 46: at least half the reference's throughput. */
const TARGET_RATIO = 0.5;

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const fixture = await startFixture();
  try {
    await seedDemoPlans(fixture.service.env);
    await seedNodes(fixture.sql, NODES);
    const signUp = await fetch(`${fixture.service.url}/auth/seed`, { method: 'POST' });
    const { access_token: accessToken, user } = (await signUp.json()) as {
      access_token: string;
      user: { id: string };
    };
    await subscribe(fixture.sql, [user.id]);

    const service: Target = {
      url: `${fixture.service.url}/nodes/routing`,
      headers: { authorization: `Bearer ${accessToken}` },
    };
    const check = await fetch(service.url, { headers: service.headers });
    const entries = (await check.json()) as unknown[];
    if (check.status !== 200 || entries.length !== NODES) {
      throw new Error(`routing answered ${check.status} with ${entries.length} nodes`);
    }
    const baseline: Target = { url: `${fixture.baseline.url}/users/me` };

    const rounds = await alternatingRounds(fixture, () => ({ target: service }), baseline);
    const compared = comparison(rounds, TARGET_RATIO);
    process.stdout.write(
      [
        '',
        `GET /api/v1/nodes/routing (${NODES} nodes, a fresh token each), Bearer, ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${DURATION_S} s (after 2 s warm-up each)`,
        'service: node dist/main.js, NODE_ENV=production, default LOG_LEVEL; reference: bench/reference/baseline-b.mjs',
        ...compared.lines,
        `service: ${compared.service.rps.toFixed(0)} req/s (target ≥ ${TARGET_RPS})`,
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
