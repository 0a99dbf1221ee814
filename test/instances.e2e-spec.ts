import { Client } from 'pg';
import { JOBS } from '../src/scheduler/intervals';
import { createTestDatabase, type TestDatabase } from './harness/database';
import { TRUSTED_ORIGIN } from './harness/app';
import { freePort, metricValue, parseMetrics } from './harness/metrics';
import {
  spawnService,
  stopService,
  waitHealthy,
  type ServiceProcess,
} from './harness/service-process';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PERIOD_S = 1;

/** Two service processes behind an imagined load balancer, on one PostgreSQL database. */
describe('two instances on one database', () => {
  jest.setTimeout(180_000);
  let database: TestDatabase;
  let instances: ServiceProcess[];
  let db: Client;
  let metricsPorts: number[];

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      DATABASE_URL: database.url,
      MIGRATIONS_RUN: 'false',
      TRUST_PROXY: '1',
      RECONCILE_INTERVAL_S: String(PERIOD_S),
      CLEANUP_INTERVAL_S: String(PERIOD_S),
      CSRF_TRUSTED_ORIGINS: TRUSTED_ORIGIN,
      CORS_ORIGINS: TRUSTED_ORIGIN,
    };
    metricsPorts = [await freePort(), await freePort()];
    instances = [];
    for (const metricsPort of metricsPorts) {
      instances.push(spawnService(await freePort(), { ...env, METRICS_PORT: String(metricsPort) }));
    }
    await Promise.all(instances.map((i) => waitHealthy(i)));
    db = new Client({ connectionString: database.url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await Promise.all((instances ?? []).map((i) => stopService(i)));
    await database?.drop();
  });

  it('runs each job once per period, never twice, over several periods', async () => {
    await sleep(6_000);
    const { rows } = await db.query<{ job: string; period: string; runs: number; by: string[] }>(
      `SELECT job, period_start::text AS period, count(*)::int AS runs,
              array_agg(instance) AS by
         FROM job_runs GROUP BY job, period_start ORDER BY job, period_start`,
    );
    for (const name of [JOBS.reconcile.name, JOBS.cleanup.name]) {
      const periods = rows.filter((r) => r.job === name);
      expect([name, periods.length >= 4]).toEqual([name, true]);
      expect(periods.filter((p) => p.runs !== 1)).toEqual([]);
    }
    // Both processes tick every period: what one ran, the other found done (or locked).
    for (const name of [JOBS.reconcile.name, JOBS.cleanup.name]) {
      const ticks = await Promise.all(
        metricsPorts.map(async (port) => {
          const samples = parseMetrics(
            await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
          );
          return {
            ran: metricValue(samples, 'vpn_job_runs_total', { job: name, outcome: 'ok' }),
            skipped: metricValue(samples, 'vpn_job_runs_total', { job: name, outcome: 'skipped' }),
          };
        }),
      );
      const { rows: recorded } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM job_runs WHERE job = $1 AND outcome = 'ok'`,
        [name],
      );
      // A run may end between the scrape and this query: one either way.
      expect(Math.abs(ticks[0].ran + ticks[1].ran - recorded[0].n)).toBeLessThanOrEqual(1);
      for (const t of ticks) expect(t.ran + t.skipped).toBeGreaterThanOrEqual(4);
    }
  });

  it('counts failed admin logins spread over both instances as one: the 21st is refused', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      const res = await fetch(`${instances[i % 2].baseUrl}/api/v1/auth/admin/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': '198.51.100.23' },
        body: JSON.stringify({ username: `guess_${i}`, password: 'not the password' }),
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 20)).toEqual(Array<number>(20).fill(401));
    expect(statuses[20]).toBe(429);
  });

  it('honours a session made on one instance on the other, and its refresh', async () => {
    const created = await fetch(`${instances[0].baseUrl}/api/v1/auth/seed`, { method: 'POST' });
    expect(created.status).toBe(201);
    const { access_token: token, user } = (await created.json()) as {
      access_token: string;
      user: { id: string };
    };
    const me = await fetch(`${instances[1].baseUrl}/api/v1/users/me`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: string }).id).toBe(user.id);

    const cookies = created.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const refreshed = await fetch(`${instances[1].baseUrl}/api/v1/auth/refresh`, {
      method: 'POST',
      headers: { Cookie: cookies, Origin: TRUSTED_ORIGIN },
    });
    expect(refreshed.status).toBe(200);
    // The rotated-away refresh token is now refused on the instance that issued it.
    const reused = await fetch(`${instances[0].baseUrl}/api/v1/auth/refresh`, {
      method: 'POST',
      headers: { Cookie: cookies, Origin: TRUSTED_ORIGIN },
    });
    expect(reused.status).toBe(401);
  });
});
