/**
 * The web app in a real Chromium, served by the service as an operator runs it (its own process,
 * the app built as `npm run build` builds it), with local toncenter, tonapi and Bot API fakes.
 * Elements are found by role and label, as a person finds them. Every page is checked with
 * axe-core; screenshots go to test-artifacts/web/.
 */
import { createHash, createHmac } from 'node:crypto';
import type { Client } from 'pg';
import type { Page } from 'playwright-core';
import { SameGame, type Board } from '../../src/game/samegame';
import type { FakeBotApi } from '../fakes/telegram-bot-api';
import { tonTransaction, type FakeToncenter } from '../fakes/toncenter';
import type { TestApp } from '../harness/app';
import { newUser, savePlan, type TestUser } from '../harness/factories';
import {
  BOT_TOKEN,
  type BrowserApp,
  expectAccessible,
  pathname,
  PHONE,
  startBrowserApp,
  WALLET,
  WEBHOOK_SECRET,
} from './browser-app';

describe('the web app in Chromium', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;
  let side: TestApp;
  let db: Client;
  let toncenter: FakeToncenter;
  let botApi: FakeBotApi;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startBrowserApp('web');
    ({ side, db, toncenter, botApi } = app);
    owner = await newUser(side, 'owner');
    await savePlan(side, owner, { prices: { USD: '499', EUR: '459' } }, 'monthly');
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  });

  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  const newPage = (viewport?: { width: number; height: number }) => app.newPage(viewport);
  const url = (path: string) => app.url(path);
  const shot = (page: Page, name: string) => app.shot(page, name);

  async function expectFitsWidth(page: Page): Promise<void> {
    // How far the page reaches past the window's width: a phone would have to scroll sideways.
    const overflow = await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow).toBeLessThanOrEqual(0);
  }

  async function userIdOnAccountPage(page: Page): Promise<string> {
    const text = await page.getByText(/Account id /).textContent();
    const match = /Account id ([0-9a-f-]{36})/.exec(text ?? '');
    if (!match) throw new Error(`no account id in ${text}`);
    return match[1];
  }

  let seedPage: Page;
  let seedUserId = '';

  it('serves the app with its content-security policy, and hashed assets cached for a year', async () => {
    const index = await fetch(url('/account?bootstrap=x'));
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain(
      "script-src 'self' https://telegram.org",
    );
    const html = await index.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(url(script ?? ''));
    expect([asset.status, asset.headers.get('cache-control')]).toEqual([
      200,
      'public, max-age=31536000, immutable',
    ]);
    const missing = await fetch(url('/assets/none.js'));
    expect([missing.status, ((await missing.json()) as { code: string }).code]).toEqual([
      404,
      'NOT_FOUND',
    ]);
    const api = await fetch(url('/api/v1/nothing-here'));
    expect([api.status, ((await api.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND']);
  });

  it('a new visitor creates a seed account, sees the seed once, signs out and back in', async () => {
    seedPage = await newPage();
    const page = seedPage;
    await page.goto(url('/'));
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // The service names a bot, so the Telegram widget is put on the page.
    await page.locator('script[data-telegram-login="shop_vpn_bot"]').waitFor({ state: 'attached' });
    await expectAccessible(page, 'sign-in');
    await shot(page, 'sign-in');

    await page.getByRole('button', { name: 'Create an account' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your seed' });
    const seed = await dialog.getByLabel('Seed', { exact: true }).inputValue();
    expect(seed).toMatch(/^([0-9a-z]{4}-){7}[0-9a-z]{4}$/);
    await dialog.getByText('This is the only time it is shown').waitFor();
    await expectAccessible(page, 'seed shown');
    await shot(page, 'seed-shown');
    // A reload before "written down" shows the same seed again, not a signed-in account without it.
    await page.reload();
    expect(await dialog.getByLabel('Seed', { exact: true }).inputValue()).toBe(seed);
    expect(pathname(page)).toBe('/');
    const proceed = dialog.getByRole('button', { name: 'Continue' });
    expect(await proceed.isDisabled()).toBe(true);
    await dialog.getByLabel('I have written it down').check();
    await proceed.click();

    await page.getByRole('heading', { name: 'Account' }).waitFor();
    expect(pathname(page)).toBe('/account');
    seedUserId = await userIdOnAccountPage(page);
    await page.getByText('No subscription yet.').waitFor();
    // Once: nothing on the page shows it any more, even after a reload.
    await page.reload();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    expect(await page.content()).not.toContain(seed);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.goto(url('/account'));
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    await page
      .getByRole('textbox', { name: 'Seed' })
      .fill('wrong words that are not a seed at all');
    await page.getByRole('button', { name: 'Sign in with the seed' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      'did not match an account',
    );
    await page.getByRole('textbox', { name: 'Seed' }).fill(seed);
    await page.getByRole('button', { name: 'Sign in with the seed' }).click();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    expect(await userIdOnAccountPage(page)).toBe(seedUserId);
  });

  it('buys a plan with TON: amount, address, comment and QR, then "I paid" shows the subscription', async () => {
    const page = seedPage;
    await page.getByRole('link', { name: 'Plans', exact: true }).click();
    await page.getByRole('heading', { name: 'Plans' }).waitFor();
    await expectAccessible(page, 'plans');
    await shot(page, 'plans');
    const plan = page.getByRole('region', { name: 'monthly' });
    await plan.getByLabel('Currency').click();
    await page.getByRole('option', { name: 'USD' }).click();
    await plan.getByRole('button', { name: 'Pay with TON' }).click();

    const dialog = page.getByRole('dialog', { name: 'Pay monthly with TON' });
    await dialog.getByRole('img', { name: 'QR code of the payment link' }).waitFor();
    const [invoice] = (
      await db.query<{ id: string; amount: string; comment: string }>(
        `SELECT id, amount::text AS amount, payment->>'comment' AS comment
           FROM invoices WHERE user_id = $1`,
        [seedUserId],
      )
    ).rows;
    expect(invoice).toBeDefined();
    const shown = await dialog.textContent();
    expect(shown).toContain(invoice.comment);
    expect(shown).toContain(WALLET.toString());
    // 4.99 USD at 5 USD per TON, plus 2%: 1.01796 TON.
    expect(shown).toContain('1.01796 TON');
    expect(await dialog.getByRole('link', { name: 'Open in a wallet' }).getAttribute('href')).toBe(
      `ton://transfer/${WALLET.toString()}?amount=${invoice.amount}&text=${invoice.comment}`,
    );
    await expectAccessible(page, 'TON payment');
    await shot(page, 'ton-payment');

    // Pressed before paying: the service finds nothing and says so in words.
    await dialog.getByRole('button', { name: 'I paid' }).click();
    await dialog.getByRole('status').filter({ hasText: 'No payment found yet' }).waitFor();

    toncenter.transactions.push(
      tonTransaction({
        to: WALLET.toRawString().toUpperCase(),
        value: invoice.amount,
        comment: invoice.comment,
      }),
    );
    // The service looks at toncenter at most every 5 seconds.
    await new Promise((resolve) => setTimeout(resolve, 5_200));
    await dialog.getByRole('button', { name: 'I paid' }).click();
    const done = dialog
      .getByRole('status')
      .filter({ hasText: 'Paid: your subscription runs until' });
    await done.waitFor();
    expect(toncenter.requests.some((r) => r.path === '/api/v3/transactions')).toBe(true);

    const [user] = (
      await db.query<{ expires_at: Date }>(
        `SELECT subscription_expires_at AS expires_at FROM users WHERE id = $1`,
        [seedUserId],
      )
    ).rows;
    const endDate = new Intl.DateTimeFormat('en-GB', {
      dateStyle: 'medium',
      timeZone: 'UTC',
    }).format(user.expires_at);
    expect(await done.textContent()).toContain(endDate);

    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    const subscription = page.getByRole('region', { name: 'Subscription' });
    await subscription.getByText('Active').waitFor();
    expect(await subscription.textContent()).toContain(`Ends: ${endDate}`);
    expect(await subscription.textContent()).toContain('30 days left');
    await page.getByRole('region', { name: 'Invoices' }).getByText('Paid').waitFor();
    await expectAccessible(page, 'account');
    await shot(page, 'account');

    // Paying in Telegram instead: the invoice link the Bot API made, opened from the page.
    await page.getByRole('link', { name: 'Plans', exact: true }).click();
    await page
      .getByRole('region', { name: 'monthly' })
      .getByRole('button', { name: 'Pay in Telegram' })
      .click();
    const telegram = page.getByRole('dialog', { name: 'Pay monthly in Telegram' });
    const href = await telegram
      .getByRole('link', { name: 'Open the invoice in Telegram' })
      .getAttribute('href');
    const [made] = botApi.callsOf('createInvoiceLink').slice(-1);
    const [ordered] = (
      await db.query<{ id: string; currency: string; amount: string }>(
        `SELECT id, currency, amount::text AS amount FROM invoices
          WHERE user_id = $1 AND provider = 'telegram'`,
        [seedUserId],
      )
    ).rows;
    // In the currency the buyer picked for TON above: the plans page remembers it.
    expect(ordered).toMatchObject({ currency: 'USD', amount: '499' });
    expect((made.body as { payload: string }).payload).toBe(ordered.id);
    expect(href).toMatch(/^https:\/\/t\.me\/\$/);
    await telegram.getByRole('button', { name: 'Close' }).click();
  });

  it('a Telegram account arrives through the bot /start link, at phone width, and starts the trial', async () => {
    const tgId = 600_000_000 + (process.pid % 100_000);
    const from = { id: tgId, is_bot: false, first_name: 'Tania', language_code: 'en' };
    const update = await fetch(url('/api/v1/bot/webhook'), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Telegram-Bot-Api-Secret-Token': WEBHOOK_SECRET,
      },
      body: JSON.stringify({
        update_id: 9001,
        message: {
          message_id: 1,
          date: Math.floor(Date.now() / 1000),
          chat: { id: tgId, type: 'private', first_name: 'Tania' },
          from,
          text: '/start',
          entities: [{ type: 'bot_command', offset: 0, length: 6 }],
        },
      }),
    });
    expect(update.status).toBe(200);
    const sent = botApi
      .callsOf('sendMessage')
      .filter((call) => (call.body as { chat_id: number }).chat_id === tgId);
    const buttons = sent.flatMap(
      (call) =>
        (call.body as { reply_markup?: { inline_keyboard?: { url?: string }[][] } }).reply_markup
          ?.inline_keyboard ?? [],
    );
    const link = buttons.flat().find((b) => b.url?.includes('/account?bootstrap='))?.url;
    // APP_URL is unset: the links point at the service itself, which serves the app.
    expect(link?.startsWith(`${app.service.baseUrl}/account?bootstrap=`)).toBe(true);

    const page = await newPage(PHONE);
    await page.goto(link ?? '');
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    expect(page.url()).toBe(url('/account'));
    // Gone from the history entry too: the page's own idea of its address has no token.
    expect(await page.evaluate('window.location.href')).toBe(url('/account'));
    await page.getByText('Telegram account').waitFor();
    await expectFitsWidth(page);
    await shot(page, 'account-phone');

    // The link's token was single use: opening it again signs nobody in.
    const again = await newPage(PHONE);
    await again.goto(link ?? '');
    await again.getByRole('heading', { name: 'Sign in' }).waitFor();
    await again.getByText('This sign-in link has expired or was used already').waitFor();

    await page.getByRole('button', { name: 'Start the free trial' }).click();
    const subscription = page.getByRole('region', { name: 'Subscription' });
    await subscription.getByText('Active').waitFor();
    expect(await subscription.textContent()).toContain('3 days left');
    const [row] = (
      await db.query<{ active: boolean }>(
        `SELECT subscription_expires_at > now() AS active FROM users WHERE tg_id = $1`,
        [tgId],
      )
    ).rows;
    expect(row.active).toBe(true);
    await expect(page.getByRole('button', { name: 'Start the free trial' }).count()).resolves.toBe(
      0,
    );

    await page.goto(url('/plans'));
    await page.getByRole('heading', { name: 'Plans' }).waitFor();
    await expectFitsWidth(page);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Support', exact: true }).click();
    await page.getByRole('heading', { name: 'Support' }).waitFor();
  });

  it('a partner sees a buyer’s commission and a withdrawal over the balance is refused', async () => {
    const partner = await newUser(side, 'partner');
    const buyer = await newUser(side, 'seed');
    const asBuyer = (path: string, body?: unknown) =>
      fetch(url(`/api/v1${path}`), {
        method: 'POST',
        headers: { ...buyer.bearer, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    expect(
      (await asBuyer('/users/me/partner', { partner_code: partner.user.partnerCode })).status,
    ).toBe(200);
    const ordered = (await (
      await asBuyer('/invoices', { plan_name: 'monthly', currency: 'USD', provider: 'ton' })
    ).json()) as { id: string; amount: string; payment: { comment: string } };
    toncenter.transactions.push(
      tonTransaction({
        to: WALLET.toRawString().toUpperCase(),
        value: ordered.amount,
        comment: ordered.payment.comment,
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 5_200));
    expect((await asBuyer(`/invoices/${ordered.id}/confirm`)).status).toBe(200);

    const page = await newPage();
    await page.goto(url('/staff'));
    await page.getByLabel('Username').fill(partner.user.username ?? '');
    await page.getByRole('textbox', { name: 'Password' }).fill(partner.password ?? '');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // A partner signing in where staff do lands on its own page.
    await page.getByRole('heading', { name: 'Partner' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/syndicate');

    // 10% of 4.99 USD, rounded down: 0.49 USD.
    const balances = page.getByRole('region', { name: 'Balances' });
    await balances.getByText('0.49 USD').first().waitFor();
    const recent = page.getByRole('region', { name: 'Recent commissions' });
    expect(await recent.textContent()).toContain('4.99 USD');
    expect(await recent.textContent()).toContain('0.49 USD (10%)');

    const form = page.getByRole('region', { name: 'Request a withdrawal' });
    await form.getByLabel('Amount').fill('1.00');
    await form.getByLabel('Where to send it').fill('UQ-partner-wallet');
    await form.getByRole('button', { name: 'Request' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toContain(
      'That is more than your available balance.',
    );
    await form.getByLabel('Amount').fill('0.40');
    await form.getByRole('button', { name: 'Request' }).click();
    const withdrawals = page.getByRole('region', { name: 'Withdrawals' });
    await withdrawals.getByText('0.4 USD').waitFor();
    expect(await withdrawals.textContent()).toContain('Pending');
    await balances.getByText('0.09 USD').waitFor();
    const rows = (
      await db.query<{ amount: string }>(
        `SELECT amount::text AS amount FROM withdrawal_requests WHERE partner_id = $1`,
        [partner.user.id],
      )
    ).rows;
    expect(rows).toEqual([{ amount: '40' }]);
    await expectAccessible(page, 'syndicate');
    await shot(page, 'syndicate');
  });

  it('a ticket round trip: the user opens it, staff answer through the API, the user replies', async () => {
    const page = seedPage;
    await page.getByRole('link', { name: 'Support', exact: true }).click();
    await page.getByRole('heading', { name: 'Support' }).waitFor();
    await expectAccessible(page, 'support');
    await page.getByLabel('Subject').fill('Cannot connect from the train');
    await page.getByLabel('Message').fill('It drops every few minutes.');
    await page.getByRole('button', { name: 'Open the ticket' }).click();
    await page.getByRole('heading', { name: 'Cannot connect from the train' }).waitFor();
    const ticketId = pathname(page).split('/').pop() ?? '';

    const support = await newUser(side, 'support');
    const reply = await fetch(url(`/api/v1/admin/tickets/${ticketId}/messages`), {
      method: 'POST',
      headers: { ...support.bearer, 'Content-Type': 'application/json' },
      body: JSON.stringify({ body: 'Try the node in Riga, please.' }),
    });
    expect(reply.status).toBe(201);

    await page.reload();
    await page.getByText('Try the node in Riga, please.').waitFor();
    await page.getByLabel('Reply').fill('Riga works, thank you.');
    await page.getByRole('button', { name: 'Send' }).click();
    const thread = page.getByRole('main').getByRole('listitem');
    await thread.filter({ hasText: 'Riga works, thank you.' }).waitFor();
    expect(await thread.count()).toBe(3);
    expect(await thread.nth(1).textContent()).toMatch(/^Support/);
    await expectAccessible(page, 'ticket');
    await shot(page, 'ticket');
  });

  it('plays a full game by clicking tiles; the score shown equals the server’s', async () => {
    const page = seedPage;
    await page.getByRole('link', { name: 'Game', exact: true }).click();
    await page.getByRole('button', { name: 'New round' }).click();
    await page.getByRole('grid', { name: 'Board' }).waitFor();
    const [round] = (
      await db.query<{ id: string; board: Board }>(
        `SELECT id, board FROM game_rounds WHERE user_id = $1 ORDER BY created_at DESC LIMIT 1`,
        [seedUserId],
      )
    ).rows;
    // The test plays the same rules to know which tiles are worth a click.
    const game = new SameGame(round.board);
    for (let turn = 0; turn < 100; turn++) {
      const next = game.clickable()[0];
      if (!next) break;
      const [row, col] = next;
      game.click(row, col);
      await page
        .getByRole('button', { name: new RegExp(`^Row ${row + 1}, column ${col + 1}, colour`) })
        .click();
    }
    await page.getByText('No more moves.').waitFor();
    const local = await page.getByText(/^Score: \d+$/).textContent();
    expect(local).toBe(`Score: ${game.score}`);
    await expectAccessible(page, 'game');
    await shot(page, 'game');

    await page.getByRole('button', { name: 'Submit the round' }).click();
    const result = page.getByRole('status').filter({ hasText: 'The server counted' });
    await result.waitFor();
    const [scored] = (
      await db.query<{ score: number }>(`SELECT score FROM game_rounds WHERE id = $1`, [round.id])
    ).rows;
    expect(await result.textContent()).toBe(`The server counted ${scored.score} points.`);
    expect(local).toBe(`Score: ${scored.score}`);
    await page
      .getByRole('region', { name: 'Leaderboard' })
      .getByText(String(scored.score), { exact: true })
      // The service caches the leaderboard for 5 seconds; the page reads it every 5.
      .waitFor({ timeout: 20_000 });
  });

  it('renews an expired access cookie silently; a failed refresh lands on the sign-in page', async () => {
    const page = seedPage;
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    const calls: string[] = [];
    page.on('response', (response) => {
      const path = new URL(response.url()).pathname;
      if (path.startsWith('/api/v1/')) calls.push(`${path.slice(7)} ${response.status()}`);
    });

    // What the browser does when the access cookie's lifetime ends: it stops sending it.
    await page.context().clearCookies({ name: 'access_token' });
    await page.getByRole('link', { name: 'Support', exact: true }).click();
    await page.getByText('Cannot connect from the train').waitFor();
    expect(pathname(page)).toBe('/support');
    expect(calls).toContain('/auth/refresh 200');
    expect(calls.filter((c) => c.startsWith('/auth/refresh'))).toHaveLength(1);

    // Now the refresh cookie is gone as well (ended, revoked): the app goes to `/`.
    await page.context().clearCookies();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(pathname(page)).toBe('/');
    expect(calls).toContain('/auth/refresh 401');
  });

  it('signs in through the Telegram widget’s return address and clears the fields from it', async () => {
    const tgId = 700_000_000 + (process.pid % 100_000);
    const fields: Record<string, string> = {
      auth_date: String(Math.floor(Date.now() / 1000)),
      first_name: 'Oleg',
      id: String(tgId),
    };
    const check = Object.keys(fields)
      .sort()
      .map((key) => `${key}=${fields[key]}`)
      .join('\n');
    const secret = createHash('sha256').update(BOT_TOKEN).digest();
    const hash = createHmac('sha256', secret).update(check).digest('hex');
    const page = await newPage();
    await page.goto(url(`/telegram-login?${new URLSearchParams({ ...fields, hash }).toString()}`));
    await page
      .getByRole('heading', { name: 'Account' })
      .or(page.getByRole('heading', { name: 'Sign in' }))
      .or(page.getByRole('alert'))
      .first()
      .waitFor();
    expect([pathname(page), await page.getByRole('alert').allTextContents()]).toEqual([
      '/account',
      [],
    ]);
    expect(page.url()).toBe(url('/account'));
    await page.getByText('Telegram account').waitFor();
  });

  it('has no serious accessibility problem on the staff sign-in page', async () => {
    const page = await newPage();
    await page.goto(url('/staff'));
    await page.getByRole('heading', { name: 'Staff sign-in' }).waitFor();
    await expectAccessible(page, 'staff sign-in');
  });
});
