/**
 * `npm run bench:memory`: the service's peak resident memory (`VmHWM`, summed over its process
 * tree) through a run of every hot route under load (50 connections each), with 50 staff signing
 * in at once during each route's run, then a burst of 50 traffic reports of 10,000 entries each
 * at once, again with 50 staff signing in. Target: under 250 MB, one process. The service is started as the image runs it (see
 * lib/fixture.ts): `node dist/main.js` with the Dockerfile's ENV lines, its allocator and heap
 * settings among them.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { hashPassword } from '../src/auth/passwords';
import { SERVICE_SECRETS, startFixture } from './lib/fixture';
import { postReport } from './lib/reports';
import { freshTokenBodies, seedAccounts, seedDemoPlans, seedNodes, subscribe } from './lib/seed';
import { BENCH, load, type LoadConfig } from './lib/load';
import { loadAverage, peakRssMiB, processTree } from './lib/processes';

const DURATION_S = BENCH.durationS;
const CONNECTIONS = BENCH.connections;
const STAFF = Number(process.env.BENCH_STAFF ?? 50);
const STAFF_PASSWORD = 'bench staff password 0123';
const TARGET_MIB = 250 / 1.048576; // 250 MB
const REPORTS = 50;
const REPORT_ENTRIES = 10_000;

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const fixture = await startFixture();
  try {
    const base = fixture.service.url;
    await seedDemoPlans(fixture.service.env);
    await seedPlayersAndStaff(fixture.sql);
    const signUp = await fetch(`${base}/auth/seed`, { method: 'POST' });
    const { access_token: token, user } = (await signUp.json()) as {
      access_token: string;
      user: { id: string };
    };
    const nodeIds = await seedNodes(fixture.sql, 50);
    await subscribe(fixture.sql, [user.id]);

    const routes: [string, Omit<LoadConfig, 'connections' | 'durationS'>][] = [
      ['GET /users/me', { url: `${base}/users/me`, headers: { cookie: `access_token=${token}` } }],
      ['GET /plans', { url: `${base}/plans` }],
      ['GET /game/leaderboard', { url: `${base}/game/leaderboard` }],
      [
        'GET /nodes/routing',
        { url: `${base}/nodes/routing`, headers: { authorization: `Bearer ${token}` } },
      ],
      [
        'POST /internal/validate',
        {
          url: `${base}/internal/validate`,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-internal-secret': SERVICE_SECRETS.INTERNAL_SECRET,
          },
          bodiesFile: freshTokenBodies(fixture.dir, [user.id], nodeIds[0], 50_000),
        },
      ],
    ];
    const lines = [
      '',
      `Peak resident memory of the service: each hot route for ${DURATION_S} s at ${CONNECTIONS} connections, ${STAFF} concurrent staff logins ${Math.min(3, DURATION_S - 1)} s into each`,
      '| route | req/s | p99 ms | errors | staff logins (200) | slowest login ms | VmHWM after, MiB |',
      '|---|--:|--:|--:|--:|--:|--:|',
    ];
    for (const [round, [name, target]] of routes.entries()) {
      const running = load({ ...target, connections: CONNECTIONS, durationS: DURATION_S });
      await new Promise((done) => setTimeout(done, Math.min(3, DURATION_S - 1) * 1000));
      const logins = STAFF > 0 ? await staffLogins(base, round) : { ok: 0, slowestMs: 0 };
      const result = await running;
      lines.push(
        `| ${name} | ${result.requests.average.toFixed(0)} | ${result.latency.p99} | ${result.errors + result.non2xx} | ${logins.ok}/${STAFF} | ${logins.slowestMs.toFixed(0)} | ${peakRssMiB(fixture.service.pid).toFixed(0)} |`,
      );
    }
    const burst = await reportBurst(
      fixture.service.url,
      await seedAccounts(fixture.sql, REPORT_ENTRIES),
      nodeIds,
    );
    const logins = await burst.logins;
    lines.push(
      `| POST /internal/traffic, ${REPORTS} × ${REPORT_ENTRIES.toLocaleString('en')} entries at once | – | ${burst.slowestMs.toFixed(0)} (slowest) | ${REPORTS - burst.ok} | ${logins.ok}/${STAFF} | ${logins.slowestMs.toFixed(0)} | ${peakRssMiB(fixture.service.pid).toFixed(0)} |`,
    );
    const peak = peakRssMiB(fixture.service.pid);
    const processes = processTree(fixture.service.pid).length;
    lines.push(
      `service peak resident memory (VmHWM, summed over its ${processes} process${processes === 1 ? '' : 'es'}): ${peak.toFixed(0)} MiB = ${(peak * 1.048576).toFixed(0)} MB (target: under 250 MB) ${peak < TARGET_MIB ? 'PASS' : 'FAIL'}`,
      `load average before: ${loadBefore}; after: ${loadAverage()} (2 cores)`,
      '',
    );
    process.stdout.write(lines.join('\n'));
  } finally {
    await fixture.close();
  }
}

/**
 * 50 reports of 10,000 entries (about 0.9 MB of JSON each) posted at once, each from another node;
 * 50 staff sign in while they are applied.
 */
async function reportBurst(
  base: string,
  userIds: string[],
  nodeIds: string[],
): Promise<{ ok: number; slowestMs: number; logins: ReturnType<typeof staffLogins> }> {
  const payloads = Array.from({ length: REPORTS }, (_, r) =>
    Buffer.from(
      JSON.stringify({
        node_id: nodeIds[r % nodeIds.length],
        report_id: randomUUID(),
        entries: userIds.map((id, i) => ({ user_id: id, bytes_up: 1000 + i, bytes_down: r })),
      }),
    ),
  );
  const agent = new Agent({ keepAlive: true, maxSockets: REPORTS });
  const url = new URL(`${base}/internal/traffic`);
  try {
    const sent = payloads.map(async (payload) => {
      const started = performance.now();
      const answer = await postReport(url, payload, agent);
      return { ok: answer.status === 200, ms: performance.now() - started };
    });
    const logins = STAFF > 0 ? staffLogins(base, 99) : Promise.resolve({ ok: 0, slowestMs: 0 });
    const results = await Promise.all(sent);
    return {
      ok: results.filter((result) => result.ok).length,
      slowestMs: Math.max(...results.map((result) => result.ms)),
      logins,
    };
  } finally {
    agent.destroy();
  }
}

/** 50 staff sign in at once, each from its own address (the service trusts the proxy header). */
async function staffLogins(
  base: string,
  round: number,
): Promise<{ ok: number; slowestMs: number }> {
  const results = await Promise.all(
    Array.from({ length: STAFF }, async (_, i) => {
      const started = performance.now();
      const response = await fetch(`${base}/auth/admin/login`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-forwarded-for': `10.0.${round}.${i + 1}`,
        },
        body: JSON.stringify({ username: staffName(i), password: STAFF_PASSWORD }),
      });
      await response.arrayBuffer();
      return { ok: response.status === 200, ms: performance.now() - started };
    }),
  );
  return {
    ok: results.filter((result) => result.ok).length,
    slowestMs: Math.max(...results.map((result) => result.ms)),
  };
}

const staffName = (i: number): string => `staff${String(i + 1).padStart(2, '0')}`;

/** 2,000 players with three finished rounds each, and the staff accounts. */
async function seedPlayersAndStaff(
  sql: (text: string, params?: unknown[]) => Promise<unknown>,
): Promise<void> {
  await sql(
    `INSERT INTO users (seed_hash) SELECT md5('player' || g) FROM generate_series(1, 2000) g`,
  );
  await sql(
    `INSERT INTO game_rounds (user_id, board, status, score, cleared, clicks, expires_at, finished_at)
     SELECT u.id, '[]'::jsonb, 'finished', (random() * 5000)::int, 0, '[]'::jsonb, now(),
            now() - random() * interval '30 days'
       FROM users u CROSS JOIN generate_series(1, 3) WHERE u.seed_hash IS NOT NULL`,
  );
  const hash = await hashPassword(STAFF_PASSWORD);
  await sql(
    `INSERT INTO users (username, password_hash, role)
     SELECT 'staff' || lpad(g::text, 2, '0'), $1, 'support' FROM generate_series(1, $2::int) g`,
    [hash, STAFF],
  );
  await sql('ANALYZE');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
