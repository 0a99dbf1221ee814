import { type BotWorld, startBotWorld, WEBHOOK_SECRET, APP_URL } from './fakes/bot';
import { Metrics } from '../src/metrics/metrics.service';
import { newUser } from './harness/factories';
import { metricValue, parseMetrics } from './harness/metrics';

describe('bot: webhook, /start branches, bootstrap links', () => {
  let w: BotWorld;

  beforeAll(async () => {
    w = await startBotWorld();
  });
  afterAll(() => w.close());

  const userRow = async (tgId: number) => {
    const [row] = await w.t.dataSource.query(
      `SELECT id, referred_by_user_id, referred_by_partner_id FROM users WHERE tg_id = $1`,
      [tgId],
    );
    return row as
      | { id: string; referred_by_user_id: string | null; referred_by_partner_id: string | null }
      | undefined;
  };

  it('registers the webhook with its secret and the update kinds it handles', async () => {
    await waitFor(() => w.botApi.callsOf('setWebhook').length > 0);
    expect(w.botApi.callsOf('setWebhook')[0].body).toEqual({
      url: 'https://api.example.test/api/v1/bot/webhook',
      secret_token: WEBHOOK_SECRET,
      allowed_updates: ['message', 'callback_query', 'pre_checkout_query', 'my_chat_member'],
    });
  });

  it('refuses a missing or wrong secret with 401 and handles nothing', async () => {
    const from = w.user();
    const update = {
      update_id: w.nextUpdateId(),
      message: {
        message_id: 1,
        date: 1,
        chat: { id: from.id, type: 'private' },
        from,
        text: '/start',
        entities: [{ type: 'bot_command', offset: 0, length: 6 }],
      },
    };
    const missing = await w.t.http().post('/api/v1/bot/webhook').send(update);
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('UNAUTHENTICATED');
    const wrong = await w.t
      .http()
      .post('/api/v1/bot/webhook')
      .set('X-Telegram-Bot-Api-Secret-Token', `${WEBHOOK_SECRET}x`)
      .send(update);
    expect(wrong.status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await userRow(from.id)).toBeUndefined();
    expect(w.sentTo(from.id)).toEqual([]);
  });

  it('/start creates the account and answers with three fresh single-use links', async () => {
    const from = w.user();
    expect((await w.start(from)).status).toBe(200);
    const account = await userRow(from.id);
    expect(account).toBeDefined();

    const [welcome] = w.sentTo(from.id, 'sendMessage');
    const links = w.buttons(welcome).filter((b) => b.url);
    expect(links.map((b) => new URL(b.url as string).pathname)).toEqual([
      '/account',
      '/plans',
      '/syndicate',
    ]);
    for (const link of links) expect(link.url?.startsWith(`${APP_URL}/`)).toBe(true);
    const tokens = links.map((b) => new URL(b.url as string).searchParams.get('bootstrap'));
    expect(new Set(tokens).size).toBe(3);

    await w.start(from);
    const second = w.sentTo(from.id, 'sendMessage')[1];
    const again = w
      .buttons(second)
      .filter((b) => b.url)
      .map((b) => new URL(b.url as string).searchParams.get('bootstrap'));
    expect(again.filter((token) => tokens.includes(token))).toEqual([]);

    const exchanged = await w.t
      .http()
      .post('/api/v1/auth/exchange')
      .send({ bootstrap_token: tokens[0] })
      .expect(200);
    expect(exchanged.body.user.id).toBe(account?.id);
    expect(exchanged.body.user.tg_id).toBe(from.id);
    const reused = await w.t
      .http()
      .post('/api/v1/auth/exchange')
      .send({ bootstrap_token: tokens[0] })
      .expect(401);
    expect(reused.body.code).toBe('BOOTSTRAP_INVALID');
  });

  it('/start <tg_id>: the referrer is recorded once, never oneself, only before a first payment', async () => {
    const referrer = w.user();
    const other = w.user();
    await w.start(referrer);
    await w.start(other);
    const [referrerRow, otherRow] = [await userRow(referrer.id), await userRow(other.id)];

    const newcomer = w.user();
    await w.start(newcomer, String(referrer.id));
    expect((await userRow(newcomer.id))?.referred_by_user_id).toBe(referrerRow?.id);
    // First wins: a second referral link changes nothing.
    await w.start(newcomer, String(other.id));
    expect((await userRow(newcomer.id))?.referred_by_user_id).toBe(referrerRow?.id);

    const self = w.user();
    await w.start(self, String(self.id));
    expect((await userRow(self.id))?.referred_by_user_id).toBeNull();

    // An account that has paid already keeps having no referrer.
    const payer = w.user();
    await w.start(payer);
    const payerRow = await userRow(payer.id);
    await w.t.dataSource.query(
      `INSERT INTO plans (name, duration_days, traffic_limit_bytes) VALUES ('ref-plan', 30, 0)
       ON CONFLICT DO NOTHING`,
    );
    await w.t.dataSource.query(
      `INSERT INTO invoices (id, user_id, plan_name, currency, amount, provider, status, payment, expires_at)
       VALUES (gen_random_uuid(), $1, 'ref-plan', 'USD', 100, 'telegram', 'paid', '{}', now())`,
      [payerRow?.id],
    );
    await w.start(payer, String(other.id));
    expect((await userRow(payer.id))?.referred_by_user_id).toBeNull();
    expect(otherRow).toBeDefined();
  });

  it('/start p_<code> attaches to the partner, first wins, before the numeric referral branch', async () => {
    // A partner whose code is all digits, and a Telegram user whose id is those same digits.
    const digits = String(900_000_000 + Math.floor(Math.random() * 1e6));
    const numeric = await newUser(w.t, 'partner', { partnerCode: digits });
    const lookalike = { ...w.user(), id: Number(digits) };
    await w.start(lookalike);
    const other = await newUser(w.t, 'partner');

    const buyer = w.user();
    await w.start(buyer, `p_${digits}`);
    const row = await userRow(buyer.id);
    expect(row?.referred_by_partner_id).toBe(numeric.user.id);
    expect(row?.referred_by_user_id).toBeNull();
    expect(w.sentTo(buyer.id, 'sendMessage')[0].body).toMatchObject({
      text: expect.stringContaining(`You are now with the partner ${digits}.`),
    });

    // The same partner again changes nothing; another partner does not take over.
    await w.start(buyer, `p_${digits}`);
    await w.start(buyer, `p_${other.user.partnerCode}`);
    expect((await userRow(buyer.id))?.referred_by_partner_id).toBe(numeric.user.id);
    const texts = w.sentTo(buyer.id, 'sendMessage').map((c) => (c.body as { text: string }).text);
    expect(texts[1]).toContain('You are with this partner already.');
    expect(texts[2]).toContain('You are with another partner already');

    const stray = w.user('ru');
    await w.start(stray, 'p_no-such-code');
    expect((await userRow(stray.id))?.referred_by_partner_id).toBeNull();
    expect((w.sentTo(stray.id, 'sendMessage')[0].body as { text: string }).text).toContain(
      'Эта партнёрская ссылка недействительна.',
    );
  });

  it('a 429 from Telegram is retried after its retry_after, and the reply arrives', async () => {
    const from = w.user();
    let refused = 0;
    w.botApi.answers.set('sendMessage', (call) => {
      if ((call.body as { chat_id: number }).chat_id !== from.id || refused > 0) return undefined;
      refused += 1;
      return {
        error: { code: 429, description: 'Too Many Requests: retry after 1', retryAfter: 1 },
      };
    });
    try {
      const began = Date.now();
      expect((await w.start(from)).status).toBe(200);
      expect(Date.now() - began).toBeGreaterThanOrEqual(1000);
    } finally {
      w.botApi.answers.delete('sendMessage');
    }
    const attempts = w.sentTo(from.id, 'sendMessage');
    expect(attempts).toHaveLength(2);
    expect(attempts[1].body).toEqual(attempts[0].body);
  });

  it('an account that blocks the bot is marked unreachable; writing again clears it', async () => {
    const from = w.user();
    await w.start(from);
    const member = (status: string) => ({
      update_id: w.nextUpdateId(),
      my_chat_member: {
        chat: { id: from.id, type: 'private' },
        from,
        date: Math.floor(Date.now() / 1000),
        old_chat_member: { user: { id: 1, is_bot: true, first_name: 'Shop' }, status: 'member' },
        new_chat_member: { user: { id: 1, is_bot: true, first_name: 'Shop' }, status },
      },
    });
    const unreachable = async () =>
      (
        await w.t.dataSource.query(`SELECT unreachable_at FROM bot_chats WHERE tg_id = $1`, [
          from.id,
        ])
      )[0].unreachable_at as Date | null;
    expect(await unreachable()).toBeNull();
    await w.send(member('kicked'));
    expect(await unreachable()).not.toBeNull();
    await w.start(from);
    expect(await unreachable()).toBeNull();
  });

  it('an update that fails is logged, counted, and the bot goes on with the next one', async () => {
    const updates = async (result: string) =>
      metricValue(
        parseMetrics(await w.t.app.get(Metrics).registry.metrics()),
        'vpn_bot_updates_total',
        { result },
      );
    const [failedBefore, handledBefore] = [await updates('failed'), await updates('handled')];
    const from = w.user();
    w.botApi.answers.set('sendMessage', () => ({
      error: { code: 400, description: 'Bad Request' },
    }));
    try {
      expect((await w.start(from)).status).toBe(200);
    } finally {
      w.botApi.answers.delete('sendMessage');
    }
    expect(await updates('failed')).toBe(failedBefore + 1);
    expect((await w.start(from)).status).toBe(200);
    expect(w.sentTo(from.id, 'sendMessage').length).toBeGreaterThanOrEqual(2);
    expect(await updates('handled')).toBe(handledBefore + 1);
    expect(await updates('failed')).toBe(failedBefore + 1);
  });
});

export async function waitFor(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
