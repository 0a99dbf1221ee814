import { randomUUID } from 'node:crypto';
import { Invoice } from '../src/billing/entities/invoice.entity';
import { NodeTrafficDay } from '../src/nodes/entities/node-traffic-day.entity';
import { NodesRepository } from '../src/nodes/nodes.repository';
import { shownOnlineSql, shownStatus } from '../src/nodes/node-status';
import { WithdrawalRequest } from '../src/partners/entities/withdrawal-request.entity';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';
import { DAY, dayAgo, invoiceRow, noonAgo } from './harness/stats-seed';
import { createNode } from './harness/nodes';

const API = '/api/v1';

/**
 * GET /admin/stats on a seeded data set: accounts, subscriptions, invoices paid on known days in
 * several currencies, tickets, withdrawals, nodes and their daily traffic. Every figure is what
 * the seed put in the database.
 */
describe('GET /admin/stats', () => {
  let t: TestApp;
  let owner: TestUser;
  let moderator: TestUser;
  let support: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    [owner, moderator, support] = await Promise.all([
      newUser(t, 'owner'),
      newUser(t, 'moderator'),
      newUser(t, 'support'),
    ]);
    await savePlan(t, owner, { prices: { USD: '499', EUR: '450' } });
  });
  afterAll(() => t.close());

  const stats = (query = '') => t.http().get(`${API}/admin/stats${query}`).set(owner.bearer);

  it('totals and days are what the database holds', async () => {
    // Accounts: the three staff above (today), and six more on known days.
    const running = new Date(Date.now() + 5 * DAY);
    const buyers = await Promise.all([
      newUser(t, 'seed', {
        createdAt: noonAgo(2),
        planName: 'monthly',
        subscriptionExpiresAt: running,
      }),
      newUser(t, 'seed', { createdAt: noonAgo(2) }),
      newUser(t, 'telegram', {
        createdAt: noonAgo(5),
        planName: 'monthly',
        subscriptionExpiresAt: running,
      }),
      newUser(t, 'seed', {
        createdAt: noonAgo(5),
        planName: 'monthly',
        subscriptionExpiresAt: new Date(Date.now() - DAY),
      }),
      newUser(t, 'seed', { createdAt: noonAgo(40) }),
      newUser(t, 'partner', { createdAt: noonAgo(1) }),
    ]);
    const partner = buyers[5];

    // Paid invoices: two USD and one TON on day -2, one EUR today; pending and expired ones count for nothing.
    const invoice = (fields: Partial<Invoice>) => invoiceRow(buyers[0].user.id, fields);
    await t.dataSource.getRepository(Invoice).save([
      invoice({ paidAt: noonAgo(2) }),
      invoice({ paidAt: new Date(noonAgo(2).getTime() + 3_600_000), amount: '501' }),
      invoice({
        provider: 'ton',
        amount: '2500000000',
        comment: randomUUID(),
        paidAt: noonAgo(2),
      }),
      invoice({ currency: 'EUR', amount: '450', paidAt: new Date() }),
      invoice({ status: 'pending', paidAt: null }),
      invoice({ status: 'expired', paidAt: null }),
      invoice({ paidAt: noonAgo(60) }),
    ]);

    // Tickets: two open, one closed.
    const tickets: string[] = [];
    for (const subject of ['one', 'two', 'three']) {
      const opened = await t
        .http()
        .post(`${API}/tickets`)
        .set(buyers[1].bearer)
        .send({ subject, message: 'hello' })
        .expect(201);
      tickets.push((opened.body as { ticket: { id: string } }).ticket.id);
    }
    await t.http().post(`${API}/admin/tickets/${tickets[0]}/close`).set(support.bearer).expect(200);

    // Withdrawals: one pending, one paid.
    await t.dataSource.getRepository(WithdrawalRequest).save([
      {
        partnerId: partner.user.id,
        amount: '100',
        currency: 'USD',
        destination: 'x',
        status: 'pending',
      },
      {
        partnerId: partner.user.id,
        amount: '100',
        currency: 'USD',
        destination: 'x',
        status: 'paid',
      },
    ]);

    // Nodes: five, their tunnel ports all answering but one deleted, and only one online as staff
    // are shown it: provisioned with its agent reporting. Never provisioned, or an agent silent
    // for three minutes (over two report periods), is not counted.
    const nodes = await Promise.all([
      createNode(t, owner),
      createNode(t, owner),
      createNode(t, owner),
      createNode(t, owner),
      createNode(t, owner),
    ]);
    await t.app.get(NodesRepository).recordHealth(
      nodes.map((node) => node.id),
      nodes.map(() => 'online'),
    );
    const setNode = (node: { id: string }, state: string, reportedSAgo: number | null) =>
      t.dataSource.query(
        `UPDATE nodes SET provision_state = $2,
                last_report_at = now() - make_interval(secs => $3::int) WHERE id = $1`,
        [node.id, state, reportedSAgo],
      );
    await setNode(nodes[0], 'ready', 30);
    await setNode(nodes[1], 'new', null);
    await setNode(nodes[2], 'ready', 30);
    await setNode(nodes[3], 'ready', 180);
    await setNode(nodes[4], 'failed', 30);
    await t.http().delete(`${API}/admin/nodes/${nodes[2].id}`).set(owner.bearer).expect(204);
    const shown = await Promise.all(
      [nodes[0], nodes[1], nodes[3], nodes[4]].map(
        async (node) =>
          (await t.http().get(`${API}/admin/nodes/${node.id}`).set(owner.bearer).expect(200)).body
            .status,
      ),
    );
    expect(shown).toEqual(['online', 'unknown', 'unknown', 'unknown']);
    // The count's SQL and the list's TypeScript agree on every row (deleted or not).
    const rows = (await t.dataSource.query(
      `SELECT status, provision_state AS "provisionState", last_report_at AS "lastReportAt",
              now() AS now, ${shownOnlineSql('n')} AS online
         FROM nodes n WHERE id = ANY($1::uuid[])`,
      [nodes.map((node) => node.id)],
    )) as (Parameters<typeof shownStatus>[0] & { now: Date; online: boolean })[];
    expect(rows.map((row) => shownStatus(row, row.now) === 'online')).toEqual(
      rows.map((row) => row.online),
    );
    expect(rows.filter((row) => row.online)).toHaveLength(1);
    await t.dataSource.getRepository(NodeTrafficDay).save([
      {
        nodeId: nodes[0].id,
        day: dayAgo(2),
        bytesUp: '1000',
        bytesDown: '2000',
        bytesCounted: '3000',
      },
      { nodeId: nodes[1].id, day: dayAgo(2), bytesUp: '5', bytesDown: '7', bytesCounted: '24' },
      { nodeId: nodes[0].id, day: dayAgo(0), bytesUp: '10', bytesDown: '0', bytesCounted: '10' },
      { nodeId: nodes[0].id, day: dayAgo(45), bytesUp: '99', bytesDown: '99', bytesCounted: '198' },
    ]);

    const response = await stats('?days=7');
    expect(response.status).toBe(200);
    expect(response.body.totals).toEqual({
      users: 9,
      active_subscriptions: 2,
      open_tickets: 2,
      pending_withdrawals: 1,
      nodes_online: 1,
      nodes_total: 4,
      waiting_first_use: 0,
    });
    const none = {
      signups: 0,
      paid_invoices: 0,
      received: {},
      traffic_bytes: 0,
      traffic_warnings: 0,
    };
    expect(response.body.days).toEqual([
      { date: dayAgo(6), ...none },
      { date: dayAgo(5), ...none, signups: 2 },
      { date: dayAgo(4), ...none },
      { date: dayAgo(3), ...none },
      {
        date: dayAgo(2),
        signups: 2,
        paid_invoices: 3,
        received: { USD: '1000', TON: '2500000000' },
        traffic_bytes: 3012,
        traffic_warnings: 0,
      },
      { date: dayAgo(1), ...none, signups: 1 },
      {
        date: dayAgo(0),
        signups: 3,
        paid_invoices: 1,
        received: { EUR: '450' },
        traffic_bytes: 10,
        traffic_warnings: 0,
      },
    ]);
  });

  it('subscriptions waiting for their first connection, and the traffic warnings sent per day', async () => {
    const waiting = await newUser(t, 'telegram', {
      planName: 'monthly',
      subscriptionOnHoldUntil: new Date(Date.now() + 5 * 86_400_000),
      subscriptionExpiresAt: new Date(Date.now() + 35 * 86_400_000),
    });
    const warned = await newUser(t, 'telegram');
    // As the traffic batch records them and the bot marks them sent; one still unsent.
    await t.dataSource.query(
      `INSERT INTO traffic_warnings (user_id, kind, period_key, sent_at) VALUES
         ($1, 'traffic80', now(), now()), ($1, 'traffic100', now(), now()),
         ($2, 'traffic80', now(), now() - interval '1 day'), ($2, 'traffic100', now(), NULL)`,
      [warned.user.id, waiting.user.id],
    );
    const body = (await stats('?days=2').expect(200)).body as {
      totals: { waiting_first_use: number };
      days: { traffic_warnings: number }[];
    };
    expect(body.totals.waiting_first_use).toBe(1);
    expect(body.days.map((day) => day.traffic_warnings)).toEqual([1, 2]);
  });

  it('30 days by default, one entry per day, oldest first, today last', async () => {
    const days = (await stats().expect(200)).body.days as { date: string }[];
    expect(days).toHaveLength(30);
    expect(days[0].date).toBe(dayAgo(29));
    expect(days[29].date).toBe(dayAgo(0));
    // `?days=` (empty) is the default too.
    expect((await stats('?days=').expect(200)).body.days).toEqual(days);
    const year = (await stats('?days=366').expect(200)).body.days as { date: string }[];
    expect(year).toHaveLength(366);
    expect(year.filter((day) => day.date === dayAgo(40))).toHaveLength(1);
  });

  it.each(['0', '367', '-1', '1.5', 'abc', '7&days=8'])('?days=%s is a 400', async (days) => {
    const response = await stats(`?days=${days}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(response.body.details[0]).toMatchObject({ field: 'days' });
  });

  it('staff only: support is refused', async () => {
    await t.http().get(`${API}/admin/stats`).set(support.bearer).expect(403);
    await t.http().get(`${API}/admin/stats`).set(moderator.bearer).expect(200);
  });
});
