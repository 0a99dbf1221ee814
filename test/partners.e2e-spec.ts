import { Address } from '@ton/core';
import { User } from '../src/users/entities/user.entity';
import { startBillingWorld, type BillingWorld } from './fakes/billing';
import { tonShop, type Purchase } from './fakes/ton-purchase';
import type { TestApp } from './harness/app';
import { newUser, savePlan, parseSetCookies, type TestUser } from './harness/factories';

const API = '/api/v1';
/** A TON price that does not divide evenly: × 12.5% = 154320986.375 nanotons. */
const TON_PRICE = 1_234_567_891n;
const PAYOUT_ADDRESS = new Address(0, Buffer.alloc(32, 3)).toString();

interface Balance {
  currency: string;
  earned: string;
  requested: string;
  paid: string;
  available: string;
}

describe('partners: attaching buyers, earnings, the whole payout story', () => {
  let world: BillingWorld;
  let t: TestApp;
  let owner: TestUser;
  let shop: ReturnType<typeof tonShop>;

  const attach = (user: { bearer: Record<string, string> }, code: unknown) =>
    t.http().post(`${API}/users/me/partner`).set(user.bearer).send({ partner_code: code });

  const attachedTo = async (userId: string): Promise<string | null> =>
    (await t.dataSource.getRepository(User).findOneByOrFail({ id: userId })).referredByPartnerId;

  const earnings = async (partner: { bearer: Record<string, string> }, query = '') =>
    (await t.http().get(`${API}/partners/me/earnings${query}`).set(partner.bearer).expect(200))
      .body as {
      partner_code: string;
      commission_percent: number;
      balances: Balance[];
      recent: Record<string, unknown>[];
      next_cursor: string | null;
    };

  const balanceIn = async (partner: { bearer: Record<string, string> }, currency: string) =>
    (await earnings(partner)).balances.find((b) => b.currency === currency);

  beforeAll(async () => {
    world = await startBillingWorld({ USD: '2.5' });
    t = world.t;
    shop = tonShop(world);
    owner = await newUser(t, 'owner');
    await savePlan(t, owner, { prices: { TON: TON_PRICE.toString(), USD: '499' } });
  });
  afterAll(() => world.close());

  it('the owner makes a partner; its buyer buys twice with TON; it withdraws and is paid', async () => {
    const password = 'partner-password-long-enough';
    const created = await t
      .http()
      .post(`${API}/admin/partners`)
      .set(owner.bearer)
      .send({ username: 'story-partner', password, commission_percent: 12.5 })
      .expect(201);
    const code = created.body.partner_code as string;
    const login = await t
      .http()
      .post(`${API}/auth/admin/login`)
      .send({ username: 'story-partner', password })
      .expect(200);
    const token = parseSetCookies(login.headers['set-cookie']).access_token.value;
    const partner = { bearer: { Authorization: `Bearer ${token}` } };

    const buyer = await newUser(t, 'seed');
    const attached = await attach(buyer, code).expect(200);
    expect(attached.body.id).toBe(buyer.user.id);
    expect(await attachedTo(buyer.user.id)).toBe(created.body.id);

    const purchases: Purchase[] = [];
    purchases.push(await shop.buy(buyer, 'monthly', 'TON'));
    purchases.push(await shop.buy(buyer, 'monthly', 'TON'));
    expect(purchases.map((p) => p.amount)).toEqual([TON_PRICE.toString(), TON_PRICE.toString()]);

    const perPurchase = (TON_PRICE * 125n) / 1000n; // floor(price × 12.5 / 100)
    expect(perPurchase).toBe(154_320_986n);
    const view = await earnings(partner);
    expect(view.partner_code).toBe(code);
    expect(view.commission_percent).toBe(12.5);
    expect(view.balances).toEqual([
      {
        currency: 'TON',
        earned: (2n * perPurchase).toString(),
        requested: '0',
        paid: '0',
        available: (2n * perPurchase).toString(),
      },
    ]);
    // Newest first: the second purchase, then the first.
    expect(view.recent).toEqual(
      [purchases[1], purchases[0]].map((p) =>
        expect.objectContaining({
          invoice_id: p.invoiceId,
          buyer_id: buyer.user.id,
          plan_name: 'monthly',
          currency: 'TON',
          price_minor: TON_PRICE.toString(),
          percent: 12.5,
          amount: perPurchase.toString(),
          created_at: expect.any(String),
        }),
      ),
    );
    expect(view.next_cursor).toBeNull();
    const firstPage = await earnings(partner, '?limit=1');
    expect(firstPage.recent.map((c) => c.invoice_id)).toEqual([purchases[1].invoiceId]);
    const secondPage = await earnings(partner, `?limit=1&cursor=${firstPage.next_cursor}`);
    expect(secondPage.recent.map((c) => c.invoice_id)).toEqual([purchases[0].invoiceId]);
    expect(secondPage.next_cursor).toBeNull();

    const withdraw = (amount: bigint) =>
      t
        .http()
        .post(`${API}/partners/me/withdrawals`)
        .set(partner.bearer)
        .send({ amount: amount.toString(), currency: 'TON', destination: PAYOUT_ADDRESS });
    const earned = 2n * perPurchase;

    // A withdrawal lowers available; staff approve it and mark it paid.
    const first = await withdraw(100_000_000n).expect(201);
    expect(first.body).toMatchObject({
      amount: '100000000',
      currency: 'TON',
      destination: PAYOUT_ADDRESS,
      status: 'pending',
      partner_id: created.body.id,
    });
    expect(await balanceIn(partner, 'TON')).toMatchObject({
      requested: '100000000',
      paid: '0',
      available: (earned - 100_000_000n).toString(),
    });
    const approved = await t
      .http()
      .post(`${API}/admin/withdrawals/${first.body.id}/approve`)
      .set(owner.bearer)
      .expect(200);
    expect(approved.body).toMatchObject({ status: 'approved', decided_by: owner.user.id });
    const paid = await t
      .http()
      .post(`${API}/admin/withdrawals/${first.body.id}/paid`)
      .set(owner.bearer)
      .send({ tx_ref: 'payout-tx-1' })
      .expect(200);
    expect(paid.body).toMatchObject({ status: 'paid', tx_ref: 'payout-tx-1' });
    expect(await balanceIn(partner, 'TON')).toEqual({
      currency: 'TON',
      earned: earned.toString(),
      requested: '0',
      paid: '100000000',
      available: (earned - 100_000_000n).toString(),
    });

    // A rejected one returns to available.
    const rest = earned - 100_000_000n;
    const second = await withdraw(rest).expect(201);
    expect((await balanceIn(partner, 'TON'))?.available).toBe('0');
    const refused = await withdraw(1n).expect(409);
    expect(refused.body.code).toBe('INSUFFICIENT_BALANCE');
    await t
      .http()
      .post(`${API}/admin/withdrawals/${second.body.id}/reject`)
      .set(owner.bearer)
      .send({ reason: 'wrong address' })
      .expect(200);
    expect(await balanceIn(partner, 'TON')).toMatchObject({
      requested: '0',
      available: rest.toString(),
    });
    const third = await withdraw(rest).expect(201);

    const own = await t
      .http()
      .get(`${API}/partners/me/withdrawals`)
      .set(partner.bearer)
      .expect(200);
    expect(own.body.items.map((w: { id: string; status: string }) => [w.id, w.status])).toEqual([
      [third.body.id, 'pending'],
      [second.body.id, 'rejected'],
      [first.body.id, 'paid'],
    ]);
    expect(own.body.next_cursor).toBeNull();

    // Each staff move is in the audit log: who, when, and the reason or tx_ref.
    const audit = await t.http().get(`${API}/admin/audit?limit=100`).set(owner.bearer).expect(200);
    const moves = (audit.body.items as Record<string, unknown>[]).filter(
      (entry) => entry.target_type === 'withdrawal',
    );
    expect(moves).toEqual([
      expect.objectContaining({
        action: 'withdrawal.rejected',
        actor_id: owner.user.id,
        target_id: second.body.id,
        before: { status: 'pending' },
        after: { status: 'rejected', reason: 'wrong address' },
        created_at: expect.any(String),
      }),
      expect.objectContaining({
        action: 'withdrawal.paid',
        target_id: first.body.id,
        before: { status: 'approved' },
        after: { status: 'paid', tx_ref: 'payout-tx-1' },
      }),
      expect.objectContaining({
        action: 'withdrawal.approved',
        target_id: first.body.id,
        before: { status: 'pending' },
        after: { status: 'approved' },
      }),
    ]);
  });

  it('a changed commission percent applies forward: a written commission keeps its amount', async () => {
    const partner = await newUser(t, 'partner', { commissionPercent: '12.50' });
    const buyer = await newUser(t, 'seed');
    await attach(buyer, partner.user.partnerCode).expect(200);
    await shop.buy(buyer, 'monthly', 'USD');
    await t.dataSource
      .getRepository(User)
      .update({ id: partner.user.id }, { commissionPercent: '20.00' });
    await shop.buy(buyer, 'monthly', 'USD');

    const view = await earnings(partner);
    expect(view.commission_percent).toBe(20);
    expect(view.recent.map((c) => [c.percent, c.amount])).toEqual([
      [20, '99'], // 499 × 20% = 99.8
      [12.5, '62'], // 499 × 12.5% = 62.375, as it was written
    ]);
    expect(view.balances).toEqual([
      { currency: 'USD', earned: '161', requested: '0', paid: '0', available: '161' },
    ]);
  });

  describe('POST /users/me/partner', () => {
    it('first wins: the same partner again is 200 and changes nothing; another is 409', async () => {
      const [first, second] = [await newUser(t, 'partner'), await newUser(t, 'partner')];
      const buyer = await newUser(t, 'telegram');
      await attach(buyer, first.user.partnerCode).expect(200);
      await attach(buyer, first.user.partnerCode).expect(200);
      expect(await attachedTo(buyer.user.id)).toBe(first.user.id);
      const refused = await attach(buyer, second.user.partnerCode).expect(409);
      expect(refused.body.code).toBe('ALREADY_ATTACHED');
      expect(await attachedTo(buyer.user.id)).toBe(first.user.id);
    });

    it('codes match in any case: staff type Acme-7, it is kept as acme-7, ACME-7 attaches to it', async () => {
      const made = (code: string, username: string) =>
        t.http().post(`${API}/admin/partners`).set(owner.bearer).send({
          username,
          password: 'partner-password-long',
          commission_percent: 10,
          partner_code: code,
        });
      const created = await made('Acme-7', 'case-partner-1').expect(201);
      expect(created.body.partner_code).toBe('acme-7');
      expect((await made('ACME-7', 'case-partner-2').expect(409)).body.code).toBe('CONFLICT');
      const buyer = await newUser(t, 'seed');
      await attach(buyer, 'ACME-7').expect(200);
      expect(await attachedTo(buyer.user.id)).toBe(created.body.id);
      // A code stored in capitals before codes were kept in lower case matches too.
      const older = await newUser(t, 'partner', { partnerCode: 'OldShop' });
      const another = await newUser(t, 'seed');
      await attach(another, 'oldshop').expect(200);
      expect(await attachedTo(another.user.id)).toBe(older.user.id);
    });

    it('an unknown code is 404 NOT_FOUND; a code of a non-partner is unknown', async () => {
      const buyer = await newUser(t, 'seed');
      const unknown = await attach(buyer, 'no-such-code').expect(404);
      expect(unknown.body.code).toBe('NOT_FOUND');
      const moderator = await newUser(t, 'moderator', { partnerCode: 'mod-code-1' });
      expect((await attach(buyer, moderator.user.partnerCode).expect(404)).body.code).toBe(
        'NOT_FOUND',
      );
      expect(await attachedTo(buyer.user.id)).toBeNull();
    });

    it('a partner cannot attach to itself, but can to another partner', async () => {
      const [partner, other] = [await newUser(t, 'partner'), await newUser(t, 'partner')];
      const refused = await attach(partner, partner.user.partnerCode).expect(409);
      expect(refused.body.code).toBe('CONFLICT');
      expect(await attachedTo(partner.user.id)).toBeNull();
      await attach(partner, other.user.partnerCode).expect(200);
      expect(await attachedTo(partner.user.id)).toBe(other.user.id);
    });

    it('5 concurrent attaches of one buyer to 5 partners: exactly one 200', async () => {
      const partners = await Promise.all(Array.from({ length: 5 }, () => newUser(t, 'partner')));
      const buyer = await newUser(t, 'seed');
      const answers = await Promise.all(partners.map((p) => attach(buyer, p.user.partnerCode)));
      const won = answers.flatMap((answer, i) => (answer.status === 200 ? [partners[i]] : []));
      expect(won).toHaveLength(1);
      const lost = answers.filter((answer) => answer.status !== 200);
      expect(lost.map((answer) => [answer.status, answer.body.code])).toEqual(
        Array.from({ length: 4 }, () => [409, 'ALREADY_ATTACHED']),
      );
      expect(await attachedTo(buyer.user.id)).toBe(won[0].user.id);
    });

    it('bad bodies are 400 and attach nothing; no session is 401', async () => {
      const partner = await newUser(t, 'partner');
      const buyer = await newUser(t, 'seed');
      for (const body of [
        {},
        { partner_code: 5 },
        { partner_code: 'ab' },
        { partner_code: 'x'.repeat(33) },
        { partner_code: 'has space' },
        { partner_code: partner.user.partnerCode, extra: 1 },
      ]) {
        const answer = await t.http().post(`${API}/users/me/partner`).set(buyer.bearer).send(body);
        expect([JSON.stringify(body), answer.status, answer.body.code]).toEqual([
          JSON.stringify(body),
          400,
          'VALIDATION_FAILED',
        ]);
      }
      await t
        .http()
        .post(`${API}/users/me/partner`)
        .send({ partner_code: partner.user.partnerCode })
        .expect(401);
      expect(await attachedTo(buyer.user.id)).toBeNull();
    });
  });

  it('non-partners are 403 on /partners/me/*, and store nothing', async () => {
    for (const kind of ['seed', 'support', 'moderator', 'owner'] as const) {
      const caller = await newUser(t, kind);
      for (const call of [
        t.http().get(`${API}/partners/me/earnings`),
        t.http().get(`${API}/partners/me/withdrawals`),
        t
          .http()
          .post(`${API}/partners/me/withdrawals`)
          .send({ amount: '1', currency: 'USD', destination: 'acct-1' }),
      ]) {
        const answer = await call.set(caller.bearer);
        expect([kind, answer.status, answer.body.code]).toEqual([kind, 403, 'FORBIDDEN']);
      }
    }
    const [row] = await t.dataSource.query(`SELECT count(*)::int AS n FROM withdrawal_requests
      WHERE partner_id IN (SELECT id FROM users WHERE role IS DISTINCT FROM 'partner')`);
    expect(row.n).toBe(0);
  });
});
