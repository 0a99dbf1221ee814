import { Address } from '@ton/core';
import { startBillingWorld, type BillingWorld } from './fakes/billing';
import { tonShop } from './fakes/ton-purchase';
import type { TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';

const API = '/api/v1';
/** 499 USD cents × 12.5% = 62.375: each partner below earns 62 cents from one purchase. */
const EARNED = 62n;
const TON_ADDRESS = new Address(0, Buffer.alloc(32, 5));

type State = 'pending' | 'approved' | 'rejected' | 'paid';
type Move = 'approve' | 'reject' | 'paid';

describe('withdrawals: balances never negative, staff moves, validation', () => {
  let world: BillingWorld;
  let t: TestApp;
  let owner: TestUser;
  let moderator: TestUser;
  let shop: ReturnType<typeof tonShop>;

  /** A partner with 62 USD cents earned from one TON purchase of its attached buyer. */
  const earningPartner = async (): Promise<TestUser> => {
    const partner = await newUser(t, 'partner', { commissionPercent: '12.50' });
    const buyer = await newUser(t, 'seed', { referredByPartnerId: partner.user.id });
    await shop.buy(buyer, 'monthly', 'USD');
    return partner;
  };

  const withdraw = (partner: TestUser, body: Record<string, unknown>) =>
    t.http().post(`${API}/partners/me/withdrawals`).set(partner.bearer).send(body);

  const usd = (partner: TestUser, amount: bigint) =>
    withdraw(partner, { amount: amount.toString(), currency: 'USD', destination: 'acct-42' });

  const move = (by: TestUser, id: string, what: Move, body: Record<string, unknown> = {}) =>
    t.http().post(`${API}/admin/withdrawals/${id}/${what}`).set(by.bearer).send(body);

  /** The balance straight from the rows, not from any answer of the service. */
  const rowsBalance = async (partnerId: string) => {
    const [row] = await t.dataSource.query(
      `SELECT
         (SELECT COALESCE(sum(amount_minor), 0) FROM partner_commissions
           WHERE partner_id = $1 AND currency = 'USD')::text AS earned,
         (SELECT COALESCE(sum(amount), 0) FROM withdrawal_requests
           WHERE partner_id = $1 AND currency = 'USD' AND status <> 'rejected')::text AS taken`,
      [partnerId],
    );
    return { earned: BigInt(row.earned), available: BigInt(row.earned) - BigInt(row.taken) };
  };

  const withdrawalRow = async (id: string) => {
    const [row] = await t.dataSource.query(
      `SELECT status, reason, tx_ref, decided_by, updated_at FROM withdrawal_requests WHERE id = $1`,
      [id],
    );
    return row as Record<string, unknown>;
  };

  const count = async (sql: string, params: unknown[] = []): Promise<number> =>
    (await t.dataSource.query(`SELECT count(*)::int AS n FROM ${sql}`, params))[0].n;

  /** A withdrawal of 10 cents brought to `state` through the routes. */
  const withdrawalIn = async (partner: TestUser, state: State): Promise<string> => {
    const id = (await usd(partner, 10n).expect(201)).body.id as string;
    if (state === 'approved' || state === 'paid') await move(owner, id, 'approve').expect(200);
    if (state === 'paid') await move(owner, id, 'paid').expect(200);
    if (state === 'rejected') await move(owner, id, 'reject', { reason: 'no' }).expect(200);
    return id;
  };

  beforeAll(async () => {
    world = await startBillingWorld({ USD: '2.5' });
    t = world.t;
    shop = tonShop(world);
    [owner, moderator] = [await newUser(t, 'owner'), await newUser(t, 'moderator')];
    await savePlan(t, owner);
  });
  afterAll(() => world.close());

  describe('never negative, under concurrency', () => {
    it('10 concurrent withdrawals exceeding the balance: the accepted ones fit within it', async () => {
      const partner = await earningPartner();
      const answers = await Promise.all(Array.from({ length: 10 }, () => usd(partner, 10n)));
      const accepted = answers.filter((answer) => answer.status === 201);
      const refused = answers.filter((answer) => answer.status !== 201);
      // 62 cents hold six requests of 10: exactly six, whatever the order.
      expect(accepted).toHaveLength(6);
      expect(refused.map((answer) => [answer.status, answer.body.code])).toEqual(
        Array.from({ length: 4 }, () => [409, 'INSUFFICIENT_BALANCE']),
      );
      expect(await rowsBalance(partner.user.id)).toEqual({ earned: EARNED, available: 2n });
      const view = await t
        .http()
        .get(`${API}/partners/me/earnings`)
        .set(partner.bearer)
        .expect(200);
      expect(view.body.balances).toEqual([
        { currency: 'USD', earned: '62', requested: '60', paid: '0', available: '2' },
      ]);
    });

    it('withdrawals racing a rejection and staff moves: available never below 0', async () => {
      const partner = await earningPartner();
      const first = (await usd(partner, 50n).expect(201)).body.id as string;
      const answers = await Promise.all([
        move(owner, first, 'reject', { reason: 'race' }),
        ...Array.from({ length: 5 }, () => usd(partner, 50n)),
      ]);
      expect(answers[0].status).toBe(200);
      const created = answers.slice(1).filter((answer) => answer.status === 201);
      expect(created.length).toBeLessThanOrEqual(1);
      const { available } = await rowsBalance(partner.user.id);
      expect(available).toBeGreaterThanOrEqual(0n);
      expect(available).toBe(EARNED - 50n * BigInt(created.length));

      // Approve and pay what was accepted while more requests race: still never below 0.
      const racing = await Promise.all([
        ...created.map((answer) => move(owner, answer.body.id as string, 'approve')),
        ...Array.from({ length: 5 }, () => usd(partner, 12n)),
      ]);
      expect(racing.filter((answer) => answer.status >= 500)).toEqual([]);
      expect((await rowsBalance(partner.user.id)).available).toBeGreaterThanOrEqual(0n);
    });

    it('the same move raced five times applies once, audited once', async () => {
      const partner = await earningPartner();
      const id = await withdrawalIn(partner, 'pending');
      const answers = await Promise.all(
        Array.from({ length: 5 }, (_, i) => move(i % 2 ? owner : moderator, id, 'approve')),
      );
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
      expect(
        answers.filter((a) => a.status === 409 && a.body.code === 'WITHDRAWAL_STATE'),
      ).toHaveLength(4);
      expect(await count(`audit_log WHERE target_id = $1`, [id])).toBe(1);

      // reject and paid racing on an approved one: exactly one wins.
      const [rejected, paid] = await Promise.all([
        move(owner, id, 'reject', { reason: 'late' }),
        move(moderator, id, 'paid', { tx_ref: 'tx-9' }),
      ]);
      expect([rejected.status, paid.status].sort()).toEqual([200, 409]);
      const row = await withdrawalRow(id);
      expect(row.status).toBe(rejected.status === 200 ? 'rejected' : 'paid');
      expect(await count(`audit_log WHERE target_id = $1`, [id])).toBe(2);
    });
  });

  describe('state moves', () => {
    const allowed: Record<State, Move[]> = {
      pending: ['approve', 'reject'],
      approved: ['reject', 'paid'],
      rejected: [],
      paid: [],
    };
    const outcome: Record<Move, State> = { approve: 'approved', reject: 'rejected', paid: 'paid' };
    const bodyOf = (what: Move) =>
      what === 'reject' ? { reason: 'bad account' } : what === 'paid' ? { tx_ref: 'tx-1' } : {};

    it('every allowed move lands in its state; every other is 409 WITHDRAWAL_STATE and changes nothing', async () => {
      const partner = await earningPartner();
      for (const state of ['pending', 'approved', 'rejected', 'paid'] as const) {
        for (const what of ['approve', 'reject', 'paid'] as const) {
          const id = await withdrawalIn(partner, state);
          const before = await withdrawalRow(id);
          const audited = await count(`audit_log WHERE target_id = $1`, [id]);
          const answer = await move(moderator, id, what, bodyOf(what));
          const where = `${what} on ${state}`;
          if (allowed[state].includes(what)) {
            expect([where, answer.status, answer.body.status]).toEqual([where, 200, outcome[what]]);
            expect(answer.body.decided_by).toBe(moderator.user.id);
            expect(await count(`audit_log WHERE target_id = $1`, [id])).toBe(audited + 1);
          } else {
            expect([where, answer.status, answer.body.code]).toEqual([
              where,
              409,
              'WITHDRAWAL_STATE',
            ]);
            expect(await withdrawalRow(id)).toEqual(before);
            expect(await count(`audit_log WHERE target_id = $1`, [id])).toBe(audited);
          }
          // Rejected ones return to available: keeps the partner's balance for the next round.
          const { status } = await withdrawalRow(id);
          if (status === 'pending' || status === 'approved') {
            await move(owner, id, 'reject', { reason: 'reset' }).expect(200);
          }
        }
        const { available } = await rowsBalance(partner.user.id);
        expect(available).toBeGreaterThanOrEqual(0n);
      }
    });

    it('an unknown withdrawal is 404; a malformed id is 400', async () => {
      const missing = await move(owner, '00000000-0000-4000-8000-000000000000', 'approve');
      expect([missing.status, missing.body.code]).toEqual([404, 'NOT_FOUND']);
      const malformed = await move(owner, 'not-a-uuid', 'approve');
      expect([malformed.status, malformed.body.code]).toEqual([400, 'VALIDATION_FAILED']);
    });

    it('bad reject and paid bodies are 400 and change nothing', async () => {
      const partner = await earningPartner();
      const id = await withdrawalIn(partner, 'approved');
      const before = await withdrawalRow(id);
      const bad: [Move, Record<string, unknown>][] = [
        ['reject', {}],
        ['reject', { reason: '' }],
        ['reject', { reason: '   ' }],
        ['reject', { reason: 5 }],
        ['reject', { reason: 'x'.repeat(501) }],
        ['reject', { reason: 'ok', extra: true }],
        ['paid', { tx_ref: '' }],
        ['paid', { tx_ref: 7 }],
        ['paid', { tx_ref: 'x'.repeat(201) }],
        ['paid', { tx_ref: 'a\nb' }],
        // Unpaired surrogates: PostgreSQL refused them in the audit entry, a 500 before.
        ['reject', { reason: 'a\ud800b' }],
        ['reject', { reason: '\udc00' }],
        ['paid', { tx_ref: 'tx-\ud800' }],
        // What staff and partners cannot see, or read otherwise.
        ['reject', { reason: '\u200b' }],
        ['reject', { reason: 'see \u202eacct' }],
        ['reject', { reason: '\u3164' }],
        ['paid', { tx_ref: 'tx\u200b-1' }],
        ['paid', { tx_ref: 'tx\u2066-1' }],
        ['paid', { tx_ref: 'tx\u0007' }],
      ];
      for (const [what, body] of bad) {
        const answer = await move(owner, id, what, body);
        const where = `${what} ${JSON.stringify(body)}`;
        expect([where, answer.status, answer.body.code]).toEqual([where, 400, 'VALIDATION_FAILED']);
      }
      expect(await withdrawalRow(id)).toEqual(before);
      // paid without a tx_ref is fine.
      expect((await move(owner, id, 'paid').expect(200)).body).toMatchObject({
        status: 'paid',
        tx_ref: null,
      });
    });
  });

  describe('requests', () => {
    it('bad bodies are 400 and store nothing', async () => {
      const partner = await earningPartner();
      const good = { amount: '1', currency: 'USD', destination: 'acct-1' };
      const bad: Record<string, unknown>[] = [
        {},
        { ...good, amount: 1 },
        { ...good, amount: '0' },
        { ...good, amount: '-5' },
        { ...good, amount: '01' },
        { ...good, amount: '1.5' },
        { ...good, amount: '1e3' },
        { ...good, amount: '1'.repeat(19) },
        { ...good, currency: 'usd' },
        { ...good, currency: 'XXX' },
        { ...good, currency: undefined },
        { ...good, destination: '' },
        { ...good, destination: 'x'.repeat(201) },
        { ...good, destination: 'line\nbreak' },
        // Reads otherwise to the staff who pay it: a direction override, invisible characters.
        { ...good, destination: 'acct-\u202E24-tcca' },
        { ...good, destination: 'acct\u200B-42' },
        { ...good, destination: '\u200D' },
        { ...good, destination: '\u00AD\u2060' },
        { ...good, destination: '   ' },
        { ...good, destination: 'acct-\ud800' },
        { ...good, destination: '\u3164' },
        { ...good, destination: 'acct \u3164' },
        { ...good, destination: `acct-4${'\u0301'.repeat(8)}2` },
        { ...good, destination: 42 },
        { ...good, currency: 'TON', destination: 'not-a-ton-address' },
        { ...good, extra: 1 },
      ];
      for (const body of bad) {
        const answer = await withdraw(partner, body);
        const where = JSON.stringify(body);
        expect([where, answer.status, answer.body.code]).toEqual([where, 400, 'VALIDATION_FAILED']);
      }
      expect(await count(`withdrawal_requests WHERE partner_id = $1`, [partner.user.id])).toBe(0);
    });

    it('amount bounds: 18 digits pass validation; more than available is 409; all of it is 201', async () => {
      const partner = await earningPartner();
      for (const amount of ['9'.repeat(18), (EARNED + 1n).toString()]) {
        const answer = await withdraw(partner, { amount, currency: 'USD', destination: 'a' });
        expect([amount, answer.status, answer.body.code]).toEqual([
          amount,
          409,
          'INSUFFICIENT_BALANCE',
        ]);
      }
      // Nothing earned in TON: any TON address form passes validation, the balance refuses it.
      for (const destination of [TON_ADDRESS.toString(), TON_ADDRESS.toRawString()]) {
        const answer = await withdraw(partner, { amount: '1', currency: 'TON', destination });
        expect([destination, answer.status, answer.body.code]).toEqual([
          destination,
          409,
          'INSUFFICIENT_BALANCE',
        ]);
      }
      expect(await count(`withdrawal_requests WHERE partner_id = $1`, [partner.user.id])).toBe(0);
      const all = await usd(partner, EARNED).expect(201);
      expect(all.body).toMatchObject({ amount: '62', status: 'pending', destination: 'acct-42' });
    });

    it('a partner sees only its own withdrawals, newest first, paged', async () => {
      const [mine, theirs] = [await earningPartner(), await earningPartner()];
      const ids = [await withdrawalIn(mine, 'pending'), await withdrawalIn(mine, 'paid')];
      await withdrawalIn(theirs, 'pending');
      const first = await t
        .http()
        .get(`${API}/partners/me/withdrawals?limit=1`)
        .set(mine.bearer)
        .expect(200);
      expect(first.body.items.map((w: { id: string }) => w.id)).toEqual([ids[1]]);
      const second = await t
        .http()
        .get(`${API}/partners/me/withdrawals?limit=1&cursor=${first.body.next_cursor}`)
        .set(mine.bearer)
        .expect(200);
      expect(second.body.items.map((w: { id: string }) => w.id)).toEqual([ids[0]]);
      expect(second.body.next_cursor).toBeNull();
      await t
        .http()
        .get(`${API}/partners/me/withdrawals?cursor=garbage`)
        .set(mine.bearer)
        .expect(400);
    });
  });

  describe('GET /admin/withdrawals', () => {
    it('lists every partner’s, newest first, filtered by status, paged', async () => {
      const partner = await earningPartner();
      const pending = await withdrawalIn(partner, 'pending');
      const paid = await withdrawalIn(partner, 'paid');
      const all = await t.http().get(`${API}/admin/withdrawals`).set(moderator.bearer).expect(200);
      const listed = all.body.items.map((w: { id: string }) => w.id);
      expect(listed.indexOf(paid)).toBeLessThan(listed.indexOf(pending));
      const onlyPaid = await t
        .http()
        .get(`${API}/admin/withdrawals?status=paid&limit=100`)
        .set(owner.bearer)
        .expect(200);
      expect(onlyPaid.body.items.every((w: { status: string }) => w.status === 'paid')).toBe(true);
      expect(onlyPaid.body.items.map((w: { id: string }) => w.id)).toContain(paid);
      expect(onlyPaid.body.items.map((w: { id: string }) => w.id)).not.toContain(pending);
      const page = await t
        .http()
        .get(`${API}/admin/withdrawals?limit=1`)
        .set(owner.bearer)
        .expect(200);
      expect(page.body.items).toHaveLength(1);
      expect(typeof page.body.next_cursor).toBe('string');
      for (const query of ['status=done', 'limit=0', 'limit=101', 'cursor=xyz']) {
        const answer = await t.http().get(`${API}/admin/withdrawals?${query}`).set(owner.bearer);
        expect([query, answer.status]).toEqual([query, 400]);
      }
    });

    it('non-staff are 403 on /admin/withdrawals* and change nothing', async () => {
      const partner = await earningPartner();
      const id = await withdrawalIn(partner, 'pending');
      const before = await withdrawalRow(id);
      for (const kind of ['seed', 'telegram', 'support', 'partner'] as const) {
        const caller = kind === 'partner' ? partner : await newUser(t, kind);
        for (const call of [
          t.http().get(`${API}/admin/withdrawals`),
          t.http().post(`${API}/admin/withdrawals/${id}/approve`),
          t.http().post(`${API}/admin/withdrawals/${id}/reject`).send({ reason: 'x' }),
          t.http().post(`${API}/admin/withdrawals/${id}/paid`).send({}),
        ]) {
          const answer = await call.set(caller.bearer);
          expect([kind, answer.status, answer.body.code]).toEqual([kind, 403, 'FORBIDDEN']);
        }
      }
      expect(await withdrawalRow(id)).toEqual(before);
    });
  });
});
