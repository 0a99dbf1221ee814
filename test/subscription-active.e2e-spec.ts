import { User } from '../src/users/entities/user.entity';
import { isSubscriptionActive, subscriptionActiveSql } from '../src/users/subscription-active';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';

const DAY = 86_400_000;
const API = '/api/v1';

/**
 * "Subscription active" has a TypeScript form (one user in memory: `/users/me`, the staff's view
 * of a user, a link's answer) and an SQL form (the node agents' limits, the nodes' device sets,
 * the staff figures, the metrics). Both run here on the same users, blocked ones included, and
 * what each route says must be the rule's answer.
 */
describe('the subscription-active rule in TypeScript and in SQL', () => {
  let t: TestApp;
  let owner: TestUser;
  const cases: { name: string; user: User; active: boolean }[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
    const running = new Date(Date.now() + 10 * DAY);
    const expired = new Date(Date.now() - DAY);
    const make = async (name: string, fields: Partial<User>, blocked: boolean, active: boolean) => {
      const { user } = await newUser(t, 'seed', fields);
      if (blocked) {
        await t
          .http()
          .post(`${API}/admin/users/${user.id}/block`)
          .set(owner.bearer)
          .send({ reason: 'abuse report' })
          .expect(200);
      }
      const row = await t.dataSource.getRepository(User).findOneByOrFail({ id: user.id });
      cases.push({ name, user: row, active });
    };
    const plan = { planName: 'monthly' };
    await make('running', { ...plan, subscriptionExpiresAt: running }, false, true);
    await make('running, blocked', { ...plan, subscriptionExpiresAt: running }, true, false);
    await make('expired', { ...plan, subscriptionExpiresAt: expired }, false, false);
    await make('expired, blocked', { ...plan, subscriptionExpiresAt: expired }, true, false);
    await make('trial', { planName: 'trial', subscriptionExpiresAt: running }, false, true);
    await make('never subscribed', {}, false, false);
    await make('never subscribed, blocked', {}, true, false);
  });
  afterAll(() => t.close());

  const named = (values: boolean[]) => values.map((active, i) => ({ name: cases[i].name, active }));
  const expected = () => cases.map(({ name, active }) => ({ name, active }));

  it('the TypeScript and the SQL forms agree on every user', async () => {
    expect(named(cases.map(({ user }) => isSubscriptionActive(user)))).toEqual(expected());
    const rows: { id: string; active: boolean }[] = await t.dataSource.query(
      `SELECT u.id, ${subscriptionActiveSql('u')} AS active FROM users u WHERE u.id = ANY($1)`,
      [cases.map(({ user }) => user.id)],
    );
    const byId = new Map(rows.map((row) => [row.id, row.active]));
    expect(named(cases.map(({ user }) => byId.get(user.id)!))).toEqual(expected());
  });

  it("the node agents' limits and the staff's view of each user say the same", async () => {
    const ids = cases.map(({ user }) => user.id).join(',');
    const limits = await t
      .http()
      .get(`${API}/internal/limits?user_ids=${ids}`)
      .set('X-Internal-Secret', t.settings.internalSecret)
      .expect(200);
    const byId = new Map(
      (limits.body as { user_id: string; active: boolean }[]).map((e) => [e.user_id, e.active]),
    );
    expect(named(cases.map(({ user }) => byId.get(user.id)!))).toEqual(expected());

    const shown: boolean[] = [];
    for (const { user } of cases) {
      const view = await t
        .http()
        .get(`${API}/admin/users/${user.id}`)
        .set(owner.bearer)
        .expect(200);
      shown.push(
        (view.body as { subscription: { active: boolean } | null }).subscription?.active ?? false,
      );
    }
    expect(named(shown)).toEqual(expected());
  });

  it('the staff figures count the active subscriptions, blocked accounts not among them', async () => {
    const stats = await t.http().get(`${API}/admin/stats`).set(owner.bearer).expect(200);
    expect(stats.body.totals.active_subscriptions).toBe(cases.filter((c) => c.active).length);
  });
});
