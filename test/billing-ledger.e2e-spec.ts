import { ReconciliationService } from '../src/billing/reconciliation.service';
import { startBillingWorld, WALLET, type BillingWorld } from './fakes/billing';
import { controlClock, type ControlledClock } from './fakes/clock';
import { outgoingTransaction, tonTransaction, type FakeToncenter } from './fakes/toncenter';
import type { TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';

const API = '/api/v1';
const WALLET_RAW = WALLET.toRawString().toUpperCase();

interface Invoice {
  id: string;
  amount: string;
  status: string;
  payment: { comment: string };
}

interface Unmatched {
  tx_ref: string;
  provider: string;
  amount: string;
  currency: string;
  sender: string | null;
  comment: string | null;
  received_at: string;
  reason: string;
}

describe('billing: every transfer read, unmatched money kept for staff', () => {
  let world: BillingWorld;
  let t: TestApp;
  let toncenter: FakeToncenter;
  let staff: TestUser;
  let clock: ControlledClock;

  const order = async (user: TestUser, currency = 'USD'): Promise<Invoice> =>
    (
      await t
        .http()
        .post(`${API}/invoices`)
        .set(user.bearer)
        .send({ plan_name: 'monthly', currency, provider: 'ton' })
        .expect(201)
    ).body;

  const send = (overrides: Partial<Parameters<typeof tonTransaction>[0]> & { value: string }) => {
    const tx = tonTransaction({ to: WALLET_RAW, ...overrides });
    toncenter.transactions.push(tx);
    return tx.hash as string;
  };
  const pay = (invoice: Invoice, overrides: Partial<Parameters<typeof tonTransaction>[0]> = {}) =>
    send({ value: invoice.amount, comment: invoice.payment.comment, ...overrides });

  const confirm = (user: TestUser, id: string) =>
    t.http().post(`${API}/invoices/${id}/confirm`).set(user.bearer);
  const reconcile = () => t.app.get(ReconciliationService).reconcile();
  const status = async (id: string): Promise<string> =>
    (await t.dataSource.query(`SELECT status FROM invoices WHERE id = $1`, [id]))[0].status;

  /** Every page of the staff list. */
  const unmatched = async (): Promise<Unmatched[]> => {
    const all: Unmatched[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { items: Unmatched[]; next_cursor: string | null } } = await t
        .http()
        .get(`${API}/admin/payments/unmatched`)
        .query({ limit: 100, ...(cursor ? { cursor } : {}) })
        .set(staff.bearer)
        .expect(200);
      all.push(...res.body.items);
      cursor = res.body.next_cursor;
    } while (cursor);
    return all;
  };
  const attach = (invoiceId: string, txRef: unknown, who: TestUser = staff) =>
    t
      .http()
      .post(`${API}/admin/invoices/${invoiceId}/attach-payment`)
      .set(who.bearer)
      .send({ tx_ref: txRef });
  const age = (invoice: Invoice, days: number) =>
    t.dataSource.query(
      `UPDATE invoices SET created_at = now() - make_interval(days => $2),
         expires_at = now() - make_interval(days => $2) + interval '24 hours' WHERE id = $1`,
      [invoice.id, days],
    );

  beforeAll(async () => {
    world = await startBillingWorld({ USD: '2.5' }, { TON_API_KEY: 'toncenter-test-key' });
    ({ t, toncenter } = world);
    clock = controlClock(t);
    staff = await newUser(t, 'moderator');
    await savePlan(t, await newUser(t, 'owner'), { traffic_limit_bytes: 1 });
  });
  afterAll(() => world.close());

  it('300 transfers after a payment and before the next run: the payment is credited, each unmatched one listed once', async () => {
    await reconcile();
    const buyer = await newUser(t, 'seed');
    const invoice = await order(buyer);
    const hash = pay(invoice);
    const expected = new Set<string>();
    for (let i = 0; i < 300; i += 1) {
      if (i % 3 === 0) toncenter.transactions.push(outgoingTransaction(WALLET_RAW));
      else if (i % 3 === 1) expected.add(send({ value: '1000', comment: null }));
      else expected.add(send({ value: '5000000', comment: `gift ${i}` }));
    }
    const before = toncenter.requests.length;

    const report = await reconcile();
    expect(report).toMatchObject({ ran: true, confirmed: 1, failedProviders: [] });
    expect(await status(invoice.id)).toBe('paid');
    // Newest to the stored position, 100 at a time: 4 pages, each below the one before.
    const pages = toncenter.requests.slice(before);
    expect(pages).toHaveLength(4);
    expect(pages[0].query).not.toHaveProperty('end_lt');
    const ends = pages.slice(1).map((p) => BigInt(p.query.end_lt));
    expect(ends).toEqual([...ends].sort((x, y) => (x > y ? -1 : 1)));

    const listed = await unmatched();
    expect(new Set(listed.map((u) => u.tx_ref))).toEqual(expected);
    expect(listed).toHaveLength(200);
    expect(listed.map((u) => u.tx_ref)).not.toContain(hash);
    expect(listed.find((u) => u.comment === 'gift 2')).toEqual({
      tx_ref: expect.any(String),
      provider: 'ton',
      amount: '5000000',
      currency: 'TON',
      sender: `0:${'AB'.repeat(32)}`,
      comment: 'gift 2',
      received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      reason: 'no_invoice',
    });

    // The next run reads only what is new (from the stored position) and lists nothing twice.
    const again = toncenter.requests.length;
    await reconcile();
    const newest = BigInt(toncenter.transactions[toncenter.transactions.length - 1].lt as string);
    expect(toncenter.requests.slice(again).map((r) => r.query.start_lt)).toEqual([
      String(newest + 1n),
    ]);
    expect(await unmatched()).toHaveLength(200);
  });

  it('a run that fails part-way resumes where it stopped, re-reading nothing', async () => {
    const buyer = await newUser(t, 'seed');
    const invoice = await order(buyer);
    pay(invoice);
    for (let i = 0; i < 250; i += 1) send({ value: '1000', comment: `noise ${i}` });
    toncenter.failAfter = 1;
    const failed = await reconcile();
    expect(failed.failedProviders).toEqual(['ton']);
    expect(await status(invoice.id)).toBe('pending');

    toncenter.failAfter = null;
    const before = toncenter.requests.length;
    send({ value: '1000', comment: 'after the failure' });
    await reconcile();
    expect(await status(invoice.id)).toBe('paid');
    const resumed = toncenter.requests.slice(before).map((r) => r.query);
    // First the rest of the interrupted read (below where it stopped), then the new transfer.
    expect(resumed[0].end_lt).toBeDefined();
    expect(resumed).toHaveLength(3);
    const comments = (await unmatched())
      .map((u) => u.comment ?? '')
      .filter((c) => c.startsWith('noise') || c === 'after the failure');
    expect(comments).toHaveLength(251);
    expect(new Set(comments).size).toBe(251);
  });

  it('a payment to a wallet without code yet (aborted, credited, not bounced) pays; a bounced one does not', async () => {
    const buyer = await newUser(t, 'seed');
    const invoice = await order(buyer);
    pay(invoice, { aborted: true, returned: true });
    await confirm(buyer, invoice.id).expect(409);
    pay(invoice, { uninit: true });
    await confirm(buyer, invoice.id).expect(200);
    const listedBefore = (await unmatched()).length;
    await reconcile();
    // The bounced transfer came back to its sender: nothing kept for staff.
    expect(await unmatched()).toHaveLength(listedBefore);
  });

  it('too little, no invoice, too late: kept with the reason; staff attach one to an invoice, once, audited', async () => {
    const partner = await newUser(t, 'partner', { commissionPercent: '20.00' });
    const buyer = await newUser(t, 'seed', { referredByPartnerId: partner.user.id });
    // Aged before the next order, which would otherwise be given it again.
    const old = await order(buyer);
    await age(old, 8);
    const invoice = await order(buyer);
    const short = pay(invoice, { value: (BigInt(invoice.amount) - 1n).toString() });
    const late = pay(old);
    const stray = send({ value: '777', comment: 'who knows' });
    const dust = send({ value: '1', comment: 'free month' });
    const exact = send({ value: invoice.amount, comment: 'paid without the comment' });
    const more = send({ value: (BigInt(invoice.amount) + 5n).toString(), comment: null });
    await confirm(buyer, invoice.id).expect(409);
    await reconcile();
    const mine = new Set([short, late, stray, dust, exact, more]);
    const listed = (await unmatched()).filter((u) => mine.has(u.tx_ref));
    expect(Object.fromEntries(listed.map((u) => [u.tx_ref, u.reason]))).toEqual({
      [short]: 'underpaid',
      [late]: 'too_late',
      [stray]: 'no_invoice',
      [dust]: 'no_invoice',
      [exact]: 'no_invoice',
      [more]: 'no_invoice',
    });

    // Guards and input.
    await attach(invoice.id, short, buyer).expect(403);
    await t.http().post(`${API}/admin/invoices/${invoice.id}/attach-payment`).send({}).expect(401);
    expect((await attach(invoice.id, '').expect(400)).body.code).toBe('VALIDATION_FAILED');
    expect((await attach(invoice.id, 42).expect(400)).body.code).toBe('VALIDATION_FAILED');
    expect((await attach(invoice.id, 'no-such-tx').expect(404)).body.code).toBe('NOT_FOUND');
    await attach('00000000-0000-4000-8000-000000000000', exact).expect(404);

    // Less than the invoice, by one nanoton or by nearly all of it: refused, and nothing changes.
    for (const small of [short, dust, stray]) {
      const refused = await attach(invoice.id, small).expect(409);
      expect(refused.body).toMatchObject({ code: 'PAYMENT_TOO_SMALL', statusCode: 409 });
    }
    expect(await status(invoice.id)).toBe('pending');
    const me = await t.http().get(`${API}/users/me`).set(buyer.bearer).expect(200);
    expect(me.body.subscription).toBeNull();
    const commissionsOf = () =>
      t.dataSource.query(`SELECT amount_minor FROM partner_commissions WHERE partner_id = $1`, [
        partner.user.id,
      ]);
    expect(await commissionsOf()).toEqual([]);
    expect(
      await t.dataSource.query(
        `SELECT 1 FROM audit_log WHERE action = 'invoice.payment_attached' AND target_id = $1`,
        [invoice.id],
      ),
    ).toEqual([]);
    const stillListed = (await unmatched()).map((u) => u.tx_ref);
    expect(stillListed).toEqual(expect.arrayContaining([short, dust, stray]));

    // Two staff attach the same payment to two invoices at once: one wins. The first has under an
    // hour left, so the buyer's next order is a second invoice, not the first given again.
    await t.dataSource.query(
      `UPDATE invoices SET expires_at = now() + interval '30 minutes' WHERE id = $1`,
      [invoice.id],
    );
    const second = await order(buyer);
    const [a, b] = await Promise.all([attach(invoice.id, exact), attach(second.id, exact)]);
    expect([a.status, b.status].sort()).toEqual([200, 404]);
    const won = a.status === 200 ? a : b;
    const lost = a.status === 200 ? second : invoice;
    expect(won.body.invoice).toMatchObject({ status: 'paid' });
    expect(won.body.subscription).toMatchObject({ plan_name: 'monthly', active: true });
    const paidId: string = won.body.invoice.id;
    const [row] = await t.dataSource.query(`SELECT provider_tx_ref FROM invoices WHERE id = $1`, [
      paidId,
    ]);
    expect(row.provider_tx_ref).toBe(exact);
    const audit = await t.dataSource.query(
      `SELECT actor_id, target_id, after FROM audit_log WHERE action = 'invoice.payment_attached'`,
    );
    expect(audit).toEqual([
      {
        actor_id: staff.user.id,
        target_id: paidId,
        after: expect.objectContaining({ tx_ref: exact }),
      },
    ]);
    expect(await commissionsOf()).toHaveLength(1);

    // Two payments, each enough, attached to the other invoice at once: it is paid once.
    const rival = send({ value: invoice.amount, comment: 'second try' });
    await reconcile();
    const paidUntil = async () =>
      (await t.http().get(`${API}/users/me`).set(buyer.bearer).expect(200)).body.subscription
        .expires_at as string;
    const before = await paidUntil();
    const [c, d] = await Promise.all([attach(lost.id, more), attach(lost.id, rival)]);
    expect([c.status, d.status].sort()).toEqual([200, 409]);
    expect((c.status === 409 ? c : d).body.code).toBe('INVOICE_NOT_PENDING');
    expect(Date.parse(await paidUntil()) - Date.parse(before)).toBe(30 * 86_400_000);
    expect(await commissionsOf()).toHaveLength(2);
    const [{ count }] = await t.dataSource.query(
      `SELECT count(*)::int AS count FROM received_payments WHERE invoice_id = $1`,
      [lost.id],
    );
    expect(count).toBe(1);
    // The payment that lost the race stays unmatched, for staff to attach elsewhere.
    const loser = c.status === 409 ? more : rival;
    mine.add(rival);

    // Used: gone from the list and 404; a paid invoice is 409; an expired one of any age is paid.
    const left = (await unmatched()).map((u) => u.tx_ref).filter((ref) => mine.has(ref));
    expect(left.sort()).toEqual([short, late, stray, dust, loser].sort());
    await attach(paidId, exact).expect(404);
    expect((await attach(paidId, late).expect(409)).body.code).toBe('INVOICE_NOT_PENDING');
    await attach(old.id, late).expect(200);
    expect(await status(old.id)).toBe('paid');
  });

  it('a payment after expiry pays only if it still covers the price at the current rate', async () => {
    const buyer = await newUser(t, 'seed');
    // Each aged before the next order, which would otherwise be given it again.
    const fell = await order(buyer);
    await age(fell, 2);
    const rose = await order(buyer);
    await age(rose, 2);
    const pending = await order(buyer);
    // TON falls 20%: the old amount no longer buys the plan.
    world.tonapi.rates.set('USD', '2');
    clock.advance(3_600_000);
    const fellTx = pay(fell);
    pay(pending);
    expect((await confirm(buyer, fell.id).expect(409)).body.code).toBe('PAYMENT_NOT_FOUND');
    // Still pending (not expired): the amount fixed at creation pays, whatever the rate.
    await confirm(buyer, pending.id).expect(200);
    await reconcile();
    expect(await status(fell.id)).toBe('expired');
    expect((await unmatched()).find((u) => u.tx_ref === fellTx)?.reason).toBe('too_late');

    // TON rises 1%: the old amount still covers the price.
    world.tonapi.rates.set('USD', '2.525');
    clock.advance(3_600_000);
    pay(rose);
    await confirm(buyer, rose.id).expect(200);
  });
});
