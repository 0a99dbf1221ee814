import { type ShopWorld, startShopWorld } from './fakes/bot-shop';
import { PROVIDER_TOKEN, WALLET } from './fakes/billing';
import { tonTransaction } from './fakes/toncenter';
import { newUser } from './harness/factories';

const DAY = 86_400_000;

describe('bot: buying through the menus it sends', () => {
  let shop: ShopWorld;

  beforeAll(async () => {
    shop = await startShopWorld();
  });
  afterAll(() => shop.w.close());

  it('offers TON, card per fiat price and Stars; card sends an invoice with payload, currency, amount and token', async () => {
    const from = shop.w.user();
    const methods = await shop.methodsOf(from, 'monthly');
    expect(methods.map((b) => [b.text, b.callback_data])).toEqual([
      ['TON (priced in USD)', 'v1:buy:monthly:ton-USD'],
      ['Card · 4.99 USD', 'v1:buy:monthly:card-USD'],
      ['Card · 450 RUB', 'v1:buy:monthly:card-RUB'],
      ['Telegram Stars · 250', 'v1:buy:monthly:stars'],
      ['Back', 'v1:plans:back'],
    ]);
    expect((await shop.methodsOf(from, 'fiat-only')).map((b) => b.callback_data)).not.toContain(
      'v1:buy:fiat-only:stars',
    );

    await shop.choose(from, 'monthly', /^Card · 4\.99 USD$/);
    const sent = shop.w.sentTo(from.id, 'sendInvoice').at(-1)!.body as Record<string, unknown>;
    const [invoice] = await shop.w.t.dataSource.query(
      `SELECT i.id, i.amount, i.currency, i.provider, i.status FROM invoices i
       JOIN users u ON u.id = i.user_id WHERE u.tg_id = $1`,
      [from.id],
    );
    expect(invoice).toMatchObject({ amount: '499', currency: 'USD', provider: 'telegram' });
    expect(sent).toMatchObject({
      payload: invoice.id,
      currency: 'USD',
      provider_token: PROVIDER_TOKEN,
      prices: [{ label: 'Plan monthly', amount: 499 }],
    });
  });

  it('pre_checkout_query: ok for the right invoice only, with a reason the user can read', async () => {
    const from = shop.w.user();
    const stranger = shop.w.user('ru');
    await shop.w.start(stranger);
    await shop.choose(from, 'monthly', /RUB/);
    const payload = (shop.w.sentTo(from.id, 'sendInvoice').at(-1)!.body as { payload: string })
      .payload;

    expect(await shop.preCheckout(from, payload, 'RUB', 45000)).toMatchObject({ ok: true });
    const wrongAmount = await shop.preCheckout(from, payload, 'RUB', 100);
    expect(wrongAmount).toMatchObject({ ok: false });
    expect(wrongAmount.error_message).toContain('price of this invoice has changed');
    expect(await shop.preCheckout(from, payload, 'USD', 45000)).toMatchObject({ ok: false });
    const otherUser = await shop.preCheckout(stranger, payload, 'RUB', 45000);
    expect(otherUser).toMatchObject({ ok: false });
    expect(otherUser.error_message).toBe('Этот счёт не ваш или не существует.');
    expect(await shop.preCheckout(from, 'not-an-invoice', 'RUB', 45000)).toMatchObject({
      ok: false,
    });
  });

  it('successful_payment activates once: the same update again, racing or later, and a second charge extend nothing', async () => {
    const from = shop.w.user();
    await shop.choose(from, 'monthly', /USD$/);
    const payload = (shop.w.sentTo(from.id, 'sendInvoice').at(-1)!.body as { payload: string })
      .payload;
    const update = shop.paymentUpdate(from, payload, 'USD', 499);

    const before = Date.now();
    const answers = await Promise.all([shop.w.send(update), shop.w.send(update)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const paidUntil = await shop.expiry(from.id);
    expect(paidUntil).toBeGreaterThanOrEqual(before + 30 * DAY - 1000);
    expect(paidUntil).toBeLessThanOrEqual(Date.now() + 30 * DAY);
    expect(shop.text(shop.w.sentTo(from.id, 'sendMessage').at(-1)!)).toMatch(/^Payment received\./);

    await shop.w.send(update);
    const second = shop.paymentUpdate(from, payload, 'USD', 499);
    await shop.w.send(second);
    expect(await shop.expiry(from.id)).toBe(paidUntil);
    const charges = await shop.w.t.dataSource.query(
      `SELECT telegram_payment_charge_id AS id, duplicate_at, refunded_at FROM telegram_payments
       WHERE invoice_id = $1 ORDER BY created_at`,
      [payload],
    );
    expect(charges).toHaveLength(2);
    expect(charges[0].duplicate_at).toBeNull();
    expect(charges[1].duplicate_at).not.toBeNull();
    expect(charges[1].refunded_at).toBeNull();
    expect(shop.w.botApi.callsOf('refundStarPayment')).toEqual([]);
    expect(shop.text(shop.w.sentTo(from.id, 'sendMessage').at(-1)!)).toContain(
      'Our staff will refund it',
    );
  });

  it('TON: amount, address, comment and link, and "I paid" confirms through the one confirmation', async () => {
    const from = shop.w.user();
    await shop.choose(from, 'monthly', /^TON/);
    const message = shop.w.sentTo(from.id, 'sendMessage').at(-1)!;
    const [invoice] = await shop.w.t.dataSource.query(
      `SELECT i.id, i.amount, i.comment, i.payment FROM invoices i JOIN users u ON u.id = i.user_id
       WHERE u.tg_id = $1 AND i.provider = 'ton'`,
      [from.id],
    );
    // 4.99 USD at 5 USD per TON, plus 2%: 1.01796 TON.
    expect(invoice.amount).toBe('1017960000');
    expect(shop.text(message)).toContain('Send 1.01796 TON to');
    expect(shop.text(message)).toContain(invoice.payment.address);
    expect(shop.text(message)).toContain(invoice.comment);
    expect(shop.text(message)).toContain(invoice.payment.link);
    expect(invoice.payment.link).toMatch(/^ton:\/\/transfer\//);
    const [paid] = shop.w.buttons(message);
    expect(paid.callback_data).toBe(`v1:paid:${invoice.id}`);

    await shop.w.press(from, paid.callback_data!);
    expect(shop.text(shop.w.sentTo(from.id, 'sendMessage').at(-1)!)).toContain(
      'not seen your payment',
    );

    shop.w.toncenter.transactions.push(
      tonTransaction({
        to: WALLET.toRawString(),
        value: invoice.amount,
        comment: invoice.comment,
      }),
    );
    shop.clock.advance(10_000);
    await shop.w.press(from, paid.callback_data!);
    expect(shop.text(shop.w.sentTo(from.id, 'sendMessage').at(-1)!)).toMatch(
      /^Paid\. Your monthly/,
    );
    await shop.w.press(from, paid.callback_data!);
    expect(shop.text(shop.w.sentTo(from.id, 'sendMessage').at(-1)!)).toBe(
      'This invoice is paid already.',
    );
  });

  it('XTR is a plan price for the telegram provider only', async () => {
    const buyer = await newUser(shop.w.t, 'telegram');
    const ton = await shop.w.t
      .http()
      .post('/api/v1/invoices')
      .set(buyer.bearer)
      .send({ plan_name: 'monthly', currency: 'XTR', provider: 'ton' })
      .expect(400);
    expect(ton.body.code).toBe('VALIDATION_FAILED');
    const stars = await shop.w.t
      .http()
      .post('/api/v1/invoices')
      .set(buyer.bearer)
      .send({ plan_name: 'monthly', currency: 'XTR', provider: 'telegram' })
      .expect(201);
    expect(stars.body).toMatchObject({ currency: 'XTR', amount: '250' });
    expect(shop.w.botApi.callsOf('createInvoiceLink').at(-1)?.body).toMatchObject({
      currency: 'XTR',
      provider_token: '',
    });
  });

  it('a button whose work fails is still answered, with a reason the user can act on', async () => {
    const from = shop.w.user();
    shop.w.botApi.answers.set('createInvoiceLink', () => ({
      error: { code: 400, description: 'Bad Request: PAYMENT_PROVIDER_INVALID' },
    }));
    try {
      await shop.choose(from, 'monthly', /^Card · 4\.99 USD$/);
    } finally {
      shop.w.botApi.answers.delete('createInvoiceLink');
    }
    expect(shop.w.botApi.callsOf('answerCallbackQuery').at(-1)?.body).toMatchObject({
      text: 'Payments are not available right now. Please try again later.',
      show_alert: true,
    });
    expect(shop.w.sentTo(from.id, 'sendInvoice')).toEqual([]);
  });

  it('every callback query is answered, also a stale button', async () => {
    const from = shop.w.user();
    await shop.w.start(from);
    const before = shop.w.botApi.callsOf('answerCallbackQuery').length;
    await shop.w.press(from, 'v0:something-old');
    const answers = shop.w.botApi.callsOf('answerCallbackQuery');
    expect(answers.length).toBe(before + 1);
    expect(answers.at(-1)?.body).toMatchObject({ text: expect.stringContaining('out of date') });
  });

  it('names a plan in the user’s language where it has a display name, else by its slug', async () => {
    const owner = await newUser(shop.w.t, 'owner');
    await shop.w.t
      .http()
      .put('/api/v1/admin/plans/quarter')
      .set(owner.bearer)
      .send({
        duration_days: 90,
        traffic_limit_bytes: 1024,
        prices: { USD: '1299' },
        active: true,
        display: { ru: { name: 'Квартал', description: '90 дней' } },
      })
      .expect(200);
    const planButtons = async (from: ReturnType<typeof shop.w.user>) => {
      await shop.w.start(from);
      await shop.w.press(from, 'v1:plans');
      return shop.w.buttons(shop.w.sentTo(from.id, 'sendMessage').at(-1)!);
    };

    const russian = shop.w.user('ru');
    const buttons = await planButtons(russian);
    expect(buttons.map((b) => b.text)).toContain('Квартал · 90 дн.');
    expect(buttons.map((b) => b.text)).toContain('monthly · 30 дн.');
    await shop.w.press(russian, 'v1:plan:quarter');
    expect(
      (shop.w.sentTo(russian.id, 'editMessageText').at(-1)!.body as { text: string }).text,
    ).toMatch(/^Тариф Квартал: 90 дн\./);

    const english = shop.w.user('en');
    expect((await planButtons(english)).map((b) => b.text)).toContain('quarter · 90 days');
  });
});
