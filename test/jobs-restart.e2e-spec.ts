import { Client } from 'pg';
import { JOBS } from '../src/scheduler/intervals';
import { JobRunner } from '../src/scheduler/job-runner.service';
import { startTestApp, type TestApp } from './harness/app';
import { freePort } from './harness/metrics';
import {
  spawnService,
  stopService,
  waitHealthy,
  type ServiceProcess,
} from './harness/service-process';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY_S = 86_400;

interface Run {
  job: string;
  period: string;
  instance: string;
  outcome: string | null;
  startedAt: Date;
}

/** Periodic jobs of a service that was down when their period began. */
describe('jobs after a restart', () => {
  jest.setTimeout(180_000);
  let previous: TestApp;
  let db: Client;
  let instances: ServiceProcess[] = [];

  beforeAll(async () => {
    previous = await startTestApp();
    db = new Client({ connectionString: previous.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await Promise.all(instances.map((i) => stopService(i)));
    await db?.end();
    await previous?.app.close();
    await previous?.database.drop();
  });

  const runs = async (): Promise<Run[]> =>
    (
      await db.query<Run>(
        `SELECT job, period_start::text AS period, instance, outcome, started_at AS "startedAt"
           FROM job_runs WHERE job = ANY($1) ORDER BY id`,
        [[JOBS.cleanup.name, JOBS.reconcile.name]],
      )
    ).rows;

  it('runs a daily job that came due while no instance ran within seconds of the start, once across two instances', async () => {
    // Periods are days on the database clock; keep clear of midnight so the test sees one period.
    const { rows } = await db.query<{ left: number }>(
      `SELECT ${DAY_S} - extract(epoch FROM now())::bigint % ${DAY_S} AS left`,
    );
    if (Number(rows[0].left) < 120) await sleep((Number(rows[0].left) + 5) * 1000);

    // An earlier instance ran the reconciliation this period, and then the service was down.
    const earlier = previous.app.get(JobRunner);
    expect(await earlier.tick({ ...JOBS.reconcile, intervalS: () => DAY_S }, async () => {})).toBe(
      'ok',
    );
    await earlier.stop(1_000);
    expect((await runs()).map((r) => r.job)).toEqual([JOBS.reconcile.name]);

    const env = {
      DATABASE_URL: previous.databaseUrl,
      MIGRATIONS_RUN: 'false',
      CLEANUP_INTERVAL_S: String(DAY_S),
      RECONCILE_INTERVAL_S: String(DAY_S),
    };
    const started = Date.now();
    instances = [spawnService(await freePort(), env), spawnService(await freePort(), env)];
    await Promise.all(instances.map((i) => waitHealthy(i)));
    const healthy = Date.now();

    let cleanups: Run[] = [];
    while (Date.now() - healthy < 10_000) {
      cleanups = (await runs()).filter((r) => r.job === JOBS.cleanup.name && r.outcome !== null);
      if (cleanups.length > 0) break;
      await sleep(100);
    }
    // Both instances have ticked by now (a second after each started); neither runs it again.
    await sleep(2_000);
    const all = await runs();
    const cleanup = all.filter((r) => r.job === JOBS.cleanup.name);
    expect(cleanup).toHaveLength(1);
    expect(cleanup[0].outcome).toBe('ok');
    // It ran within seconds of the start, not a day later.
    expect(cleanup[0].startedAt.getTime() - started).toBeGreaterThanOrEqual(0);
    expect(cleanup[0].startedAt.getTime() - healthy).toBeLessThan(5_000);
    // The reconciliation had already run this period: left alone.
    expect(all.filter((r) => r.job === JOBS.reconcile.name)).toHaveLength(1);
    expect(all.find((r) => r.job === JOBS.reconcile.name)?.instance).toBe(earlier.instance);
  });
});
