import { AdvisoryLocks } from '../src/database/advisory-lock';
import { Metrics } from '../src/metrics/metrics.service';
import type { JobSchedule } from '../src/scheduler/intervals';
import { JobRunner } from '../src/scheduler/job-runner.service';
import { sqlRows } from '../src/database/sql';
import { startTestApp, type TestApp } from './harness/app';
import { metricValue, parseMetrics } from './harness/metrics';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the start of the next period of `seconds` on the wall clock (plus a margin). */
async function nextPeriod(seconds: number): Promise<void> {
  const ms = seconds * 1000;
  await sleep(ms - (Date.now() % ms) + 50);
}

describe('periodic jobs across two instances on one database', () => {
  let a: TestApp;
  let b: TestApp;
  let runners: [JobRunner, JobRunner];
  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({}, { database: a.database });
    runners = [a.app.get(JobRunner), b.app.get(JobRunner)];
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const job = (name: string, timeoutMs = 5_000): JobSchedule => ({
    name,
    lockKey: 4_200_000 + name.length,
    intervalS: () => 2,
    timeoutMs,
  });
  const runsOf = (name: string) =>
    sqlRows<{ period: string; instance: string; outcome: string | null }>(
      a.dataSource,
      `SELECT period_start::text AS period, instance, outcome FROM job_runs WHERE job = $1
        ORDER BY id`,
      [name],
    );

  it('runs a job once per period whichever instances tick, and records who ran it', async () => {
    const schedule = job('test.once');
    let runs = 0;
    const work = async () => {
      runs += 1;
      await sleep(100);
    };
    await nextPeriod(2);
    // Both tick at once, then both again later in the same period.
    const first = await Promise.all(runners.map((r) => r.tick(schedule, work)));
    expect(first.sort()).toEqual(['ok', 'skipped']);
    expect(await Promise.all(runners.map((r) => r.tick(schedule, work)))).toEqual([
      'skipped',
      'skipped',
    ]);
    await nextPeriod(2);
    const second = await Promise.all(runners.map((r) => r.tick(schedule, work)));
    expect(second.sort()).toEqual(['ok', 'skipped']);

    expect(runs).toBe(2);
    const recorded = await runsOf(schedule.name);
    expect(recorded).toHaveLength(2);
    expect(new Set(recorded.map((r) => r.period)).size).toBe(2);
    expect(recorded.every((r) => r.outcome === 'ok')).toBe(true);
    expect(recorded.every((r) => runners.some((x) => x.instance === r.instance))).toBe(true);
  });

  it("holds back no clean-up while it works: its lock's transaction keeps no snapshot", async () => {
    // The session holding advisory lock `key`, and whether it keeps an oldest visible transaction
    // (which VACUUM and page pruning must respect, in every table). A key below 2^32 is held as
    // class 0, object `key`, sub-object 1.
    const holder = (key: number) =>
      sqlRows<{ state: string; keepsSnapshot: boolean }>(
        a.dataSource,
        `SELECT s.state, s.backend_xmin IS NOT NULL AS "keepsSnapshot"
           FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = $1
            AND l.objsubid = 1`,
        [key],
      );
    const locks = a.app.get(AdvisoryLocks);
    const whileWorking = async (
      key: number,
      take: (key: number, work: () => Promise<void>) => Promise<unknown>,
    ) => {
      let seen: unknown;
      await take(key, async () => {
        seen = await holder(key);
      });
      return seen;
    };
    const idle = [{ state: 'idle in transaction', keepsSnapshot: false }];
    // Both ways a job takes its lock: skipping when another instance has it, and waiting for it.
    expect(await whileWorking(4_300_001, (key, work) => locks.tryWithLock(key, work))).toEqual(
      idle,
    );
    expect(await whileWorking(4_300_002, (key, work) => locks.withLock(key, work))).toEqual(idle);
  });

  it('does not overlap itself on one instance', async () => {
    const schedule = job('test.overlap');
    await nextPeriod(2);
    const slow = runners[0].tick(schedule, () => sleep(300));
    expect(await runners[0].tick(schedule, () => sleep(1))).toBe('busy');
    expect(await slow).toBe('ok');
  });

  it('records a failed run and a run past its bound, and counts them in metrics', async () => {
    const failing = job('test.failing');
    const slow = job('test.slowest', 100);
    await nextPeriod(2);
    expect(
      await runners[0].tick(failing, () => Promise.reject(new Error('upstream is down'))),
    ).toBe('failed');
    // A job told to stop at its bound stops, and the run says so.
    const outcome = await runners[0].tick(
      slow,
      (signal) => new Promise((done) => signal.addEventListener('abort', done)),
    );
    expect(outcome).toBe('timed_out');
    expect((await runsOf(failing.name)).map((r) => r.outcome)).toEqual(['failed']);
    expect((await runsOf(slow.name)).map((r) => r.outcome)).toEqual(['timed_out']);

    const samples = parseMetrics(await a.app.get(Metrics).registry.metrics());
    expect(
      metricValue(samples, 'vpn_job_runs_total', { job: failing.name, outcome: 'failed' }),
    ).toBe(1);
    expect(metricValue(samples, 'vpn_job_duration_seconds_count', { job: slow.name })).toBe(1);
  });

  it('starts no run once stopping, and waits for the one in progress', async () => {
    const schedule = job('test.stopping');
    await nextPeriod(2);
    let finished = false;
    const running = runners[1].tick(schedule, async () => {
      await sleep(300);
      finished = true;
    });
    await sleep(50);
    await runners[1].stop(5_000);
    expect(finished).toBe(true);
    expect(await running).toBe('ok');
    expect(await runners[1].tick(job('test.after-stop'), () => sleep(1))).toBe('busy');
  });
});
