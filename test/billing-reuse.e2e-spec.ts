/**
 * Paying the same plan again gives back the invoice already waiting for its payment (issue 42,
 * point 3): one pending TON invoice per plan and currency, also when the orders arrive at once,
 * and only while there is time left to pay it.
 */
import { startBillingWorld, type BillingWorld } from './fakes/billing';
import { controlClock } from './fakes/clock';
import type { TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';

interface InvoiceBody {
  id: string;
  amount: string;
  status: string;
  payment: { comment: string; amount_nano: string };
}

describe('a repeated TON order reuses the pending invoice', () => {
  let world: BillingWorld;
  let t: TestApp;
  let owner: TestUser;

  const order = async (
    buyer: TestUser,
    body: Record<string, unknown> = { plan_name: 'monthly', currency: 'USD', provider: 'ton' },
  ): Promise<InvoiceBody> =>
    (await t.http().post('/api/v1/invoices').set(buyer.bearer).send(body).expect(201))
      .body as InvoiceBody;

  const pendingOf = async (userId: string): Promise<string[]> =>
    (
      await t.dataSource.query<{ id: string }[]>(
        `SELECT id FROM invoices WHERE user_id = $1 AND status = 'pending' ORDER BY created_at`,
        [userId],
      )
    ).map((row) => row.id);

  beforeAll(async () => {
    world = await startBillingWorld({ USD: '2.5', EUR: '1.02' }, { RATE_CACHE_S: '1' });
    t = world.t;
    owner = await newUser(t, 'owner');
    await savePlan(t, owner, { prices: { USD: '499', EUR: '459' } }, 'monthly');
    await savePlan(t, owner, { prices: { USD: '1299' } }, 'quarterly');
  });
  afterAll(() => world.close());

  it('orders of the same plan and currency sent at once make one invoice, all answered with it', async () => {
    const buyer = await newUser(t);
    const answers = await Promise.all(Array.from({ length: 6 }, () => order(buyer)));
    const [first] = answers;
    expect(new Set(answers.map((invoice) => invoice.id))).toEqual(new Set([first.id]));
    expect(answers.map((invoice) => invoice.payment.comment)).toEqual(
      answers.map(() => first.payment.comment),
    );
    expect(await pendingOf(buyer.user.id)).toEqual([first.id]);

    // Later, the same order again: the same amount, address and comment, still one row.
    const again = await order(buyer);
    expect(again).toEqual(first);
    expect(await pendingOf(buyer.user.id)).toEqual([first.id]);
  });

  it('another currency, another plan or another buyer is an invoice of its own', async () => {
    const buyer = await newUser(t);
    const usd = await order(buyer);
    const eur = await order(buyer, { plan_name: 'monthly', currency: 'EUR', provider: 'ton' });
    const quarterly = await order(buyer, {
      plan_name: 'quarterly',
      currency: 'USD',
      provider: 'ton',
    });
    const other = await order(await newUser(t));
    expect(new Set([usd.id, eur.id, quarterly.id, other.id]).size).toBe(4);
    expect(await pendingOf(buyer.user.id)).toEqual([usd.id, eur.id, quarterly.id]);
  });

  it('an invoice about to expire, expired or paid is not given again: a new one at the rate of now', async () => {
    const buyer = await newUser(t);
    const first = await order(buyer);
    // Half an hour left is too little to pay in: the next order is a new invoice.
    await t.dataSource.query(
      `UPDATE invoices SET expires_at = now() + interval '30 minutes' WHERE id = $1`,
      [first.id],
    );
    world.tonapi.rates.set('USD', '5');
    controlClock(t).advance(1_500);
    const second = await order(buyer);
    expect(second.id).not.toBe(first.id);
    expect(BigInt(second.amount)).toBeLessThan(BigInt(first.amount));

    await t.dataSource.query(`UPDATE invoices SET status = 'expired' WHERE id = $1`, [second.id]);
    const third = await order(buyer);
    expect([first.id, second.id]).not.toContain(third.id);

    await t.dataSource.query(`UPDATE invoices SET status = 'paid', paid_at = now() WHERE id = $1`, [
      third.id,
    ]);
    const fourth = await order(buyer);
    expect([first.id, second.id, third.id]).not.toContain(fourth.id);
    expect(fourth.status).toBe('pending');
  });
});
