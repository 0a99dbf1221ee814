import { Address } from '@ton/core';
import { startBillingWorld, WALLET, type BillingWorld } from './fakes/billing';
import { BillingService } from '../src/billing/billing.service';
import { ReconciliationService } from '../src/billing/reconciliation.service';
import { User } from '../src/users/entities/user.entity';
import { UsersService } from '../src/users/users.service';
import { toUserViewResponse } from '../src/users/dto/user.response';
import type { TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { tonTransaction, type FakeToncenter } from './fakes/toncenter';

const OTHER_WALLET = new Address(0, Buffer.alloc(32, 9));
const DAY = 86_400_000;
const GIB = 1024 ** 3;

interface Invoice {
  id: string;
  amount: string;
  currency: string;
  status: string;
  payment: { comment: string; amount_nano: string; invoice_link: string };
}

describe('billing: confirmation, rewards, reconciliation', () => {
  let t: TestApp;
  let toncenter: FakeToncenter;
  let world: BillingWorld;
  let owner: TestUser;

  const order = async (
    user: TestUser,
    currency = 'USD',
    provider: 'ton' | 'telegram' = 'ton',
    planName = 'monthly',
  ): Promise<Invoice> => {
    const res = await t
      .http()
      .post('/api/v1/invoices')
      .set(user.bearer)
      .send({ plan_name: planName, currency, provider });
    expect(res.status).toBe(201);
    return res.body;
  };

  /** Our wallet receives a transfer carrying the invoice's comment (toncenter's raw address form). */
  const transfer = (
    invoice: Invoice,
    overrides: Partial<Parameters<typeof tonTransaction>[0]> = {},
  ): string => {
    const tx = tonTransaction({
      to: WALLET.toRawString().toUpperCase(),
      value: invoice.amount,
      comment: invoice.payment.comment,
      ...overrides,
    });
    toncenter.transactions.push(tx);
    return tx.hash as string;
  };

  const payOnChain = transfer;

  const me = async (user: TestUser) =>
    (await t.http().get('/api/v1/users/me').set(user.bearer).expect(200)).body;

  const confirm = (user: TestUser, invoiceId: string) =>
    t.http().post(`/api/v1/invoices/${invoiceId}/confirm`).set(user.bearer);

  const userRow = async (id: string) => {
    const [row] = await t.dataSource.query(
      `SELECT plan_name, subscription_expires_at, traffic_used_bytes FROM users WHERE id = $1`,
      [id],
    );
    return row as {
      plan_name: string | null;
      subscription_expires_at: Date | null;
      traffic_used_bytes: string;
    };
  };

  const invoiceRow = async (id: string) => {
    const [row] = await t.dataSource.query(
      `SELECT status, paid_at, provider_tx_ref FROM invoices WHERE id = $1`,
      [id],
    );
    return row as { status: string; paid_at: Date | null; provider_tx_ref: string | null };
  };

  const commissions = (invoiceId: string) =>
    t.dataSource.query(
      `SELECT partner_id, currency, price_minor, percent, amount_minor FROM partner_commissions
       WHERE invoice_id = $1`,
      [invoiceId],
    );

  /** Milliseconds from now until the user's subscription ends. */
  const remaining = async (id: string): Promise<number> =>
    ((await userRow(id)).subscription_expires_at?.getTime() ?? 0) - Date.now();

  const reconcile = () => t.app.get(ReconciliationService).reconcile();

  beforeAll(async () => {
    world = await startBillingWorld(
      { USD: '2.5', RUB: '250.37' },
      { TON_API_KEY: 'toncenter-test-key', REFERRAL_REWARD_DAYS: '7' },
    );
    ({ t, toncenter } = world);
    owner = await newUser(t, 'owner');
    for (const [name, days] of [
      ['monthly', 30],
      ['quarterly', 90],
    ] as const) {
      await t
        .http()
        .put(`/api/v1/admin/plans/${name}`)
        .set(owner.bearer)
        .send({
          duration_days: days,
          traffic_limit_bytes: 107374182400,
          prices: { USD: '499', RUB: '45000' },
          active: true,
        })
        .expect(200);
    }
  });
  afterAll(() => world.close());

  describe('TON', () => {
    it('no transaction yet: 409 PAYMENT_NOT_FOUND; toncenter asked for our wallet with the key', async () => {
      const buyer = await newUser(t, 'seed');
      const invoice = await order(buyer);
      const res = await confirm(buyer, invoice.id).expect(409);
      expect(res.body.code).toBe('PAYMENT_NOT_FOUND');
      expect((await invoiceRow(invoice.id)).status).toBe('pending');
      const asked = toncenter.requests.at(-1);
      expect(asked?.path).toBe('/api/v3/transactions');
      expect(asked?.query).toMatchObject({ account: WALLET.toString(), sort: 'desc' });
      expect(asked?.headers['x-api-key']).toBe('toncenter-test-key');
    });

    it("a stranger's confirm is 404 and changes nothing; the owner's pays once", async () => {
      const buyer = await newUser(t, 'seed', { trafficUsedBytes: '12345' });
      const stranger = await newUser(t, 'seed');
      const invoice = await order(buyer);
      const hash = payOnChain(invoice);

      const refused = await confirm(stranger, invoice.id).expect(404);
      expect(refused.body.code).toBe('NOT_FOUND');
      expect(await invoiceRow(invoice.id)).toEqual({
        status: 'pending',
        paid_at: null,
        provider_tx_ref: null,
      });
      expect((await userRow(stranger.user.id)).plan_name).toBeNull();
      expect((await userRow(buyer.user.id)).plan_name).toBeNull();

      const res = await confirm(buyer, invoice.id).expect(200);
      expect(res.body.invoice).toMatchObject({
        id: invoice.id,
        status: 'paid',
        paid_at: expect.any(String),
        amount: invoice.amount,
      });
      expect(res.body.subscription).toEqual({
        plan_name: 'monthly',
        expires_at: expect.any(String),
        active: true,
        starts_at: expect.any(String),
        waiting_first_use: false,
      });
      expect(
        Math.abs(Date.parse(res.body.subscription.expires_at) - Date.now() - 30 * DAY),
      ).toBeLessThan(60_000);
      const after = await userRow(buyer.user.id);
      expect(after.plan_name).toBe('monthly');
      expect(after.traffic_used_bytes).toBe('0');
      expect((await invoiceRow(invoice.id)).provider_tx_ref).toBe(hash);

      const again = await confirm(buyer, invoice.id).expect(409);
      expect(again.body.code).toBe('INVOICE_NOT_PENDING');
      expect((await userRow(buyer.user.id)).subscription_expires_at).toEqual(
        after.subscription_expires_at,
      );
    });

    it('extends from the later of now and the current expiry', async () => {
      const running = await newUser(t, 'seed', {
        planName: 'quarterly',
        subscriptionExpiresAt: new Date(Date.now() + 10 * DAY),
      });
      const lapsed = await newUser(t, 'seed', {
        planName: 'quarterly',
        subscriptionExpiresAt: new Date(Date.now() - 5 * DAY),
      });
      for (const user of [running, lapsed]) {
        const invoice = await order(user);
        payOnChain(invoice);
        await confirm(user, invoice.id).expect(200);
      }
      expect(Math.abs((await remaining(running.user.id)) - 40 * DAY)).toBeLessThan(60_000);
      expect(Math.abs((await remaining(lapsed.user.id)) - 30 * DAY)).toBeLessThan(60_000);
      expect((await userRow(running.user.id)).plan_name).toBe('monthly');
    });

    it('transfers that do not pay: too little, bounced, aborted, outgoing, elsewhere, used', async () => {
      const buyer = await newUser(t, 'seed');
      const invoice = await order(buyer);
      const short = (BigInt(invoice.amount) - 1n).toString();
      payOnChain(invoice, { value: short });
      payOnChain(invoice, { bounced: true });
      payOnChain(invoice, { aborted: true });
      payOnChain(invoice, { outMsgs: [{ destination: OTHER_WALLET.toRawString(), value: '1' }] });
      payOnChain(invoice, { from: null });
      payOnChain(invoice, { to: OTHER_WALLET.toRawString() });
      payOnChain(invoice, { comment: `${invoice.payment.comment}x` });

      // A transfer whose hash already paid another invoice does not pay this one.
      const other = await newUser(t, 'seed');
      const otherInvoice = await order(other);
      const usedHash = payOnChain(invoice);
      await t.dataSource.query(
        `UPDATE invoices SET status = 'paid', paid_at = now(), provider_tx_ref = $2 WHERE id = $1`,
        [otherInvoice.id, usedHash],
      );

      const res = await confirm(buyer, invoice.id).expect(409);
      expect(res.body.code).toBe('PAYMENT_NOT_FOUND');
      expect(await invoiceRow(invoice.id)).toMatchObject({
        status: 'pending',
        provider_tx_ref: null,
      });
      expect(await userRow(buyer.user.id)).toMatchObject({ plan_name: null });

      // The friendly form of our address and an exact amount do pay.
      payOnChain(invoice, { to: WALLET.toString({ bounceable: false }) });
      await confirm(buyer, invoice.id).expect(200);
    });

    it('20 concurrent confirms plus reconciliation: paid once, one extension, one reward, one commission', async () => {
      const referrer = await newUser(t, 'telegram');
      const partner = await newUser(t, 'partner', { commissionPercent: '12.50' });
      const buyer = await newUser(t, 'seed', {
        referredByUserId: referrer.user.id,
        referredByPartnerId: partner.user.id,
      });
      const invoice = await order(buyer);
      payOnChain(invoice);

      const [report, ...responses] = await Promise.all([
        reconcile(),
        ...Array.from({ length: 20 }, () => confirm(buyer, invoice.id)),
      ]);
      const ok = responses.filter((r) => r.status === 200);
      const refused = responses.filter((r) => r.status === 409);
      expect(ok.length + refused.length).toBe(20);
      expect(refused.every((r) => r.body.code === 'INVOICE_NOT_PENDING')).toBe(true);
      expect(ok.length + report.confirmed).toBe(1);

      expect((await invoiceRow(invoice.id)).status).toBe('paid');
      expect(Math.abs((await remaining(buyer.user.id)) - 30 * DAY)).toBeLessThan(60_000);
      // The referrer had no plan: 7 days on the buyer's plan, once.
      const rewarded = await userRow(referrer.user.id);
      expect(rewarded.plan_name).toBe('monthly');
      expect(Math.abs((await remaining(referrer.user.id)) - 7 * DAY)).toBeLessThan(60_000);
      // 499 cents × 12.5% = 62.375, rounded down; never from the nanoton amount.
      expect(await commissions(invoice.id)).toEqual([
        {
          partner_id: partner.user.id,
          currency: 'USD',
          price_minor: '499',
          percent: '12.50',
          amount_minor: '62',
        },
      ]);
    });

    it('commission on a RUB TON invoice is of the RUB plan price; referral reward is first-purchase only', async () => {
      const referrer = await newUser(t, 'telegram', {
        planName: 'quarterly',
        subscriptionExpiresAt: new Date(Date.now() + 20 * DAY),
      });
      const partner = await newUser(t, 'partner', { commissionPercent: '33.33' });
      const buyer = await newUser(t, 'seed', {
        referredByUserId: referrer.user.id,
        referredByPartnerId: partner.user.id,
      });
      const first = await order(buyer, 'RUB');
      expect(BigInt(first.amount)).toBeGreaterThan(1_000_000_000n);
      payOnChain(first);
      await confirm(buyer, first.id).expect(200);
      expect(await commissions(first.id)).toEqual([
        {
          partner_id: partner.user.id,
          currency: 'RUB',
          price_minor: '45000',
          percent: '33.33',
          amount_minor: '14998', // 45000 × 33.33% = 14998.5
        },
      ]);
      expect((await userRow(referrer.user.id)).plan_name).toBe('quarterly');
      expect(Math.abs((await remaining(referrer.user.id)) - 27 * DAY)).toBeLessThan(60_000);

      const second = await order(buyer, 'USD');
      payOnChain(second);
      await confirm(buyer, second.id).expect(200);
      expect(Math.abs((await remaining(referrer.user.id)) - 27 * DAY)).toBeLessThan(60_000);
      expect(await commissions(second.id)).toEqual([
        expect.objectContaining({ currency: 'USD', price_minor: '499', amount_minor: '166' }),
      ]);
    });

    it('two first invoices paid at once: the referrer is rewarded once', async () => {
      const referrer = await newUser(t, 'telegram');
      const buyer = await newUser(t, 'seed', { referredByUserId: referrer.user.id });
      const invoices = [await order(buyer), await order(buyer, 'RUB')];
      invoices.forEach((invoice) => payOnChain(invoice));
      const results = await Promise.all(invoices.map((invoice) => confirm(buyer, invoice.id)));
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      expect(Math.abs((await remaining(buyer.user.id)) - 60 * DAY)).toBeLessThan(60_000);
      expect(Math.abs((await remaining(referrer.user.id)) - 7 * DAY)).toBeLessThan(60_000);
    });

    it('eight first invoices of one buyer paid at once: every one extends, the referrer gets one reward', async () => {
      const referrer = await newUser(t, 'telegram');
      const buyer = await newUser(t, 'seed', { referredByUserId: referrer.user.id });
      const invoices: Invoice[] = [];
      for (let i = 0; i < 8; i += 1) {
        const invoice = await order(buyer);
        // Under an hour left: the next order is a new invoice, not this one given again.
        await t.dataSource.query(
          `UPDATE invoices SET expires_at = now() + interval '30 minutes' WHERE id = $1`,
          [invoice.id],
        );
        invoices.push(invoice);
      }
      invoices.forEach((invoice) => payOnChain(invoice));
      const results = await Promise.all(invoices.map((invoice) => confirm(buyer, invoice.id)));
      expect(results.map((r) => r.status)).toEqual(invoices.map(() => 200));
      expect(Math.abs((await remaining(buyer.user.id)) - 8 * 30 * DAY)).toBeLessThan(60_000);
      expect(Math.abs((await remaining(referrer.user.id)) - 7 * DAY)).toBeLessThan(60_000);
    });

    it('a step failing after the invoice is marked paid leaves nothing applied; a retry pays once', async () => {
      const partner = await newUser(t, 'partner', { commissionPercent: '10.00' });
      const buyer = await newUser(t, 'seed', { referredByPartnerId: partner.user.id });
      const invoice = await order(buyer);
      payOnChain(invoice);
      // The commission, the last step, is refused by the database this once.
      await t.dataSource.query(`
        CREATE FUNCTION refuse_commission() RETURNS trigger LANGUAGE plpgsql AS
          $$ BEGIN RAISE EXCEPTION 'commission refused'; END $$;
        CREATE TRIGGER refuse_commission BEFORE INSERT ON partner_commissions
          FOR EACH ROW EXECUTE FUNCTION refuse_commission();`);
      try {
        expect((await confirm(buyer, invoice.id)).status).toBe(500);
      } finally {
        await t.dataSource.query(`DROP TRIGGER refuse_commission ON partner_commissions;
          DROP FUNCTION refuse_commission();`);
      }
      expect(await invoiceRow(invoice.id)).toMatchObject({
        status: 'pending',
        provider_tx_ref: null,
      });
      expect(await userRow(buyer.user.id)).toMatchObject({ plan_name: null });

      await confirm(buyer, invoice.id).expect(200);
      expect(Math.abs((await remaining(buyer.user.id)) - 30 * DAY)).toBeLessThan(60_000);
      expect(await commissions(invoice.id)).toHaveLength(1);
    });

    it('toncenter down: confirm is 503 and nothing changes', async () => {
      const buyer = await newUser(t, 'seed');
      const invoice = await order(buyer);
      payOnChain(invoice);
      toncenter.down = true;
      try {
        const res = await confirm(buyer, invoice.id).expect(503);
        expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
        expect((await invoiceRow(invoice.id)).status).toBe('pending');
      } finally {
        toncenter.down = false;
      }
      await confirm(buyer, invoice.id).expect(200);
    });
  });

  describe('TON: matching and upstream use', () => {
    it('the comment matches trimmed and in any case', async () => {
      const buyer = await newUser(t, 'seed');
      const invoice = await order(buyer);
      const hash = payOnChain(invoice, { comment: `  ${invoice.payment.comment.toUpperCase()} ` });
      await confirm(buyer, invoice.id).expect(200);
      expect(await invoiceRow(invoice.id)).toMatchObject({ status: 'paid', provider_tx_ref: hash });
    });

    it('a payment made just after anyone else looked is seen at once; concurrent confirms share fresh reads', async () => {
      const buyer = await newUser(t, 'seed');
      const invoice = await order(buyer);
      const other = await newUser(t, 'seed');
      const otherInvoice = await order(other);

      // Somebody else's confirm (and a reconciliation run) read the chain just before the payment.
      await confirm(other, otherInvoice.id).expect(409);
      await reconcile();
      transfer(invoice);
      // "I paid", pressed right away: the transfer is on chain, so it is found.
      await confirm(buyer, invoice.id).expect(200);

      // 30 at once: every one answered from a read that began after it asked; they share reads,
      // which start at most 10 a second.
      const before = toncenter.requests.length;
      const started = Date.now();
      const results = await Promise.all(
        Array.from({ length: 30 }, () => confirm(other, otherInvoice.id)),
      );
      const reads = toncenter.requests.length - before;
      expect(results.map((r) => `${r.status} ${r.body.code}`)).toEqual(
        Array(30).fill('409 PAYMENT_NOT_FOUND'),
      );
      expect(reads).toBeLessThan(30);
      expect(reads).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 100) + 1);
    });

    it('reads are spaced by 1/TON_API_RPS (10 per second with a key)', async () => {
      const buyer = await newUser(t, 'seed');
      const invoice = await order(buyer);
      const before = toncenter.requests.length;
      for (let i = 0; i < 5; i += 1) await confirm(buyer, invoice.id).expect(409);
      const starts = toncenter.requests.slice(before).map((r) => r.at);
      expect(starts).toHaveLength(5);
      // Four gaps of 100 ms at least, less a little network jitter.
      expect(starts[4] - starts[0]).toBeGreaterThanOrEqual(370);
    });
  });

  describe('traffic limit of the plan bought', () => {
    const putPlan = (name: string, bytes: number) =>
      t
        .http()
        .put(`/api/v1/admin/plans/${name}`)
        .set(owner.bearer)
        .send({
          duration_days: 365,
          traffic_limit_bytes: bytes,
          prices: { USD: '4499' },
          active: true,
        })
        .expect(200);
    const setOverride = (user: TestUser, bytes: number | null) =>
      t
        .http()
        .patch(`/api/v1/admin/users/${user.user.id}/traffic-limit`)
        .set(owner.bearer)
        .send({ traffic_limit_bytes: bytes })
        .expect(200);

    it('applies while the subscription runs; an admin override wins over it', async () => {
      await putPlan('yearly', 1200 * GIB);
      const buyer = await newUser(t, 'seed', { trafficUsedBytes: '5' });
      expect((await me(buyer)).traffic).toEqual({
        limit_bytes: 100 * GIB,
        used_bytes: 5,
        resets_at: null,
      });

      const invoice = await order(buyer, 'USD', 'ton', 'yearly');
      payOnChain(invoice);
      await confirm(buyer, invoice.id).expect(200);
      const bought = await me(buyer);
      expect(bought.subscription).toMatchObject({ plan_name: 'yearly', active: true });
      expect(bought.traffic).toEqual({ limit_bytes: 1200 * GIB, used_bytes: 0, resets_at: null });
      // The staff view of the user agrees.
      const staffView = await t
        .http()
        .get(`/api/v1/admin/users/${buyer.user.id}`)
        .set(owner.bearer)
        .expect(200);
      expect(staffView.body).toEqual(bought);
      // So does the view of users in lists.
      const entity = await t.dataSource.getRepository(User).findOneByOrFail({ id: buyer.user.id });
      const [listed] = await t.app.get(UsersService).views([entity], 100n * BigInt(GIB));
      expect(toUserViewResponse(listed)).toEqual(bought);

      const overridden = await setOverride(buyer, 7 * GIB);
      expect(overridden.body.traffic.limit_bytes).toBe(7 * GIB);
      expect((await me(buyer)).traffic.limit_bytes).toBe(7 * GIB);

      await setOverride(buyer, null);
      expect((await me(buyer)).traffic.limit_bytes).toBe(1200 * GIB);

      // A change of the plan's limit applies to its subscribers at once.
      await putPlan('yearly', 1300 * GIB);
      expect((await me(buyer)).traffic.limit_bytes).toBe(1300 * GIB);

      // Once the subscription has run out, the default applies again.
      await t.dataSource.query(
        `UPDATE users SET subscription_expires_at = now() - interval '1 day' WHERE id = $1`,
        [buyer.user.id],
      );
      const lapsed = await me(buyer);
      expect(lapsed.subscription).toMatchObject({ plan_name: 'yearly', active: false });
      expect(lapsed.traffic.limit_bytes).toBe(100 * GIB);
    });

    it('the trial has no plan row: the default applies', async () => {
      const user = await newUser(t, 'telegram');
      await t.http().post('/api/v1/users/me/trial').set(user.bearer).expect(200);
      const view = await me(user);
      expect(view.subscription).toMatchObject({ plan_name: 'trial', active: true });
      expect(view.traffic.limit_bytes).toBe(100 * GIB);
    });
  });

  describe('Telegram', () => {
    const record = (invoice: Invoice, user: TestUser, chargeId: string, amount = 499) =>
      t.app.get(BillingService).recordTelegramPayment({
        invoiceId: invoice.id,
        userTgId: Number(user.user.tgId),
        currency: 'USD',
        totalAmount: amount,
        telegramPaymentChargeId: chargeId,
      });

    it('is confirmed through the Telegram provider, never toncenter', async () => {
      const buyer = await newUser(t, 'telegram');
      const invoice = await order(buyer, 'USD', 'telegram');
      expect(invoice.amount).toBe('499');
      const toncenterCalls = toncenter.requests.length;

      const early = await confirm(buyer, invoice.id).expect(409);
      expect(early.body.code).toBe('PAYMENT_NOT_FOUND');

      await expect(record(invoice, buyer, 'charge-short', 498)).rejects.toMatchObject({
        code: 'PAYMENT_NOT_FOUND',
      });
      expect((await invoiceRow(invoice.id)).status).toBe('pending');

      const result = await record(invoice, buyer, 'charge-1');
      expect(result.invoice).toMatchObject({
        id: invoice.id,
        status: 'paid',
        provider: 'telegram',
      });
      expect(result.subscription.planName).toBe('monthly');
      expect((await invoiceRow(invoice.id)).provider_tx_ref).toBe('charge-1');
      const expiry = (await userRow(buyer.user.id)).subscription_expires_at;

      // Telegram delivering the same update again changes nothing.
      const repeated = await record(invoice, buyer, 'charge-1');
      expect(repeated.invoice.status).toBe('paid');
      expect((await userRow(buyer.user.id)).subscription_expires_at).toEqual(expiry);
      const again = await confirm(buyer, invoice.id).expect(409);
      expect(again.body.code).toBe('INVOICE_NOT_PENDING');

      // One charge pays one invoice.
      const second = await order(buyer, 'USD', 'telegram');
      await expect(record(second, buyer, 'charge-1')).rejects.toMatchObject({
        code: 'PAYMENT_NOT_FOUND',
      });
      expect((await invoiceRow(second.id)).status).toBe('pending');

      expect(toncenter.requests.length).toBe(toncenterCalls);
    });

    it("another account's charge is kept, refused, and credited to the owner by reconciliation", async () => {
      const buyer = await newUser(t, 'telegram');
      const other = await newUser(t, 'telegram');
      const invoice = await order(buyer, 'USD', 'telegram');
      await expect(record(invoice, other, 'charge-other')).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      expect((await invoiceRow(invoice.id)).status).toBe('pending');
      expect((await userRow(other.user.id)).plan_name).toBeNull();

      const report = await reconcile();
      expect(report.ran).toBe(true);
      expect(await invoiceRow(invoice.id)).toMatchObject({
        status: 'paid',
        provider_tx_ref: 'charge-other',
      });
      expect((await userRow(buyer.user.id)).plan_name).toBe('monthly');
    });
  });

  describe('reconciliation', () => {
    it('confirms paid invoices, expires stale ones, credits late payments within 7 days', async () => {
      const buyer = await newUser(t, 'seed');
      const age = async (invoice: Invoice, days: number) =>
        t.dataSource.query(
          `UPDATE invoices SET created_at = now() - make_interval(days => $2),
             expires_at = now() - make_interval(days => $2) + interval '24 hours' WHERE id = $1`,
          [invoice.id, days],
        );
      // Each aged before the next order, which would otherwise be given it again.
      const stale = await order(buyer);
      await age(stale, 2);
      const lateButOk = await order(buyer);
      await age(lateButOk, 6);
      const tooLate = await order(buyer);
      await age(tooLate, 8);
      const paidNow = await order(buyer);
      payOnChain(paidNow);
      payOnChain(lateButOk);
      payOnChain(tooLate);

      const report = await reconcile();
      expect(report).toMatchObject({ ran: true, failedProviders: [] });
      expect(report.expired).toBeGreaterThanOrEqual(3);
      expect((await invoiceRow(paidNow.id)).status).toBe('paid');
      expect((await invoiceRow(stale.id)).status).toBe('expired');
      expect((await invoiceRow(lateButOk.id)).status).toBe('paid');
      expect((await invoiceRow(tooLate.id)).status).toBe('expired');
      expect(Math.abs((await remaining(buyer.user.id)) - 60 * DAY)).toBeLessThan(60_000);

      const late = await confirm(buyer, tooLate.id).expect(409);
      expect(late.body.code).toBe('INVOICE_NOT_PENDING');
    });

    it('toncenter down: logged, nothing half-applied, next run catches up', async () => {
      const buyer = await newUser(t, 'seed');
      const invoice = await order(buyer);
      payOnChain(invoice);
      toncenter.down = true;
      try {
        const report = await reconcile();
        expect(report).toMatchObject({ ran: true, failedProviders: ['ton'] });
        expect((await invoiceRow(invoice.id)).status).toBe('pending');
        expect((await userRow(buyer.user.id)).plan_name).toBeNull();
      } finally {
        toncenter.down = false;
      }
      await reconcile();
      expect((await invoiceRow(invoice.id)).status).toBe('paid');
    });

    it('runs on one instance at a time (advisory lock)', async () => {
      const buyer = await newUser(t, 'seed');
      const invoice = await order(buyer);
      payOnChain(invoice);
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.query(`SELECT pg_advisory_lock(7000001)`);
        expect(await reconcile()).toMatchObject({ ran: false });
        expect((await invoiceRow(invoice.id)).status).toBe('pending');
        await runner.query(`SELECT pg_advisory_unlock(7000001)`);
      } finally {
        await runner.release();
      }
      expect(await reconcile()).toMatchObject({ ran: true });
      expect((await invoiceRow(invoice.id)).status).toBe('paid');
    });
  });
});
