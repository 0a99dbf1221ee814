/**
 * The service behind a real PgBouncer in transaction mode, its pool smaller than the service's own:
 * two instances with DB_POOLER=pgbouncer (DATABASE_URL the pooler, DATABASE_DIRECT_URL PostgreSQL
 * for the locks) sign up, sign in, read /users/me, route, validate, report traffic and confirm an
 * invoice, all at once where it matters, with no 5xx; their jobs run once per period.
 * Needs Debian's `pgbouncer` (test/harness/pgbouncer.ts says how to install it when it is missing).
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { JOBS } from '../src/scheduler/intervals';
import { startBillingWorld, WALLET, type BillingWorld } from './fakes/billing';
import { tonTransaction } from './fakes/toncenter';
import { startTestApp, type TestApp } from './harness/app';
import { createTestDatabase, type TestDatabase } from './harness/database';
import { newUser, type TestUser } from './harness/factories';
import { createNode, subscribedUser, tcpListener } from './harness/nodes';
import { type PgBouncer, startPgBouncer } from './harness/pgbouncer';
import { freePort } from './harness/processes';
import { spawnService, stopService } from './harness/service-process';

/** PgBouncer's server connections for the database: far fewer than one instance's pool of 20. */
const POOL_SIZE = 3;
const PERIOD_S = 1;

describe('behind PgBouncer in transaction mode', () => {
  jest.setTimeout(120_000);
  let database: TestDatabase;
  let bouncer: PgBouncer;
  let world: BillingWorld;
  let instances: TestApp[];
  let direct: Client;
  let owner: TestUser;
  /** Every answer of every request this file sends through the service, by status. */
  const statuses = new Map<number, number>();

  const call = async (
    instance: TestApp,
    method: string,
    path: string,
    { body, headers = {} }: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: unknown }> => {
    const response = await fetch(`${instance.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null };
  };
  const on = (i: number) => instances[i % instances.length];
  let tunnel: Awaited<ReturnType<typeof tcpListener>> | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    bouncer = await startPgBouncer(database.url, { poolSize: POOL_SIZE });
    const env = {
      DATABASE_URL: bouncer.url,
      DB_POOLER: 'pgbouncer',
      DATABASE_DIRECT_URL: database.url,
      RECONCILE_INTERVAL_S: String(PERIOD_S),
      CLEANUP_INTERVAL_S: String(PERIOD_S),
      TON_API_KEY: 'toncenter-test-key',
    };
    const options = { databaseUrl: bouncer.url, schedule: true };
    world = await startBillingWorld({ USD: '2.5' }, env, options);
    const second = await startTestApp(
      {
        ...env,
        TON_RATES_URL: world.tonapi.url,
        TON_API_URL: world.toncenter.url,
        TELEGRAM_API_ROOT: world.botApi.url,
        TON_WALLET_ADDRESS: WALLET.toString(),
      },
      options,
    );
    instances = [world.t, second];
    direct = new Client({ connectionString: database.url });
    await direct.connect();
    owner = await newUser(world.t, 'owner');
  });
  afterAll(async () => {
    await tunnel?.close();
    await direct?.end();
    await instances?.[1]?.close();
    await world?.close();
    await bouncer?.stop();
    await database?.drop();
  });

  it('goes through PgBouncer, with fewer server connections than the service asks for', async () => {
    const [row] = (await world.t.dataSource.query(`SHOW port`)) as { port: string }[];
    expect(Number(row.port)).toBe(Number(new URL(database.url).port || 5432));
    expect(new URL(world.t.databaseUrl).port).toBe(new URL(bouncer.url).port);
    expect(world.t.dataSource.options.extra).toMatchObject({ max: 20 });
    expect(world.t.dataSource.options.extra).not.toHaveProperty('statement_timeout');
    expect(world.t.dataSource.options.extra).not.toHaveProperty(
      'idle_in_transaction_session_timeout',
    );
  });

  it('signs up, signs in and reads /users/me concurrently on both instances: no 5xx', async () => {
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(on(i), 'POST', '/auth/seed')),
    );
    expect(created.map((r) => r.status)).toEqual(Array<number>(20).fill(201));
    const seeds = created.map((r) => (r.body as { seed: string }).seed);

    const signedIn = await Promise.all(
      seeds.map((seed, i) => call(on(i + 1), 'POST', '/auth/seed/login', { body: { seed } })),
    );
    expect(signedIn.map((r) => r.status)).toEqual(Array<number>(20).fill(200));
    const tokens = signedIn.map((r) => (r.body as { access_token: string }).access_token);
    const ids = signedIn.map((r) => (r.body as { user: { id: string } }).user.id);

    // 400 reads, 40 at a time, each instance's pool (20) far above PgBouncer's (3).
    for (let round = 0; round < 10; round++) {
      const reads = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          call(on(i + round), 'GET', '/users/me', {
            headers: { Authorization: `Bearer ${tokens[i % 20]}` },
          }),
        ),
      );
      expect(reads.map((r) => r.status)).toEqual(Array<number>(40).fill(200));
      expect(reads.map((r) => (r.body as { id: string }).id)).toEqual(
        Array.from({ length: 40 }, (_, i) => ids[i % 20]),
      );
    }
  });

  it('routes, validates a token once and applies a traffic report once', async () => {
    // A tunnel port that answers: the instances' health check, whenever its round comes, finds
    // the node online as the UPDATE below says it is.
    tunnel = await tcpListener();
    const node = await createNode(world.t, owner, { tunnel_port: tunnel.port });
    await direct.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
      [node.id],
    );
    const user = await subscribedUser(world.t);
    const routing = await call(on(0), 'GET', '/nodes/routing', { headers: user.bearer });
    expect(routing.status).toBe(200);
    const [entry] = routing.body as { node_id: string; session_token: string }[];
    expect(entry.node_id).toBe(node.id);

    const secret = { 'X-Internal-Secret': world.t.settings.internalSecret };
    const validate = () =>
      call(on(1), 'POST', '/internal/validate', {
        headers: secret,
        body: { token: entry.session_token, node_id: node.id },
      });
    const [first, second] = await Promise.all([validate(), validate()]);
    expect([first.body, second.body]).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ valid: true, user_id: user.user.id }),
        { valid: false, reason: 'used' },
      ]),
    );

    const report = {
      node_id: node.id,
      report_id: randomUUID(),
      entries: Array.from({ length: 1000 }, (_, i) => ({
        user_id: user.user.id,
        bytes_up: i,
        bytes_down: 1,
      })),
    };
    // The same report delivered to both instances at once: applied once.
    const delivered = await Promise.all(
      [0, 1].map((i) =>
        call(on(i), 'POST', '/internal/traffic', { headers: secret, body: report }),
      ),
    );
    expect(delivered.map((r) => r.status)).toEqual([200, 200]);
    const { rows } = await direct.query<{ used: string }>(
      `SELECT traffic_used_bytes::text AS used FROM users WHERE id = $1`,
      [user.user.id],
    );
    expect(rows[0].used).toBe(String((999 * 1000) / 2 + 1000));
  });

  it('confirms a paid invoice once, whichever instance is asked', async () => {
    const put = await call(on(0), 'PUT', '/admin/plans/monthly', {
      headers: owner.bearer,
      body: {
        duration_days: 30,
        traffic_limit_bytes: 107374182400,
        prices: { USD: '499' },
        active: true,
      },
    });
    expect(put.status).toBe(200);
    const buyer = await newUser(world.t, 'seed');
    const ordered = await call(on(1), 'POST', '/invoices', {
      headers: buyer.bearer,
      body: { plan_name: 'monthly', currency: 'USD', provider: 'ton' },
    });
    expect(ordered.status).toBe(201);
    const invoice = ordered.body as {
      id: string;
      amount: string;
      payment: { comment: string };
    };
    const transfer = tonTransaction({
      to: WALLET.toRawString().toUpperCase(),
      value: invoice.amount,
      comment: invoice.payment.comment,
    });
    world.toncenter.transactions.push(transfer);
    const confirmed = await Promise.all(
      [0, 1].map((i) =>
        call(on(i), 'POST', `/invoices/${invoice.id}/confirm`, { headers: buyer.bearer }),
      ),
    );
    // One pays, the other finds it paid; or the reconciliation job paid it first and both do.
    for (const r of confirmed) expect([200, 409]).toContain(r.status);
    const { rows } = await direct.query<{ status: string; tx: string; plan: string; days: number }>(
      `SELECT i.status, i.provider_tx_ref AS tx, u.plan_name AS plan,
              round(extract(epoch FROM u.subscription_expires_at - now()) / 86400)::int AS days
         FROM invoices i JOIN users u ON u.id = i.user_id WHERE i.id = $1`,
      [invoice.id],
    );
    // Paid once: a second application would have made it 60 days.
    expect(rows).toEqual([{ status: 'paid', tx: transfer.hash, plan: 'monthly', days: 30 }]);
  });

  it("runs each of both instances' jobs once per period", async () => {
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const { rows } = await direct.query<{ job: string; period: string; runs: number }>(
      `SELECT job, period_start::text AS period, count(*)::int AS runs
         FROM job_runs GROUP BY job, period_start ORDER BY job, period_start`,
    );
    for (const name of [JOBS.reconcile.name, JOBS.cleanup.name]) {
      const periods = rows.filter((r) => r.job === name);
      expect([name, periods.length >= 3]).toEqual([name, true]);
      expect(periods.filter((p) => p.runs !== 1)).toEqual([]);
    }
    const { rows: failed } = await direct.query<{ job: string; outcome: string }>(
      `SELECT job, outcome FROM job_runs WHERE outcome <> 'ok'`,
    );
    expect(failed).toEqual([]);
  });

  it('without DB_POOLER, is refused at start for its session parameters, and says so', async () => {
    const service = spawnService(await freePort(), {
      DATABASE_URL: bouncer.url,
      DB_STARTUP_WAIT_S: '4',
    });
    try {
      expect(await service.exited()).toBe(1);
    } finally {
      await stopService(service);
    }
    // A warning line (pino's level 40) of the database wait.
    expect(service.stdout()).toMatch(/"level":40[^\n]*unsupported startup parameter/);
    expect(service.stderr()).toMatch(
      /still unreachable after 4 s: .*unsupported startup parameter/,
    );
  });

  it('answered no request with a 5xx', () => {
    expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
    expect(statuses.get(200)).toBeGreaterThan(400);
  });
});
