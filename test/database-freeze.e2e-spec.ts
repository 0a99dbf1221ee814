import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { type RestartablePostgres, startRestartablePostgres } from './harness/postgres-server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const POOL_WAIT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 2_000;
/** The client's deadline of a query: the statement timeout and a second (data-source.ts). */
const DEADLINE_MS = STATEMENT_TIMEOUT_MS + 1_000;
const FROZEN_MS = 12_000;

// A PostgreSQL server of its own, frozen with SIGSTOP under the running service: connections stay
// open and nothing answers, so the server's own statement_timeout cannot fire.
describe('the service while PostgreSQL is frozen', () => {
  jest.setTimeout(120_000);
  let server: RestartablePostgres;
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    server = await startRestartablePostgres();
    t = await startTestApp(
      {
        MIGRATIONS_RUN: 'true',
        DB_POOL_WAIT_MS: String(POOL_WAIT_MS),
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      },
      { database: { url: server.url, drop: async () => undefined } },
    );
    user = await newUser(t, 'seed');
  });
  afterAll(async () => {
    server?.thaw();
    await t?.close();
    await server?.close();
  });

  const me = async (): Promise<{ status: number; body: string; ms: number }> => {
    const started = Date.now();
    const response = await fetch(`${t.baseUrl}/api/v1/users/me`, { headers: user.bearer });
    return { status: response.status, body: await response.text(), ms: Date.now() - started };
  };

  it('requests already waiting end within DB_POOL_WAIT_MS and the deadline, 503; /health says so; all recover after', async () => {
    // Connections in the pool, idle: the requests below take them and send their statements.
    expect((await Promise.all(Array.from({ length: 5 }, me))).map((a) => a.status)).toEqual(
      Array(5).fill(200),
    );

    server.freeze();
    const frozenAt = Date.now();
    // Thawed after FROZEN_MS whatever happens, so that a request that waited it out ends too.
    const thawing = sleep(FROZEN_MS).then(() => server.thaw());
    // More requests than the pool has connections would wait for one first; these wait for their
    // statements' answers (five on open connections) or a new connection (the rest).
    const waiting = Array.from({ length: 25 }, me);
    await sleep(300);
    const health = await fetch(`${t.baseUrl}/api/v1/health`);
    const answers = await Promise.all(waiting);
    const ended = Date.now() - frozenAt;
    const stillFrozen = ended < FROZEN_MS;
    await thawing;

    expect(stillFrozen).toBe(true);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: 'error', db: 'down' });
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
      expect(answer.body).not.toMatch(/stack|\n\s+at |SELECT|timeout/);
    }
    // Within the pool wait and one deadline; a second of slack for the shared, loaded machine.
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(POOL_WAIT_MS + DEADLINE_MS + 1_000);
    expect(ended).toBeLessThan(POOL_WAIT_MS + DEADLINE_MS + 1_000);

    // Thawed, the service answers again by itself.
    const thawed = Date.now();
    let recovered = false;
    while (!recovered && Date.now() - thawed < 15_000) {
      recovered = (await me()).status === 200;
      if (!recovered) await sleep(100);
    }
    expect(recovered).toBe(true);
    expect((await Promise.all(Array.from({ length: 10 }, me))).map((a) => a.status)).toEqual(
      Array(10).fill(200),
    );
  });
});
