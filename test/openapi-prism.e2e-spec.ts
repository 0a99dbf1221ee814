import { randomUUID } from 'node:crypto';
import { ReconciliationService } from '../src/billing/reconciliation.service';
import { WALLET } from './fakes/billing';
import { startBotWorld, type BotWorld, WEBHOOK_SECRET } from './fakes/bot';
import { controlClock, type ControlledClock } from './fakes/clock';
import { tonTransaction } from './fakes/toncenter';
import { TRUSTED_ORIGIN, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { closedPort, nodeBody } from './harness/nodes';
import { startPrismProxy, type PrismProxy, type ProxiedAnswer } from './harness/prism';

/** How long the service reuses one look at toncenter (the contract's 5 s). */
const TX_CACHE_MS = 5_000;

type Headers = Record<string, string>;
interface Invoice {
  id: string;
  amount: string;
  payment: { comment: string };
}

/**
 * The service behind Prism's validating proxy, with the document the service serves: a client's
 * usual flow, and an error answer of each status, must find no request or answer that the
 * document does not describe (a renamed field, a null where the document says never, an
 * undocumented status or error code, a credential the document does not name).
 */
describe('the OpenAPI document under a validating proxy (Prism)', () => {
  let world: BotWorld;
  let t: TestApp;
  let prism: PrismProxy;
  let owner: TestUser;
  let clock: ControlledClock;
  /** Signed up through the proxy: its cookies and its Bearer token. */
  let cookie: Headers;
  let bearer: Headers;
  let userId: string;
  const seen = new Set<number>();

  /** A call through the proxy that must answer `status` with nothing Prism objects to. */
  const call = async (
    method: string,
    path: string,
    status: number,
    options: { headers?: Headers; body?: unknown } = {},
  ): Promise<ProxiedAnswer> => {
    const answer = await prism.call(method, `/api/v1${path}`, options);
    expect({
      route: `${method} ${path}`,
      status: answer.status,
      violations: answer.violations,
    }).toEqual({ route: `${method} ${path}`, status, violations: [] });
    seen.add(answer.status);
    return answer;
  };
  const codeOf = (answer: ProxiedAnswer) => (answer.body as { code?: string }).code;

  /** Our wallet receives the invoice's amount with its comment; the service's cached look expires. */
  const payOnChain = (invoice: Invoice) => {
    world.toncenter.transactions.push(
      tonTransaction({
        to: WALLET.toRawString().toUpperCase(),
        value: invoice.amount,
        comment: invoice.payment.comment,
      }),
    );
    clock.advance(TX_CACHE_MS);
  };

  beforeAll(async () => {
    world = await startBotWorld({ USD: '2.5' }, { BOT_USERNAME: 'vpn_test_bot' });
    t = world.t;
    const served = await t.http().get('/api/v1/docs-json').expect(200);
    prism = await startPrismProxy(served.body, t.baseUrl);
    owner = await newUser(t, 'owner');
    clock = controlClock(t);
  }, 60_000);
  afterAll(async () => {
    await prism?.close();
    await world?.close();
  });

  it('public routes and a seed sign-up; /users/me by cookie and by Bearer', async () => {
    await call('GET', '/config', 200);
    await call('GET', '/health', 200);
    await call('GET', '/game/leaderboard', 200);
    const signup = await call('POST', '/auth/seed', 201);
    const body = signup.body as { seed: string; access_token: string; user: { id: string } };
    // Prism passes the two Set-Cookie lines on as one, joined by a comma.
    const cookies = signup.headers
      .getSetCookie()
      .flatMap((line) => line.split(/,\s*(?=[A-Za-z_]+=)/))
      .map((line) => line.split(';')[0])
      .join('; ');
    expect(cookies).toMatch(/access_token=.+; refresh_token=.+/);
    cookie = { Cookie: cookies, Origin: TRUSTED_ORIGIN };
    bearer = { Authorization: `Bearer ${body.access_token}` };
    userId = body.user.id;

    const byCookie = await call('GET', '/users/me', 200, { headers: cookie });
    const byBearer = await call('GET', '/users/me', 200, { headers: bearer });
    expect(byCookie.body).toEqual(byBearer.body);
    expect(byBearer.body).toMatchObject({ id: body.user.id, role: null, subscription: null });

    const login = await call('POST', '/auth/seed/login', 200, { body: { seed: body.seed } });
    expect((login.body as { user: { id: string } }).user.id).toBe(body.user.id);
    await call('POST', '/auth/refresh', 200, { headers: cookie });
  });

  it('sign-in by the bot: a login code, the webhook, the poll and the bootstrap exchange', async () => {
    const created = await call('POST', '/auth/bot/login-codes', 201);
    const code = created.body as { code: string; poll_secret: string };
    const poll = (status: number, pollSecret = code.poll_secret) =>
      call('POST', `/auth/bot/login-codes/${code.code}/poll`, status, {
        body: { poll_secret: pollSecret },
      });
    expect((await poll(200)).body).toEqual({ status: 'pending' });
    expect(codeOf(await poll(404, 'not-the-secret'))).toBe('NOT_FOUND');

    const from = world.user();
    const update = () => ({
      update_id: world.nextUpdateId(),
      message: {
        message_id: world.nextUpdateId(),
        date: Math.floor(Date.now() / 1000),
        chat: { id: from.id, type: 'private', first_name: from.first_name },
        from,
        text: `/start login_${code.code}`,
        entities: [{ type: 'bot_command', offset: 0, length: 6 }],
      },
    });
    const wrong = await call('POST', '/bot/webhook', 401, {
      headers: { 'X-Telegram-Bot-Api-Secret-Token': `${WEBHOOK_SECRET}x` },
      body: update(),
    });
    expect(codeOf(wrong)).toBe('UNAUTHENTICATED');
    await call('POST', '/bot/webhook', 200, {
      headers: { 'X-Telegram-Bot-Api-Secret-Token': WEBHOOK_SECRET },
      body: update(),
    });
    const prompt = world.sentTo(from.id, 'sendMessage').at(-1);
    const [confirm] = world.buttons(prompt!);
    expect((await world.press(from, confirm.callback_data as string)).status).toBe(200);

    const confirmed = (await poll(200)).body as { status: string; bootstrap_token: string };
    expect(confirmed.status).toBe('confirmed');
    const exchanged = await call('POST', '/auth/exchange', 200, {
      body: { bootstrap_token: confirmed.bootstrap_token },
    });
    expect(exchanged.body).toMatchObject({ user: { tg_id: from.id, subscription: null } });
    const again = await call('POST', '/auth/exchange', 401, {
      body: { bootstrap_token: confirmed.bootstrap_token },
    });
    expect(codeOf(again)).toBe('BOOTSTRAP_INVALID');
  });

  it('a plan, invoices with TON and Telegram, a confirm that fails and one that succeeds', async () => {
    const plan = {
      duration_days: 30,
      traffic_limit_bytes: 107374182400,
      prices: { USD: '499' },
      active: true,
    };
    await call('PUT', '/admin/plans/monthly', 200, { headers: owner.bearer, body: plan });
    await call('GET', '/plans', 200);

    const order = (provider: string) =>
      call('POST', '/invoices', 201, {
        headers: cookie,
        body: { plan_name: 'monthly', currency: 'USD', provider },
      });
    const ton = (await order('ton')).body as Invoice;
    const telegram = (await order('telegram')).body as Invoice;
    await call('GET', '/invoices', 200, { headers: bearer });
    await call('GET', `/invoices/${telegram.id}`, 200, { headers: bearer });

    const unpaid = await call('POST', `/invoices/${ton.id}/confirm`, 409, { headers: bearer });
    expect(codeOf(unpaid)).toBe('PAYMENT_NOT_FOUND');
    payOnChain(ton);
    const paid = await call('POST', `/invoices/${ton.id}/confirm`, 200, { headers: cookie });
    expect(paid.body).toMatchObject({ invoice: { status: 'paid' } });
    const again = await call('POST', `/invoices/${ton.id}/confirm`, 409, { headers: bearer });
    expect(codeOf(again)).toBe('INVOICE_NOT_PENDING');

    const me = await call('GET', '/users/me', 200, { headers: bearer });
    expect(me.body).toMatchObject({ subscription: { plan_name: 'monthly', active: true } });
    await call('GET', '/admin/invoices', 200, { headers: owner.bearer });
  });

  it('money that paid no invoice: listed for staff, then attached to an invoice once', async () => {
    const order = await call('POST', '/invoices', 201, {
      headers: cookie,
      body: { plan_name: 'monthly', currency: 'USD', provider: 'ton' },
    });
    const invoice = order.body as Invoice;
    world.toncenter.transactions.push(
      tonTransaction({
        to: WALLET.toRawString().toUpperCase(),
        value: invoice.amount,
        comment: 'a comment no invoice has',
      }),
    );
    clock.advance(TX_CACHE_MS);
    await t.app.get(ReconciliationService).reconcile();

    const list = await call('GET', '/admin/payments/unmatched', 200, { headers: owner.bearer });
    const [stray] = (list.body as { items: { tx_ref: string; reason: string }[] }).items;
    expect(stray.reason).toBe('no_invoice');
    const unknown = await call('POST', `/admin/invoices/${invoice.id}/attach-payment`, 404, {
      headers: owner.bearer,
      body: { tx_ref: 'not-a-payment-we-have' },
    });
    expect(codeOf(unknown)).toBe('NOT_FOUND');
    const attached = await call('POST', `/admin/invoices/${invoice.id}/attach-payment`, 200, {
      headers: owner.bearer,
      body: { tx_ref: stray.tx_ref },
    });
    expect(attached.body).toMatchObject({ invoice: { id: invoice.id, status: 'paid' } });
    // A payment attaches once: used, it is no longer one staff can attach.
    const twice = await call('POST', `/admin/invoices/${invoice.id}/attach-payment`, 404, {
      headers: owner.bearer,
      body: { tx_ref: stray.tx_ref },
    });
    expect(codeOf(twice)).toBe('NOT_FOUND');
  });

  it('nodes: the registry, its background work, routing and the proxy’s internal routes', async () => {
    const staff = owner.bearer;
    const body = nodeBody({ ssh_port: await closedPort() });
    const created = await call('POST', '/admin/nodes', 201, { headers: staff, body });
    const { id } = created.body as { id: string };
    await call('GET', '/admin/nodes', 200, { headers: staff });
    await call('GET', `/admin/nodes/${id}`, 200, { headers: staff });
    await call('PATCH', `/admin/nodes/${id}`, 200, {
      headers: staff,
      body: { name: `${body.name}-b`, traffic_multiplier: 2 },
    });
    const missing = await call('GET', `/admin/nodes/${randomUUID()}`, 404, { headers: staff });
    expect(codeOf(missing)).toBe('NOT_FOUND');

    const unsubscribed = await newUser(t, 'seed');
    const refused = await call('GET', '/nodes/routing', 402, { headers: unsubscribed.bearer });
    expect(codeOf(refused)).toBe('SUBSCRIPTION_REQUIRED');
    // As a provisioning that succeeded and a health check that reached it would leave it.
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
      [id],
    );
    const routing = await call('GET', '/nodes/routing', 200, { headers: bearer });
    const entry = (routing.body as { node_id: string; session_token: string }[]).find(
      (candidate) => candidate.node_id === id,
    );
    expect(entry).toBeDefined();

    const secret = { 'X-Internal-Secret': t.settings.internalSecret };
    const token = { token: entry!.session_token, node_id: id };
    const valid = await call('POST', '/internal/validate', 200, { headers: secret, body: token });
    expect(valid.body).toMatchObject({ valid: true, user_id: userId });
    const used = await call('POST', '/internal/validate', 200, { headers: secret, body: token });
    expect(used.body).toEqual({ valid: false, reason: 'used' });
    const wrongSecret = await call('POST', '/internal/validate', 401, {
      headers: { 'X-Internal-Secret': 'not-the-secret' },
      body: token,
    });
    expect(codeOf(wrongSecret)).toBe('INTERNAL_SECRET_INVALID');
    const report = (nodeId: string, status: number) =>
      call('POST', '/internal/traffic', status, {
        headers: secret,
        body: {
          node_id: nodeId,
          report_id: randomUUID(),
          entries: [{ user_id: userId, bytes_up: 100, bytes_down: 200 }],
        },
      });
    await report(id, 200);
    expect(codeOf(await report(randomUUID(), 404))).toBe('NOT_FOUND');
    await call('GET', `/internal/limits?user_ids=${userId}`, 200, { headers: secret });

    // The SSH work fails in the background (nothing listens on the node's SSH port).
    await call('POST', `/admin/nodes/${id}/restart`, 202, { headers: staff });
    await call('POST', `/admin/nodes/${id}/provision`, 202, { headers: staff });
    const other = await call('POST', '/admin/nodes', 201, { headers: staff, body: nodeBody() });
    await call('DELETE', `/admin/nodes/${(other.body as { id: string }).id}`, 204, {
      headers: staff,
    });
  });

  it('staff actions on one account, the plans list and the figures', async () => {
    const staff = owner.bearer;
    const target = await newUser(t, 'seed');
    const path = `/admin/users/${target.user.id}`;
    await call('GET', '/admin/plans', 200, { headers: staff });
    await call('POST', `${path}/subscription`, 200, {
      headers: staff,
      body: { days: 3, plan_name: 'gift', reason: 'contest prize' },
    });
    await call('POST', `${path}/traffic/reset`, 200, { headers: staff, body: { reason: 'r' } });
    const blocked = await call('POST', `${path}/block`, 200, {
      headers: staff,
      body: { reason: 'abuse' },
    });
    expect(blocked.body).toMatchObject({ blocked_at: expect.any(String) });
    const login = await call('POST', '/auth/seed/login', 403, { body: { seed: target.seed } });
    expect(codeOf(login)).toBe('ACCOUNT_BLOCKED');
    await call('POST', `${path}/unblock`, 200, { headers: staff });
    // Staff never act on their own account.
    const self = await call('POST', `/admin/users/${owner.user.id}/block`, 403, {
      headers: staff,
      body: { reason: 'x' },
    });
    expect(codeOf(self)).toBe('FORBIDDEN');
    const support = await newUser(t, 'support');
    await call('POST', `/admin/users/${support.user.id}/password`, 204, {
      headers: staff,
      body: { password: 'a-new-long-password' },
    });
    await call('GET', '/admin/stats?days=3', 200, { headers: staff });
  });

  it('trials: refused to a seed account, given once to a Telegram one', async () => {
    const refused = await call('POST', '/users/me/trial', 403, { headers: bearer });
    expect(codeOf(refused)).toBe('TRIAL_TELEGRAM_ONLY');
    const telegram = await newUser(t, 'telegram');
    await call('POST', '/users/me/trial', 200, { headers: telegram.bearer });
    const used = await call('POST', '/users/me/trial', 409, { headers: telegram.bearer });
    expect(codeOf(used)).toBe('TRIAL_USED');
  });

  it('tickets: opened, answered by support, closed; a closed ticket refuses messages', async () => {
    const support = await newUser(t, 'support');
    const opened = await call('POST', '/tickets', 201, {
      headers: cookie,
      body: { subject: 'cannot connect', message: 'since this morning' },
    });
    const id = (opened.body as { ticket: { id: string } }).ticket.id;
    await call('GET', '/tickets', 200, { headers: bearer });
    await call('GET', `/tickets/${id}`, 200, { headers: bearer });
    await call('POST', `/tickets/${id}/messages`, 201, { headers: bearer, body: { body: 'hi' } });
    await call('GET', '/admin/tickets?status=open', 200, { headers: support.bearer });
    await call('GET', `/admin/tickets/${id}`, 200, { headers: support.bearer });
    await call('POST', `/admin/tickets/${id}/messages`, 201, {
      headers: support.bearer,
      body: { body: 'try again now' },
    });
    await call('POST', `/admin/tickets/${id}/close`, 200, { headers: support.bearer });
    const closed = await call('POST', `/tickets/${id}/messages`, 409, {
      headers: bearer,
      body: { body: 'still broken' },
    });
    expect(codeOf(closed)).toBe('TICKET_CLOSED');
    const unknown = await call('GET', `/tickets/${randomUUID()}`, 404, { headers: bearer });
    expect(codeOf(unknown)).toBe('NO_TICKETS');
  });

  it('a game round: started, scored once', async () => {
    const round = await call('POST', '/game/rounds', 201, { headers: bearer });
    const id = (round.body as { round_id: string }).round_id;
    await call('POST', `/game/rounds/${id}/score`, 200, {
      headers: bearer,
      body: { clicks: [[0, 0]] },
    });
    const twice = await call('POST', `/game/rounds/${id}/score`, 409, {
      headers: bearer,
      body: { clicks: [] },
    });
    expect(codeOf(twice)).toBe('ROUND_FINISHED');
    await call('GET', '/game/leaderboard', 200);
  });

  it('staff: users, staff accounts, limits and the audit list', async () => {
    const me = (await call('GET', '/users/me', 200, { headers: bearer })).body as { id: string };
    const moderator = await newUser(t, 'moderator');
    await call('GET', '/admin/users?role=none', 200, { headers: moderator.bearer });
    await call('GET', `/admin/users/${me.id}`, 200, { headers: moderator.bearer });
    const missing = await call('GET', `/admin/users/${randomUUID()}`, 404, {
      headers: moderator.bearer,
    });
    expect(codeOf(missing)).toBe('NO_USER');
    const account = (name: string) => ({
      username: `${name}_${Date.now()}`.slice(0, 32),
      password: 'a-long-enough-password',
    });
    await call('POST', '/admin/moderators', 201, { headers: owner.bearer, body: account('mod') });
    await call('POST', '/admin/support', 201, { headers: owner.bearer, body: account('sup') });
    const taken = account('dup');
    await call('POST', '/admin/support', 201, { headers: owner.bearer, body: taken });
    const duplicate = await call('POST', '/admin/support', 409, {
      headers: owner.bearer,
      body: taken,
    });
    expect(codeOf(duplicate)).toBe('USERNAME_TAKEN');
    await call('POST', '/admin/partners', 201, {
      headers: moderator.bearer,
      body: { ...account('partner'), commission_percent: 12.5 },
    });
    await call('PATCH', `/admin/users/${moderator.user.id}/node-access`, 200, {
      headers: owner.bearer,
      body: { can_manage_nodes: true },
    });
    await call('PATCH', `/admin/users/${me.id}/traffic-limit`, 200, {
      headers: moderator.bearer,
      body: { traffic_limit_bytes: null },
    });
    await call('PATCH', '/admin/settings/traffic-limit', 200, {
      headers: moderator.bearer,
      body: { default_bytes: 107374182400 },
    });
    await call('GET', '/admin/audit', 200, { headers: owner.bearer });
    await call('POST', '/auth/admin/login', 200, {
      body: { username: moderator.user.username, password: moderator.password },
    });
  });

  it('partners: attach, earnings, withdrawals and the staff moves on them', async () => {
    const partner = await newUser(t, 'partner');
    const buyer = await newUser(t, 'seed');
    await call('POST', '/users/me/partner', 200, {
      headers: buyer.bearer,
      body: { partner_code: partner.user.partnerCode },
    });
    const unknown = await call('POST', '/users/me/partner', 404, {
      headers: buyer.bearer,
      body: { partner_code: 'no-such-code' },
    });
    expect(codeOf(unknown)).toBe('NOT_FOUND');
    const invoice = (
      await call('POST', '/invoices', 201, {
        headers: buyer.bearer,
        body: { plan_name: 'monthly', currency: 'USD', provider: 'ton' },
      })
    ).body as Invoice;
    payOnChain(invoice);
    await call('POST', `/invoices/${invoice.id}/confirm`, 200, { headers: buyer.bearer });

    await call('GET', '/partners/me/earnings', 200, { headers: partner.bearer });
    const request = (amount: string, status: number) =>
      call('POST', '/partners/me/withdrawals', status, {
        headers: partner.bearer,
        body: { amount, currency: 'USD', destination: 'UQ-some-wallet' },
      });
    const first = (await request('10', 201)).body as { id: string };
    const second = (await request('10', 201)).body as { id: string };
    const tooMuch = await request('100000', 409);
    expect(codeOf(tooMuch)).toBe('INSUFFICIENT_BALANCE');
    await call('GET', '/partners/me/withdrawals', 200, { headers: partner.bearer });
    await call('GET', '/admin/withdrawals?status=pending', 200, { headers: owner.bearer });
    await call('POST', `/admin/withdrawals/${first.id}/approve`, 200, { headers: owner.bearer });
    await call('POST', `/admin/withdrawals/${first.id}/paid`, 200, {
      headers: owner.bearer,
      body: { tx_ref: 'tx-1' },
    });
    await call('POST', `/admin/withdrawals/${second.id}/reject`, 200, {
      headers: owner.bearer,
      body: { reason: 'wrong wallet' },
    });
    const wrongMove = await call('POST', `/admin/withdrawals/${second.id}/approve`, 409, {
      headers: owner.bearer,
    });
    expect(codeOf(wrongMove)).toBe('WITHDRAWAL_STATE');
  });

  it('an error answer of each status, in the documented body', async () => {
    // 400 with details: a currency the plan has no price in (the document cannot know prices).
    const invalid = await call('POST', '/invoices', 400, {
      headers: bearer,
      body: { plan_name: 'monthly', currency: 'EUR', provider: 'ton' },
    });
    expect((invalid.body as { details: unknown[] }).details.length).toBeGreaterThan(0);

    const expired = await call('GET', '/users/me', 401, {
      headers: { Authorization: 'Bearer not.a.token' },
    });
    expect(codeOf(expired)).toBe('UNAUTHENTICATED');
    const wrongSeed = await call('POST', '/auth/seed/login', 401, {
      body: { seed: 'abandon '.repeat(11) + 'about' },
    });
    expect(codeOf(wrongSeed)).toBe('INVALID_CREDENTIALS');

    const forbidden = await call('GET', '/admin/users', 403, { headers: bearer });
    expect(codeOf(forbidden)).toBe('FORBIDDEN');
    const foreign = await call('POST', '/tickets', 403, {
      headers: { ...cookie, Origin: 'https://evil.example' },
      body: { subject: 'x', message: 'y' },
    });
    expect(codeOf(foreign)).toBe('ORIGIN_REJECTED');

    const missing = await call('GET', `/invoices/${randomUUID()}`, 404, { headers: bearer });
    expect(codeOf(missing)).toBe('NOT_FOUND');

    const big = await call('POST', '/tickets', 413, {
      headers: bearer,
      // Beyond what the schema reads, so that the service's body limit, not Prism, refuses it.
      body: { subject: 'big', message: 'big', padding: 'x'.repeat(2_000_000) },
    });
    expect(codeOf(big)).toBe('PAYLOAD_TOO_LARGE');

    const charset = await call('POST', '/tickets', 415, {
      headers: { ...bearer, 'Content-Type': 'application/json; charset=koi8-r' },
      body: { subject: 'charset', message: 'koi8-r' },
    });
    expect(codeOf(charset)).toBe('UNSUPPORTED_MEDIA_TYPE');

    const pending = (
      await call('POST', '/invoices', 201, {
        headers: bearer,
        body: { plan_name: 'monthly', currency: 'USD', provider: 'ton' },
      })
    ).body as Invoice;
    clock.advance(TX_CACHE_MS);
    world.toncenter.down = true;
    try {
      const away = await call('POST', `/invoices/${pending.id}/confirm`, 503, { headers: bearer });
      expect(codeOf(away)).toBe('UPSTREAM_UNAVAILABLE');
    } finally {
      world.toncenter.down = false;
    }

    const login = { username: `nobody_${Date.now()}`, password: 'a-wrong-password' };
    for (let attempt = 0; attempt < 5; attempt += 1) {
      await call('POST', '/auth/admin/login', 401, { body: login });
    }
    const limited = await call('POST', '/auth/admin/login', 429, { body: login });
    expect(codeOf(limited)).toBe('RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toMatch(/^[0-9]+$/);

    await call('POST', '/auth/logout', 204, { headers: cookie });
    expect([...seen].filter((status) => status >= 400).sort()).toEqual(
      expect.arrayContaining([400, 401, 402, 403, 404, 409, 413, 415, 429, 503]),
    );
  });
});
