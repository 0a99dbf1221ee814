import { controlClock, type ControlledClock } from './fakes/clock';
import type { TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import {
  BOT_TOKEN,
  PROVIDER_TOKEN,
  startBillingWorld,
  WALLET,
  type BillingWorld,
} from './fakes/billing';
import type { FakeBotApi } from './fakes/telegram-bot-api';
import type { FakeTonapi } from './fakes/tonapi';

/** ⌈price / 10^digits / rate × 1e9 × 1.02⌉ with the rate given as decimal text, in bigints. */
function expectedNano(priceMinor: number, rate: string, digits = 2): string {
  const [whole, fraction = ''] = rate.split('.');
  const num = BigInt(whole + fraction);
  const den = 10n ** BigInt(fraction.length);
  const top = BigInt(priceMinor) * 1_000_000_000n * 102n * den;
  const bottom = 10n ** BigInt(digits) * 100n * num;
  return ((top + bottom - 1n) / bottom).toString();
}

/** What a plan saved without the period fields (issue 45) and display names has. */
const PLAN_PERIODS = {
  traffic_reset: 'none',
  reset_day: 1,
  starts: 'on_purchase',
  on_hold_max_days: 30,
  display: {},
};

describe('billing: plans, invoices, trial', () => {
  let t: TestApp;
  let tonapi: FakeTonapi;
  let botApi: FakeBotApi;
  let world: BillingWorld;
  let owner: TestUser;
  let clock: ControlledClock;

  const countInvoices = async (userId?: string): Promise<number> => {
    const [row] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM invoices WHERE $1::uuid IS NULL OR user_id = $1`,
      [userId ?? null],
    );
    return row.n;
  };

  const putPlan = (name: string, body: Record<string, unknown>, as: TestUser = owner) =>
    t.http().put(`/api/v1/admin/plans/${name}`).set(as.bearer).send(body);

  const order = (user: TestUser, body: Record<string, unknown>) =>
    t.http().post('/api/v1/invoices').set(user.bearer).send(body);

  beforeAll(async () => {
    // CHF's rate is a glitch: a ten-billionth of a franc per TON.
    world = await startBillingWorld(
      { USD: '2.5', RUB: '250.37', EUR: '1.02', GBP: '2.01', CHF: '0.0000000001' },
      { RATE_CACHE_S: '1' },
    );
    ({ t, tonapi, botApi } = world);
    clock = controlClock(t);
    owner = await newUser(t, 'owner');
    const monthly = {
      duration_days: 30,
      traffic_limit_bytes: 107374182400,
      prices: { USD: '499', RUB: '45000', EUR: '101', GBP: '399' },
      active: true,
    };
    await putPlan('monthly', monthly).expect(200);
  });
  afterAll(() => world.close());

  describe('plans', () => {
    it('staff upsert a plan, replacing its prices; GET /plans lists active ones', async () => {
      const created = await putPlan('weekly', {
        duration_days: 7,
        traffic_limit_bytes: 10737418240,
        prices: { USD: '199', EUR: '179' },
        active: true,
      }).expect(200);
      expect(created.body).toEqual({
        name: 'weekly',
        duration_days: 7,
        traffic_limit_bytes: 10737418240,
        prices: { USD: '199', EUR: '179' },
        device_limit: 3,
        traffic_reset: 'none',
        reset_day: 1,
        starts: 'on_purchase',
        on_hold_max_days: 30,
        display: {},
        active: true,
      });

      const moderator = await newUser(t, 'moderator');
      const replaced = await putPlan(
        'weekly',
        { duration_days: 8, traffic_limit_bytes: 1, prices: { RUB: '19900' }, active: true },
        moderator,
      ).expect(200);
      expect(replaced.body.prices).toEqual({ RUB: '19900' });
      const prices = await t.dataSource.query(
        `SELECT currency, amount_minor FROM plan_prices WHERE plan_name = 'weekly'`,
      );
      expect(prices).toEqual([{ currency: 'RUB', amount_minor: '19900' }]);

      await putPlan('hidden', {
        duration_days: 1,
        traffic_limit_bytes: 0,
        prices: { USD: '1' },
        active: false,
      }).expect(200);

      const list = await t.http().get('/api/v1/plans').expect(200);
      expect(list.body).toContainEqual({
        name: 'weekly',
        duration_days: 8,
        traffic_limit_bytes: 1,
        prices: { RUB: '19900' },
        device_limit: 3,
        traffic_reset: 'none',
        reset_day: 1,
        starts: 'on_purchase',
        on_hold_max_days: 30,
        display: {},
      });
      expect(list.body.map((p: { name: string }) => p.name)).not.toContain('hidden');
      expect(list.body.find((p: { name: string }) => p.name === 'monthly').prices.USD).toBe('499');
    });

    it('a plan’s device limit: DEVICE_LIMIT_DEFAULT until set, kept when a change leaves it out, 1 to 20', async () => {
      const plan = {
        duration_days: 30,
        traffic_limit_bytes: 1,
        prices: { USD: '1' },
        active: true,
      };
      expect((await putPlan('devices', plan).expect(200)).body.device_limit).toBe(3);
      expect(
        (await putPlan('devices', { ...plan, device_limit: 5 }).expect(200)).body.device_limit,
      ).toBe(5);
      expect(
        (await putPlan('devices', { ...plan, duration_days: 31 }).expect(200)).body.device_limit,
      ).toBe(5);
      for (const bad of [0, 21, 2.5, '3']) {
        const refused = await putPlan('devices', { ...plan, device_limit: bad }).expect(400);
        expect(refused.body.code).toBe('VALIDATION_FAILED');
      }
      const listed = await t.http().get('/api/v1/plans').expect(200);
      expect(listed.body.find((p: { name: string }) => p.name === 'devices').device_limit).toBe(5);
    });

    it('a plan’s display names per language: saved, listed, kept when left out, replaced, checked', async () => {
      const plan = {
        duration_days: 30,
        traffic_limit_bytes: 1,
        prices: { USD: '1' },
        active: true,
      };
      const display = {
        en: { name: 'Month', description: '30 days, 3 devices' },
        ru: { name: 'Месяц', description: '30 дней, 3 устройства' },
      };
      const saved = await putPlan('named', { ...plan, display }).expect(200);
      expect(saved.body.display).toEqual(display);
      const listed = async () =>
        (await t.http().get('/api/v1/plans').expect(200)).body.find(
          (p: { name: string }) => p.name === 'named',
        ).display;
      expect(await listed()).toEqual(display);
      // A change that leaves them out keeps them; one that names them replaces them all.
      await putPlan('named', { ...plan, duration_days: 31 }).expect(200);
      expect(await listed()).toEqual(display);
      await putPlan('named', { ...plan, display: { ru: { name: 'Месяц' } } }).expect(200);
      expect(await listed()).toEqual({ ru: { name: 'Месяц' } });

      const cases: [Record<string, unknown>, string][] = [
        [{ ru: { name: '\u200b\u200b' } }, 'display.ru.name'],
        [{ ru: { name: '' } }, 'display.ru.name'],
        [{ en: { name: 'x'.repeat(41) } }, 'display.en.name'],
        [{ en: { name: 'Month', description: 'a\nb' } }, 'display.en.description'],
        [{ en: {} }, 'display.en.name'],
        [{ en: { name: 'Month', extra: 1 } }, 'display.en.extra'],
        [{ fr: { name: 'Mois' } }, 'display.fr'],
      ];
      for (const [bad, field] of cases) {
        const res = await putPlan('named', { ...plan, display: bad });
        expect([bad, res.status, res.body.code]).toEqual([bad, 400, 'VALIDATION_FAILED']);
        expect([bad, res.body.details.map((d: { field: string }) => d.field)]).toEqual([
          bad,
          expect.arrayContaining([field]),
        ]);
      }
      for (const bad of ['Month', ['Month'], { ru: 'Месяц' }]) {
        const res = await putPlan('named', { ...plan, display: bad });
        expect([bad, res.status]).toEqual([bad, 400]);
      }
      const invisible = await putPlan('named', { ...plan, display: { ru: { name: '\u2800' } } });
      expect(invisible.body.details).toContainEqual(
        expect.objectContaining({ field: 'display.ru.name', rule: 'isVisibleText' }),
      );
      expect(await listed()).toEqual({ ru: { name: 'Месяц' } });
    });

    it('only staff may change plans', async () => {
      const body = { duration_days: 1, traffic_limit_bytes: 1, prices: { USD: '1' }, active: true };
      for (const kind of ['seed', 'partner', 'support'] as const) {
        const user = await newUser(t, kind);
        const res = await putPlan('sneaky', body, user).expect(403);
        expect(res.body.code).toBe('FORBIDDEN');
      }
      await t.http().put('/api/v1/admin/plans/sneaky').send(body).expect(401);
      const rows = await t.dataSource.query(`SELECT 1 FROM plans WHERE name = 'sneaky'`);
      expect(rows).toHaveLength(0);
    });

    it('a plan change is audited with the actor, before and after', async () => {
      const moderator = await newUser(t, 'moderator');
      const plan = { duration_days: 30, traffic_limit_bytes: 1, active: true };
      await putPlan('audited', { ...plan, prices: { USD: '499' } }, moderator).expect(200);
      await putPlan('audited', { ...plan, prices: { USD: '599', EUR: '549' } }).expect(200);
      // The same plan again changes nothing, so it adds no entry.
      await putPlan('audited', { ...plan, prices: { USD: '599', EUR: '549' } }).expect(200);

      const audit = await t
        .http()
        .get('/api/v1/admin/audit?limit=100')
        .set(owner.bearer)
        .expect(200);
      const entries = audit.body.items.filter(
        (e: { target_type: string; target_id: string }) =>
          e.target_type === 'plan' && e.target_id === 'audited',
      );
      expect(entries).toEqual([
        expect.objectContaining({
          action: 'plan.changed',
          actor_id: owner.user.id,
          before: { ...plan, prices: { USD: '499' }, device_limit: 3, ...PLAN_PERIODS },
          after: { ...plan, prices: { USD: '599', EUR: '549' }, device_limit: 3, ...PLAN_PERIODS },
        }),
        expect.objectContaining({
          action: 'plan.created',
          actor_id: moderator.user.id,
          before: null,
          after: { ...plan, prices: { USD: '499' }, device_limit: 3, ...PLAN_PERIODS },
        }),
      ]);
    });

    it('bad plan input is 400 and writes nothing', async () => {
      const good = {
        duration_days: 30,
        traffic_limit_bytes: 5,
        prices: { USD: '1' },
        active: true,
      };
      const cases: [string, Record<string, unknown>][] = [
        ['Bad-Name', good],
        ['a'.repeat(33), good],
        ['ok', { ...good, prices: { usd: '1' } }],
        ['ok', { ...good, prices: { USD: 499 } }],
        ['ok', { ...good, prices: { USD: '0' } }],
        ['ok', { ...good, prices: { USD: '4.99' } }],
        ['ok', { ...good, prices: { USD: '1000000000000' } }],
        ['ok', { ...good, prices: { ZZZ: '1' } }],
        ['ok', { ...good, prices: {} }],
        ['ok', { ...good, prices: ['USD'] }],
        ['ok', { ...good, duration_days: 0 }],
        ['ok', { ...good, duration_days: 1.5 }],
        ['ok', { ...good, traffic_limit_bytes: -1 }],
        ['ok', { ...good, active: 'yes' }],
        ['ok', { duration_days: 30, traffic_limit_bytes: 5, prices: { USD: '1' } }],
        ['ok', { ...good, extra: 1 }],
      ];
      for (const [name, body] of cases) {
        const res = await putPlan(name, body);
        expect({ name, body, status: res.status, code: res.body.code }).toMatchObject({
          status: 400,
          code: 'VALIDATION_FAILED',
        });
      }
      const rows = await t.dataSource.query(`SELECT 1 FROM plans WHERE name IN ('ok', 'bad-name')`);
      expect(rows).toHaveLength(0);
    });
  });

  describe('creating invoices', () => {
    it('a TON invoice asks for the price in its own currency, converted exactly, plus 2%', async () => {
      const buyer = await newUser(t, 'seed');
      clock.advance(1100); // let earlier rates go stale, so this test sees its own fetches
      const usdBefore = tonapi.requestsFor('USD');
      const rubBefore = tonapi.requestsFor('RUB');

      const usd = await order(buyer, {
        plan_name: 'monthly',
        currency: 'USD',
        provider: 'ton',
      }).expect(201);
      const nano = expectedNano(499, '2.5');
      expect(usd.body).toEqual({
        id: expect.any(String),
        user_id: buyer.user.id,
        plan_name: 'monthly',
        currency: 'USD',
        amount: nano,
        provider: 'ton',
        status: 'pending',
        created_at: expect.any(String),
        paid_at: null,
        payment: {
          address: WALLET.toString(),
          amount_nano: nano,
          comment: expect.stringMatching(/^inv-[0-9a-f]{12}$/),
          link: `ton://transfer/${WALLET.toString()}?amount=${nano}&text=${usd.body.payment.comment}`,
        },
      });

      const rub = await order(buyer, {
        plan_name: 'monthly',
        currency: 'RUB',
        provider: 'ton',
      }).expect(201);
      expect(rub.body.currency).toBe('RUB');
      expect(rub.body.amount).toBe(expectedNano(45000, '250.37'));
      expect(rub.body.payment.comment).not.toBe(usd.body.payment.comment);

      expect(tonapi.requestsFor('USD') - usdBefore).toBe(1);
      expect(tonapi.requestsFor('RUB') - rubBefore).toBe(1);
      const last = tonapi.requests[tonapi.requests.length - 1];
      expect(last.query).toEqual({ tokens: 'ton', currencies: 'rub' });

      const [row] = await t.dataSource.query(
        `SELECT amount, currency, provider, status, comment,
           extract(epoch FROM expires_at - created_at)::int AS ttl
         FROM invoices WHERE id = $1`,
        [usd.body.id],
      );
      expect(row).toMatchObject({
        amount: nano,
        currency: 'USD',
        provider: 'ton',
        status: 'pending',
        comment: usd.body.payment.comment,
      });
      expect(row.ttl).toBe(24 * 3600);
    });

    it('converts with exact arithmetic where floating point would be one nanoton off', async () => {
      const buyer = await newUser(t, 'seed');
      // 1.01 EUR at 1.02 EUR/TON, plus 2%, is exactly 1.01 TON; doubles give 1010000001.
      const res = await order(buyer, {
        plan_name: 'monthly',
        currency: 'EUR',
        provider: 'ton',
      }).expect(201);
      expect(res.body.amount).toBe('1010000000');
    });

    it('fetches a rate once within the cache window and again after it', async () => {
      // A buyer each: one buyer's repeated order is given its pending invoice, priced already.
      const buyers = await Promise.all([1, 2, 3, 4, 5].map(() => newUser(t, 'seed')));
      clock.advance(1100);
      const before = tonapi.requestsFor('USD');
      const body = { plan_name: 'monthly', currency: 'USD', provider: 'ton' };
      const burst = await Promise.all(buyers.slice(0, 3).map((buyer) => order(buyer, body)));
      expect(burst.map((r) => r.status)).toEqual([201, 201, 201]);
      await order(buyers[3], body).expect(201);
      expect(tonapi.requestsFor('USD') - before).toBe(1);

      clock.advance(1100);
      await order(buyers[4], body).expect(201);
      expect(tonapi.requestsFor('USD') - before).toBe(2);
    });

    it('a Telegram invoice costs the price in minor units and carries a Bot API invoice link', async () => {
      const buyer = await newUser(t, 'telegram');
      const ratesBefore = tonapi.requests.length;
      const res = await order(buyer, {
        plan_name: 'monthly',
        currency: 'USD',
        provider: 'telegram',
      }).expect(201);
      expect(res.body).toMatchObject({
        currency: 'USD',
        amount: '499',
        provider: 'telegram',
        status: 'pending',
        payment: { invoice_link: expect.stringMatching(/^https:\/\/t\.me\/\$/) },
      });
      expect(Object.keys(res.body.payment)).toEqual(['invoice_link']);
      const call = botApi.callsOf('createInvoiceLink').at(-1);
      expect(call?.token).toBe(BOT_TOKEN);
      expect(call?.body).toMatchObject({
        payload: res.body.id,
        provider_token: PROVIDER_TOKEN,
        currency: 'USD',
        prices: [{ label: 'monthly', amount: 499 }],
        title: expect.any(String),
        description: expect.any(String),
      });
      expect(tonapi.requests.length).toBe(ratesBefore);
    });

    it('bad orders are 4xx and write no invoice', async () => {
      const buyer = await newUser(t, 'seed');
      const cases: Record<string, unknown>[] = [
        { plan_name: 'nope', currency: 'USD', provider: 'ton' },
        { plan_name: 'hidden', currency: 'USD', provider: 'ton' },
        { plan_name: 'monthly', currency: 'ZZZ', provider: 'ton' },
        { plan_name: 'monthly', currency: 'usd', provider: 'ton' },
        { plan_name: 'monthly', currency: 'JPY', provider: 'ton' },
        { plan_name: 'monthly', currency: 'JPY', provider: 'telegram' },
        { plan_name: 'monthly', currency: 'TON', provider: 'telegram' },
        { plan_name: 'monthly', currency: 'USD', provider: 'paypal' },
        { plan_name: 'monthly', currency: 'USD' },
        { plan_name: 'Monthly!', currency: 'USD', provider: 'ton' },
        { plan_name: 'monthly', currency: 'USD', provider: 'ton', amount: '1' },
        { plan_name: 5, currency: 'USD', provider: 'ton' },
      ];
      for (const body of cases) {
        const res = await order(buyer, body);
        expect({ body, status: res.status, code: res.body.code }).toEqual({
          body,
          status: 400,
          code: 'VALIDATION_FAILED',
        });
      }
      await t.http().post('/api/v1/invoices').send(cases[0]).expect(401);
      expect(await countInvoices(buyer.user.id)).toBe(0);
    });

    it('rates upstream down and no fresh rate: 503 UPSTREAM_UNAVAILABLE, no invoice', async () => {
      const buyer = await newUser(t, 'seed');
      tonapi.down = true;
      try {
        clock.advance(1100);
        const res = await order(buyer, {
          plan_name: 'monthly',
          currency: 'GBP',
          provider: 'ton',
        }).expect(503);
        expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
      } finally {
        tonapi.down = false;
      }
      tonapi.rates.delete('GBP');
      const missing = await order(buyer, {
        plan_name: 'monthly',
        currency: 'GBP',
        provider: 'ton',
      }).expect(503);
      expect(missing.body.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(await countInvoices(buyer.user.id)).toBe(0);
    });

    it('a TON amount beyond the sanity cap is 503 and writes nothing', async () => {
      const buyer = await newUser(t, 'seed');
      const plan = { duration_days: 30, traffic_limit_bytes: 1, active: true };
      // 12 digits are accepted; at 2.5 USD/TON that is about 4.1e18 nanotons.
      await putPlan('pricey', { ...plan, prices: { USD: '999999999999' } }).expect(200);
      // A price stored before prices were bounded: its nanotons do not fit a bigint.
      await putPlan('legacy', { ...plan, prices: { USD: '1' } }).expect(200);
      await t.dataSource.query(
        `UPDATE plan_prices SET amount_minor = 999999999999999 WHERE plan_name = 'legacy'`,
      );
      const cases = [
        { plan_name: 'pricey', currency: 'USD', provider: 'ton' },
        { plan_name: 'legacy', currency: 'USD', provider: 'ton' },
        // 4.99 CHF at the glitched rate: about 5e19 nanotons.
        { plan_name: 'monthly', currency: 'CHF', provider: 'ton' },
      ];
      await putPlan('monthly', {
        ...plan,
        traffic_limit_bytes: 107374182400,
        prices: { USD: '499', RUB: '45000', EUR: '101', GBP: '399', CHF: '499' },
      }).expect(200);
      for (const body of cases) {
        const res = await order(buyer, body);
        expect({ body, status: res.status, code: res.body.code }).toEqual({
          body,
          status: 503,
          code: 'UPSTREAM_UNAVAILABLE',
        });
      }
      expect(await countInvoices(buyer.user.id)).toBe(0);
    });

    it('at most 10 pending invoices per user; the 11th is 409 without calling Telegram', async () => {
      const buyer = await newUser(t, 'telegram');
      const body = { plan_name: 'monthly', currency: 'USD', provider: 'telegram' };
      const made: string[] = [];
      for (let i = 0; i < 10; i += 1) made.push((await order(buyer, body).expect(201)).body.id);
      const links = botApi.callsOf('createInvoiceLink').length;

      const refused = await order(buyer, body).expect(409);
      expect(refused.body.code).toBe('CONFLICT');
      expect(refused.body.message).toMatch(/10 pending invoices/);
      await order(buyer, { ...body, provider: 'ton' }).expect(409);
      expect(botApi.callsOf('createInvoiceLink').length).toBe(links);
      expect(await countInvoices(buyer.user.id)).toBe(10);

      // Others are not held back, and an invoice that stops being pending frees a place.
      await order(await newUser(t, 'telegram'), body).expect(201);
      await t.dataSource.query(`UPDATE invoices SET status = 'expired' WHERE id = $1`, [made[0]]);
      await order(buyer, body).expect(201);
      await order(buyer, body).expect(409);
    });

    it('the pending cap holds for concurrent orders, checked before the Bot API is called', async () => {
      const buyer = await newUser(t, 'telegram');
      const body = { plan_name: 'monthly', currency: 'USD', provider: 'telegram' };
      const links = botApi.callsOf('createInvoiceLink').length;
      const results = await Promise.all(Array.from({ length: 25 }, () => order(buyer, body)));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(10);
      expect(statuses.filter((s) => s === 409)).toHaveLength(15);
      expect(await countInvoices(buyer.user.id)).toBe(10);
      // Only the ten that were made asked Telegram for a link.
      expect(botApi.callsOf('createInvoiceLink').length - links).toBe(10);
    });

    it('Bot API failing: 503 UPSTREAM_UNAVAILABLE, no invoice', async () => {
      const buyer = await newUser(t, 'telegram');
      botApi.answers.set('createInvoiceLink', () => ({
        error: { code: 400, description: 'Bad Request: CURRENCY_INVALID' },
      }));
      try {
        const res = await order(buyer, {
          plan_name: 'monthly',
          currency: 'USD',
          provider: 'telegram',
        }).expect(503);
        expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
      } finally {
        botApi.answers.delete('createInvoiceLink');
      }
      expect(await countInvoices(buyer.user.id)).toBe(0);
    });
  });

  describe('reading invoices', () => {
    it('lists own invoices newest first, paged; another user sees 404', async () => {
      const buyer = await newUser(t, 'seed');
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const res = await order(buyer, {
          plan_name: 'monthly',
          currency: 'USD',
          provider: 'telegram',
        }).expect(201);
        ids.push(res.body.id);
      }
      const first = await t.http().get('/api/v1/invoices?limit=2').set(buyer.bearer).expect(200);
      expect(first.body.items.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await t
        .http()
        .get('/api/v1/invoices')
        .query({ limit: 2, cursor: first.body.next_cursor })
        .set(buyer.bearer)
        .expect(200);
      expect(second.body).toEqual({
        items: [expect.objectContaining({ id: ids[0] })],
        next_cursor: null,
      });

      const one = await t.http().get(`/api/v1/invoices/${ids[0]}`).set(buyer.bearer).expect(200);
      expect(one.body).toEqual(second.body.items[0]);

      const stranger = await newUser(t, 'seed');
      const hidden = await t
        .http()
        .get(`/api/v1/invoices/${ids[0]}`)
        .set(stranger.bearer)
        .expect(404);
      expect(hidden.body.code).toBe('NOT_FOUND');
      const empty = await t.http().get('/api/v1/invoices').set(stranger.bearer).expect(200);
      expect(empty.body).toEqual({ items: [], next_cursor: null });

      for (const query of ['limit=0', 'limit=101', 'limit=x', 'cursor=bogus', 'other=1']) {
        const res = await t.http().get(`/api/v1/invoices?${query}`).set(buyer.bearer);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
      }
      await t.http().get('/api/v1/invoices/not-a-uuid').set(buyer.bearer).expect(400);
    });

    it('staff list every invoice, filtered by status and user', async () => {
      const buyer = await newUser(t, 'seed');
      const made = await order(buyer, {
        plan_name: 'monthly',
        currency: 'USD',
        provider: 'telegram',
      }).expect(201);
      const moderator = await newUser(t, 'moderator');
      const res = await t
        .http()
        .get('/api/v1/admin/invoices')
        .query({ user_id: buyer.user.id, status: 'pending' })
        .set(moderator.bearer)
        .expect(200);
      expect(res.body).toEqual({ items: [made.body], next_cursor: null });
      const paid = await t
        .http()
        .get('/api/v1/admin/invoices')
        .query({ user_id: buyer.user.id, status: 'paid' })
        .set(owner.bearer)
        .expect(200);
      expect(paid.body.items).toEqual([]);
      await t.http().get('/api/v1/admin/invoices?status=nope').set(owner.bearer).expect(400);
      await t.http().get('/api/v1/admin/invoices?user_id=nope').set(owner.bearer).expect(400);
      await t.http().get('/api/v1/admin/invoices').set(buyer.bearer).expect(403);
    });
  });

  it('the OpenAPI document shows the billing routes with the contract shapes', async () => {
    const doc = (await t.http().get('/api/v1/docs-json').expect(200)).body;
    for (const path of [
      '/api/v1/plans',
      '/api/v1/admin/plans/{name}',
      '/api/v1/invoices',
      '/api/v1/invoices/{id}',
      '/api/v1/invoices/{id}/confirm',
      '/api/v1/admin/invoices',
      '/api/v1/users/me/trial',
    ]) {
      expect(doc.paths[path]).toBeDefined();
    }
    const invoice = doc.components.schemas.InvoiceResponse;
    expect(Object.keys(invoice.properties).sort()).toEqual(
      [
        'id',
        'user_id',
        'plan_name',
        'currency',
        'amount',
        'provider',
        'status',
        'created_at',
        'paid_at',
        'payment',
      ].sort(),
    );
    expect(Object.keys(doc.components.schemas.TonPaymentView.properties).sort()).toEqual([
      'address',
      'amount_nano',
      'comment',
      'link',
    ]);
    expect(Object.keys(doc.components.schemas.ConfirmationResponse.properties).sort()).toEqual([
      'invoice',
      'subscription',
    ]);
  });

  describe('trial', () => {
    const trial = (user: TestUser) => t.http().post('/api/v1/users/me/trial').set(user.bearer);

    it('is for Telegram accounts only', async () => {
      for (const kind of ['seed', 'owner'] as const) {
        const user = await newUser(t, kind);
        const res = await trial(user).expect(403);
        expect(res.body.code).toBe('TRIAL_TELEGRAM_ONLY');
        const [row] = await t.dataSource.query(
          `SELECT trial_used_at, plan_name FROM users WHERE id = $1`,
          [user.user.id],
        );
        expect(row).toEqual({ trial_used_at: null, plan_name: null });
      }
    });

    it('gives TRIAL_DAYS once per account, even to concurrent requests', async () => {
      const user = await newUser(t, 'telegram', { trafficUsedBytes: '777' });
      const started = Date.now();
      const results = await Promise.all(Array.from({ length: 10 }, () => trial(user)));
      const ok = results.filter((r) => r.status === 200);
      expect(ok).toHaveLength(1);
      expect(
        results.filter((r) => r.status === 409).every((r) => r.body.code === 'TRIAL_USED'),
      ).toBe(true);
      expect(results.filter((r) => r.status === 409)).toHaveLength(9);
      expect(ok[0].body).toEqual({
        plan_name: 'trial',
        expires_at: expect.any(String),
        active: true,
        starts_at: expect.any(String),
        waiting_first_use: false,
      });
      const expires = Date.parse(ok[0].body.expires_at);
      expect(expires - started).toBeGreaterThan(3 * 86_400_000 - 60_000);
      expect(expires - started).toBeLessThan(3 * 86_400_000 + 60_000);

      const me = await t.http().get('/api/v1/users/me').set(user.bearer).expect(200);
      expect(me.body.subscription).toEqual(ok[0].body);
      expect(me.body.traffic.used_bytes).toBe(0);

      const again = await trial(user).expect(409);
      expect(again.body.code).toBe('TRIAL_USED');
    });
  });
});
