import { type ShopWorld, startShopWorld } from './fakes/bot-shop';

const DAY = 86_400_000;

describe('bot: Telegram Stars, and charges that cannot be credited', () => {
  let shop: ShopWorld;

  beforeAll(async () => {
    shop = await startShopWorld();
  });
  afterAll(() => shop.w.close());

  it('Stars: XTR invoice with an empty provider token; a second charge is refunded once', async () => {
    const from = shop.w.user();
    await shop.choose(from, 'monthly', /Stars/);
    const sent = shop.w.sentTo(from.id, 'sendInvoice').at(-1)!.body as Record<string, unknown>;
    expect(sent).toMatchObject({ currency: 'XTR', provider_token: '', prices: [{ amount: 250 }] });
    const payload = sent.payload as string;
    expect(await shop.preCheckout(from, payload, 'XTR', 250)).toMatchObject({ ok: true });

    await shop.w.send(shop.paymentUpdate(from, payload, 'XTR', 250));
    const paidUntil = await shop.expiry(from.id);
    expect(paidUntil).not.toBeNull();

    const duplicate = shop.paymentUpdate(from, payload, 'XTR', 250);
    await shop.w.send(duplicate);
    await shop.w.send(duplicate);
    expect(await shop.expiry(from.id)).toBe(paidUntil);
    const refunds = shop.w.botApi.callsOf('refundStarPayment');
    expect(refunds.map((c) => c.body)).toEqual([
      {
        user_id: from.id,
        telegram_payment_charge_id: duplicate.message.successful_payment.telegram_payment_charge_id,
      },
    ]);
    expect(shop.text(shop.w.sentTo(from.id, 'sendMessage').at(-1)!)).toContain('has been refunded');
  });

  it('a charge of another amount than the invoice is not credited, but refunded', async () => {
    const from = shop.w.user();
    await shop.choose(from, 'monthly', /Stars/);
    const payload = (shop.w.sentTo(from.id, 'sendInvoice').at(-1)!.body as { payload: string })
      .payload;
    const short = shop.paymentUpdate(from, payload, 'XTR', 1);
    await shop.w.send(short);
    expect(await shop.expiry(from.id)).toBeNull();
    const [invoice] = await shop.w.t.dataSource.query(`SELECT status FROM invoices WHERE id = $1`, [
      payload,
    ]);
    expect(invoice.status).toBe('pending');
    expect(shop.w.botApi.callsOf('refundStarPayment').at(-1)?.body).toEqual({
      user_id: from.id,
      telegram_payment_charge_id: short.message.successful_payment.telegram_payment_charge_id,
    });
  });

  it('two different charges for one invoice at once: one is credited, the other refunded', async () => {
    const from = shop.w.user();
    await shop.choose(from, 'monthly', /Stars/);
    const payload = (shop.w.sentTo(from.id, 'sendInvoice').at(-1)!.body as { payload: string })
      .payload;
    const refundsBefore = shop.w.botApi.callsOf('refundStarPayment').length;
    const before = Date.now();
    await Promise.all([
      shop.w.send(shop.paymentUpdate(from, payload, 'XTR', 250)),
      shop.w.send(shop.paymentUpdate(from, payload, 'XTR', 250)),
      shop.w.send(shop.paymentUpdate(from, payload, 'XTR', 250)),
    ]);
    const until = (await shop.expiry(from.id))!;
    expect(until).toBeGreaterThanOrEqual(before + 30 * DAY - 1000);
    expect(until).toBeLessThan(before + 31 * DAY);
    expect(shop.w.botApi.callsOf('refundStarPayment').length - refundsBefore).toBe(2);
    const [counts] = await shop.w.t.dataSource.query(
      `SELECT count(*) FILTER (WHERE refunded_at IS NOT NULL)::int AS refunded,
              count(*) FILTER (WHERE duplicate_at IS NULL)::int AS credited
       FROM telegram_payments WHERE invoice_id = $1`,
      [payload],
    );
    expect(counts).toEqual({ refunded: 2, credited: 1 });
  });
});
