import { randomUUID } from 'node:crypto';
import { startBillingWorld, WALLET, type BillingWorld } from './fakes/billing';
import { controlClock, type ControlledClock } from './fakes/clock';
import { tonTransaction } from './fakes/toncenter';
import type { TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';
import { createNode } from './harness/nodes';

/** End to end: traffic counted through the proxy's route is reset when the user pays an invoice. */
describe('internal: a paid invoice resets the traffic counted so far', () => {
  let world: BillingWorld;
  let t: TestApp;
  let owner: TestUser;
  let clock: ControlledClock;

  beforeAll(async () => {
    world = await startBillingWorld({ USD: '2.5' }, { TON_API_KEY: 'toncenter-test-key' });
    t = world.t;
    clock = controlClock(t);
    owner = await newUser(t, 'owner');
    await savePlan(t, owner, { traffic_limit_bytes: 1000 });
  });
  afterAll(() => world.close());

  it('over the limit, then paid: the use is 0 and the proxy lets the user in again', async () => {
    const secret = { 'X-Internal-Secret': t.settings.internalSecret };
    const buyer = await newUser(t, 'seed');
    const node = await createNode(t, owner);
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
      [node.id],
    );

    // A first month, used up through the proxy's report.
    const pay = async (): Promise<void> => {
      const invoice = (
        await t
          .http()
          .post('/api/v1/invoices')
          .set(buyer.bearer)
          .send({ plan_name: 'monthly', currency: 'USD', provider: 'ton' })
          .expect(201)
      ).body as { id: string; amount: string; payment: { comment: string } };
      world.toncenter.transactions.push(
        tonTransaction({
          to: WALLET.toRawString().toUpperCase(),
          value: invoice.amount,
          comment: invoice.payment.comment,
        }),
      );
      clock.advance(5_000); // past the service's 5 s reuse of one look at toncenter
      await t.http().post(`/api/v1/invoices/${invoice.id}/confirm`).set(buyer.bearer).expect(200);
    };
    await pay();
    const report = await t
      .http()
      .post('/api/v1/internal/traffic')
      .set(secret)
      .send({
        node_id: node.id,
        report_id: randomUUID(),
        entries: [{ user_id: buyer.user.id, bytes_up: 600, bytes_down: 600 }],
      })
      .expect(200);
    expect(report.body).toMatchObject({ applied: true, over_limit: [buyer.user.id] });

    const token = async (): Promise<string> => {
      const routing = await t.http().get('/api/v1/nodes/routing').set(buyer.bearer).expect(200);
      return (routing.body as { session_token: string }[])[0].session_token;
    };
    const validate = async () =>
      (
        await t
          .http()
          .post('/api/v1/internal/validate')
          .set(secret)
          .send({ token: await token(), node_id: node.id })
      ).body as Record<string, unknown>;
    expect(await validate()).toEqual({ valid: false, reason: 'traffic_exceeded' });

    await pay(); // renewal: the counter starts again
    const limits = await t
      .http()
      .get(`/api/v1/internal/limits?user_ids=${buyer.user.id}`)
      .set(secret)
      .expect(200);
    expect(limits.body).toEqual([
      { user_id: buyer.user.id, traffic_limit_bytes: 1000, traffic_used_bytes: 0, active: true },
    ]);
    expect(await validate()).toMatchObject({ valid: true, traffic_used_bytes: 0 });
  });
});
