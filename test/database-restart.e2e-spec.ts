import { JobRunner } from '../src/scheduler/job-runner.service';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { type RestartablePostgres, startRestartablePostgres } from './harness/postgres-server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  at: number;
  status: number;
  body: string;
}

// A PostgreSQL server of its own: the test stops and starts it under the running service.
describe('the service while PostgreSQL restarts', () => {
  jest.setTimeout(180_000);
  let server: RestartablePostgres;
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    server = await startRestartablePostgres();
    t = await startTestApp(
      { MIGRATIONS_RUN: 'true' },
      { database: { url: server.url, drop: async () => undefined } },
    );
    user = await newUser(t, 'seed');
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  it('answers 503 while it is away, never a 500, and recovers by itself', async () => {
    const answers: Answer[] = [];
    let loading = true;
    const load = (async () => {
      while (loading) {
        const res = await fetch(`${t.baseUrl}/api/v1/users/me`, {
          headers: user.bearer,
        }).catch(() => null);
        if (res) answers.push({ at: Date.now(), status: res.status, body: await res.text() });
        await sleep(25);
      }
    })();
    const health = async () => (await fetch(`${t.baseUrl}/api/v1/health`)).status;

    await sleep(1_000);
    const stopping = Date.now();
    await server.stop();
    const stopped = Date.now();
    await sleep(1_500);
    const healthWhileDown = await fetch(`${t.baseUrl}/api/v1/health`);
    expect(healthWhileDown.status).toBe(503);
    expect(await healthWhileDown.json()).toEqual({ status: 'error', db: 'down' });
    await sleep(1_500);
    const whileDown = answers.filter((a) => a.at > stopped + 500 && a.at < Date.now());
    // A job's tick skips its period instead of failing the process.
    const job = { name: 'test.restart', lockKey: 4_300_001, intervalS: () => 1, timeoutMs: 1_000 };
    const runner = t.app.get(JobRunner);
    expect(await runner.tick(job, () => Promise.resolve())).toBe('unavailable');

    const starting = Date.now();
    await server.start();
    let recovered = 0;
    while (Date.now() - starting < 30_000) {
      if ((await health()) === 200) {
        recovered = Date.now();
        break;
      }
      await sleep(100);
    }
    expect(recovered).toBeGreaterThan(0);
    expect(await runner.tick(job, () => Promise.resolve())).toBe('ok');
    await sleep(1_500);
    loading = false;
    await load;

    // Errors only while it was away, each the contract's 503 with no stack or SQL.
    expect(answers.filter((a) => a.at < stopping).map((a) => a.status)).not.toContain(503);
    expect(answers.filter((a) => a.at < stopping).every((a) => a.status === 200)).toBe(true);
    expect(whileDown.length).toBeGreaterThan(5);
    for (const answer of whileDown) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    }
    for (const answer of answers) {
      expect([200, 503]).toContain(answer.status);
      expect(answer.body).not.toMatch(/stack|\n\s+at |SELECT|ECONNREFUSED/);
    }
    const afterRecovery = answers.filter((a) => a.at > recovered + 200);
    expect(afterRecovery.length).toBeGreaterThan(10);
    expect(afterRecovery.every((a) => a.status === 200)).toBe(true);
  });
});
