/**
 * The staff console's Users page in a real Chromium, against the service as an operator runs it:
 * the owner creates a moderator (who then signs in), finds a Telegram subscriber by Telegram
 * username and by id, extends the subscription with a reason, blocks the account, and the
 * database, the audit log and the subscriber's own calls agree with what the page showed. A
 * moderator sees no owner-only action. Screenshots go to test-artifacts/console/.
 */
import { createHash, createHmac } from 'node:crypto';
import type { Client } from 'pg';
import type { Page } from 'playwright-core';
import type { TestApp } from '../harness/app';
import { newUser, savePlan, type TestUser } from '../harness/factories';
import {
  BOT_TOKEN,
  type BrowserApp,
  expectAccessible,
  pathname,
  signInToConsole,
  startBrowserApp,
} from './browser-app';

const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;

interface AuditEntry {
  actor_id: string | null;
  action: string;
  target_id: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** The console's date: as `useI18n().date` writes it in English. */
const shownDate = (at: Date) =>
  new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' }).format(at);

describe('the console’s Users page in Chromium', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;
  let side: TestApp;
  let db: Client;
  let owner: TestUser;
  let ownerPage: Page;
  let moderatorPage: Page;
  const moderatorName = `mod_${process.pid}`;
  const moderatorPassword = 'a-moderator-password-42';
  let moderatorId = '';
  const tgId = 700_000_000 + (process.pid % 1_000_000);
  const tgName = `Dana_Rider${process.pid % 1000}`;
  let subscriberId = '';
  let subscriberCookie = '';

  /** The Telegram login widget's fields for the subscriber, signed as Telegram signs them. */
  function telegramLogin(): Record<string, string | number> {
    const fields: Record<string, string | number> = {
      id: tgId,
      first_name: 'Dana',
      username: tgName,
      auth_date: Math.floor(Date.now() / 1000),
    };
    const check = Object.keys(fields)
      .sort()
      .map((key) => `${key}=${fields[key]}`)
      .join('\n');
    const secret = createHash('sha256').update(BOT_TOKEN).digest();
    return { ...fields, hash: createHmac('sha256', secret).update(check).digest('hex') };
  }

  const signInWithTelegram = () =>
    fetch(app.url('/api/v1/auth/telegram'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(telegramLogin()),
    });

  async function auditOf(targetId: string): Promise<AuditEntry[]> {
    const query = new URLSearchParams({ target_id: targetId, limit: '100' });
    const response = await fetch(app.url(`/api/v1/admin/audit?${query.toString()}`), {
      headers: owner.bearer,
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { items: AuditEntry[] };
    expect(page.items.every((entry) => entry.target_id === targetId)).toBe(true);
    return page.items;
  }

  async function userRow(id: string) {
    const { rows } = await db.query<{
      role: string | null;
      plan_name: string | null;
      subscription_expires_at: Date | null;
      blocked_at: Date | null;
      can_manage_nodes: boolean;
      traffic_used_bytes: string;
      traffic_limit_bytes: string | null;
    }>(
      `SELECT role, plan_name, subscription_expires_at, blocked_at, can_manage_nodes,
              traffic_used_bytes, traffic_limit_bytes
         FROM users WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  beforeAll(async () => {
    app = await startBrowserApp('console');
    ({ side, db } = app);
    owner = await newUser(side, 'owner');
    // The subscriber signs in with Telegram (the account is made then), and has 10 days left.
    const login = await signInWithTelegram();
    expect(login.status).toBe(200);
    subscriberId = ((await login.json()) as { user: { id: string } }).user.id;
    subscriberCookie = login.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    await db.query(
      `UPDATE users SET plan_name = 'monthly', subscription_expires_at = $2,
                        traffic_used_bytes = $3
        WHERE id = $1`,
      [subscriberId, new Date(Date.now() + 10 * DAY_MS), 5 * GIB],
    );
    // And an invoice of its own, waiting for payment.
    await savePlan(side, owner, { prices: { USD: '499' } }, 'monthly');
    const invoice = await fetch(app.url('/api/v1/invoices'), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Cookie: subscriberCookie,
        Origin: new URL(app.url('/')).origin,
      },
      body: JSON.stringify({ plan_name: 'monthly', currency: 'USD', provider: 'ton' }),
    });
    expect(invoice.status).toBe(201);
    // And a support ticket.
    const ticket = await fetch(app.url('/api/v1/tickets'), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Cookie: subscriberCookie,
        Origin: new URL(app.url('/')).origin,
      },
      body: JSON.stringify({ subject: 'Slow in the evenings', message: 'Since Monday.' }),
    });
    expect(ticket.status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  });

  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  it('the owner creates a moderator, who can then sign in to the console', async () => {
    ownerPage = await app.newPage();
    const page = ownerPage;
    await signInToConsole(app, page, owner);
    await page.getByRole('tab', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    expect(pathname(page)).toBe('/staff/users');

    const form = page.getByRole('region', { name: 'Create a staff account' });
    // The owner may create every kind of staff account.
    await expect(
      form.getByLabel('Kind of account').locator('option').allTextContents(),
    ).resolves.toEqual(['Moderator', 'Support', 'Partner']);
    await form.getByLabel('Kind of account').selectOption('moderator');
    await form.getByRole('textbox', { name: 'Username' }).fill(moderatorName);
    await form.getByRole('textbox', { name: 'Password' }).fill('too-short');
    await form.getByRole('button', { name: 'Create' }).click();
    // The service's refusal in the page's words (its locale's text of the failed rule).
    await expect(form.getByRole('alert').textContent()).resolves.toBe(
      'Some of what you entered is not valid. This is too short or too long.',
    );
    await form.getByRole('textbox', { name: 'Password' }).fill(moderatorPassword);
    await form.getByRole('button', { name: 'Create' }).click();

    const created = form.getByRole('region', { name: 'Account created' });
    await created.waitFor();
    const [row] = (
      await db.query<{ id: string; role: string }>(
        'SELECT id, role FROM users WHERE username = $1',
        [moderatorName],
      )
    ).rows;
    expect(row.role).toBe('moderator');
    moderatorId = row.id;
    const shown = await created.textContent();
    expect(shown).toContain(`Username: ${moderatorName}`);
    expect(shown).toContain('Role: Moderator');
    expect(shown).toContain(`Id: ${moderatorId}`);
    expect(shown).not.toContain(moderatorPassword);
    await expectAccessible(page, 'users with a new account');
    await app.shot(page, 'users-created-moderator');

    moderatorPage = await app.newPage();
    await moderatorPage.goto(app.url('/staff'));
    await moderatorPage.getByLabel('Username').fill(moderatorName);
    await moderatorPage.getByRole('textbox', { name: 'Password' }).fill(moderatorPassword);
    await moderatorPage.getByRole('button', { name: 'Sign in' }).click();
    await moderatorPage.getByText(`Signed in as ${moderatorName} (moderator)`).waitFor();
    await moderatorPage.getByRole('tab', { name: 'Users' }).waitFor();
  });

  it('finds the subscriber by Telegram username, by id and by the start of the id, and extends the subscription with a reason', async () => {
    const page = ownerPage;
    const results = page.getByRole('region', { name: 'Accounts' });
    const search = async (text: string) => {
      await page.getByRole('textbox', { name: 'Search' }).fill(text);
      await page.getByRole('button', { name: 'Find' }).click();
    };
    /** The accounts the list settles on: the list before the search may still be showing. */
    const settledLinks = async (expected: string[]) => {
      let links: string[] = [];
      for (let tries = 0; tries < 100; tries += 1) {
        links = await results.getByRole('link').allTextContents();
        if (JSON.stringify(links) === JSON.stringify(expected)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return links;
    };
    const subscriberLink = results.getByRole('link', { name: `Telegram ${tgId}` });

    await search(`@${tgName.slice(0, 8).toLowerCase()}`);
    await expect(settledLinks([`Telegram ${tgId}`])).resolves.toEqual([`Telegram ${tgId}`]);
    expect(new URL(page.url()).searchParams.get('q')).toBe(`@${tgName.slice(0, 8).toLowerCase()}`);
    await search('nobody-has-this-name');
    await results.getByText('No account matches.').waitFor();
    await search(subscriberId.toUpperCase());
    await expect(settledLinks([`Telegram ${tgId}`])).resolves.toEqual([`Telegram ${tgId}`]);
    await search('nobody-has-this-name');
    await results.getByText('No account matches.').waitFor();
    // The start of the id as the list shows it, ellipsis and all.
    await search(`${subscriberId.slice(0, 8)}…`);
    await expect(settledLinks([`Telegram ${tgId}`])).resolves.toEqual([`Telegram ${tgId}`]);
    expect(await results.textContent()).toContain('Subscriber');
    await expectAccessible(page, 'users search');
    await app.shot(page, 'users-search');

    await subscriberLink.click();
    await page.getByRole('heading', { name: `Account Telegram ${tgId}` }).waitFor();
    expect(pathname(page)).toBe(`/staff/users/${subscriberId}`);
    const subscription = page.getByRole('region', { name: 'Subscription' });
    const before = (await userRow(subscriberId)).subscription_expires_at as Date;
    await subscription.getByText(`Runs until ${shownDate(before)}`).waitFor();
    await expect(
      page.getByRole('region', { name: 'Account', exact: true }).textContent(),
    ).resolves.toContain('Not blocked');
    await expectAccessible(page, 'a user');

    const actions = page.getByRole('region', { name: 'Actions' });
    const move = actions.getByRole('form', { name: 'Extend or shorten the subscription' });
    await move.getByRole('textbox', { name: 'Days' }).fill('45');
    await move.getByRole('textbox', { name: 'Reason' }).fill('Compensation for the outage');
    await move.getByRole('button', { name: 'Move the end' }).click();

    const after = new Date(before.getTime() + 45 * DAY_MS);
    await subscription.getByText(`Runs until ${shownDate(after)}`).waitFor();
    const row = await userRow(subscriberId);
    expect([row.plan_name, row.subscription_expires_at?.toISOString()]).toEqual([
      'monthly',
      after.toISOString(),
    ]);
    const [entry] = (await auditOf(subscriberId)).filter(
      (e) => e.action === 'user.subscription_moved',
    );
    expect(entry).toMatchObject({
      actor_id: owner.user.id,
      before: { plan_name: 'monthly', expires_at: before.toISOString() },
      after: {
        plan_name: 'monthly',
        expires_at: after.toISOString(),
        days: 45,
        reason: 'Compensation for the outage',
      },
    });
    const invoices = page.getByRole('region', { name: 'Invoices' });
    await invoices.getByText('Pending').waitFor();
    expect(await invoices.textContent()).toContain('monthly');
    // The account's own tickets; the link opens the thread in the console's Tickets tab.
    const tickets = page.getByRole('region', { name: 'Support tickets' });
    await tickets.getByRole('link', { name: 'Slow in the evenings' }).waitFor();
    await tickets.getByText('Closed', { exact: true }).click();
    await tickets.getByText('None yet').waitFor();
    await tickets.getByText('Open', { exact: true }).click();
    await tickets.getByRole('link', { name: 'Slow in the evenings' }).waitFor();
    await expectAccessible(page, 'user page with tickets');
    await app.shot(page, 'user-extended');
    await tickets.getByRole('link', { name: 'Slow in the evenings' }).click();
    await page.getByText('Since Monday.').waitFor();
    expect(pathname(page)).toMatch(/^\/staff\/tickets\/[0-9a-f-]{36}$/);
    await page.goBack();
    await subscription.waitFor();
  });

  it('resets the traffic after naming the user, and sets and clears a limit of its own', async () => {
    const page = ownerPage;
    const subscription = page.getByRole('region', { name: 'Subscription' });
    const actions = page.getByRole('region', { name: 'Actions' });
    await subscription.getByText('5 GB of 100 GB').waitFor();

    await actions.getByRole('button', { name: 'Reset traffic' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset traffic' });
    await dialog
      .getByText(`Set the traffic Telegram ${tgId} has used in this period back to 0?`)
      .waitFor();
    await dialog.getByRole('textbox', { name: 'Reason' }).fill('Counted twice by a node');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await subscription.getByText('0 B of 100 GB').waitFor();
    expect((await userRow(subscriberId)).traffic_used_bytes).toBe('0');
    const [reset] = (await auditOf(subscriberId)).filter((e) => e.action === 'user.traffic_reset');
    expect(reset).toMatchObject({
      actor_id: owner.user.id,
      after: { reason: 'Counted twice by a node' },
    });

    const limit = actions.getByRole('form', { name: 'Traffic limit' });
    await limit.getByRole('textbox', { name: 'Limit, GB' }).fill('50');
    await limit.getByRole('button', { name: 'Set the limit' }).click();
    await subscription.getByText('0 B of 50 GB').waitFor();
    expect((await userRow(subscriberId)).traffic_limit_bytes).toBe(String(50 * GIB));
    await limit.getByRole('button', { name: 'Use the default limit' }).click();
    await subscription.getByText('0 B of 100 GB').waitFor();
    expect((await userRow(subscriberId)).traffic_limit_bytes).toBeNull();
  });

  it('blocks the subscriber after naming them; their session ends and signing in answers 403 ACCOUNT_BLOCKED', async () => {
    const page = ownerPage;
    const me = () => fetch(app.url('/api/v1/users/me'), { headers: { Cookie: subscriberCookie } });
    expect((await me()).status).toBe(200);

    const actions = page.getByRole('region', { name: 'Actions' });
    await actions.getByRole('button', { name: 'Block' }).click();
    const dialog = page.getByRole('dialog', { name: 'Block' });
    await dialog.getByText(`Block Telegram ${tgId}? Their sessions end at once`).waitFor();
    await expectAccessible(page, 'block dialog');
    await app.shot(page, 'user-block-dialog');
    // No reason: the service refuses, the dialog says why and stays open.
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await expect(dialog.getByRole('alert').textContent()).resolves.toBe(
      'Some of what you entered is not valid. Use visible characters: at least one letter, ' +
        'digit or sign, and no invisible, direction-changing or control characters.',
    );
    expect((await userRow(subscriberId)).blocked_at).toBeNull();
    await dialog.getByRole('textbox', { name: 'Reason' }).fill('Card chargeback');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const account = page.getByRole('region', { name: 'Account', exact: true });
    await account.getByText(/Blocked since/).waitFor();
    const blockedAt = (await userRow(subscriberId)).blocked_at;
    expect(blockedAt).not.toBeNull();
    expect(await account.textContent()).toContain(`Blocked since ${shownDate(blockedAt as Date)}`);
    await actions.getByRole('button', { name: 'Unblock' }).waitFor();
    expect(await actions.getByRole('button', { name: 'Block', exact: true }).count()).toBe(0);
    const [entry] = (await auditOf(subscriberId)).filter((e) => e.action === 'user.blocked');
    expect(entry).toMatchObject({ actor_id: owner.user.id, after: { reason: 'Card chargeback' } });

    // The session the subscriber had ended at once; signing in again is refused in words.
    expect((await me()).status).toBe(401);
    const again = await signInWithTelegram();
    expect([again.status, ((await again.json()) as { code: string }).code]).toEqual([
      403,
      'ACCOUNT_BLOCKED',
    ]);
    await expectAccessible(page, 'a blocked user');
    await app.shot(page, 'user-blocked');
  });

  it('the owner gives the moderator node access; the moderator sees no owner-only action', async () => {
    const page = ownerPage;
    await page.goto(app.url(`/staff/users/${moderatorId}`));
    await page.getByRole('heading', { name: `Account ${moderatorName}` }).waitFor();
    const actions = page.getByRole('region', { name: 'Actions' });
    const nodeAccess = actions.getByRole('switch', { name: 'May manage nodes' });
    // The switch follows the service's answer, not the click.
    await nodeAccess.click();
    await page
      .getByRole('region', { name: 'Account', exact: true })
      .getByText('Yes', { exact: true })
      .waitFor();
    expect((await userRow(moderatorId)).can_manage_nodes).toBe(true);
    await actions.getByRole('button', { name: 'Set a new password' }).waitFor();
    await expectAccessible(page, 'a moderator, as the owner sees it');
    await app.shot(page, 'user-moderator-owner-view');

    const mod = moderatorPage;
    await mod.goto(app.url(`/staff/users/${moderatorId}`));
    await mod.getByRole('heading', { name: `Account ${moderatorName}` }).waitFor();
    const modActions = mod.getByRole('region', { name: 'Actions' });
    await modActions.getByRole('button', { name: 'Reset traffic' }).waitFor();
    // Node access, staff passwords and blocking staff are the owner's.
    for (const hidden of [
      modActions.getByRole('switch'),
      modActions.getByRole('button', { name: 'Set a new password' }),
      modActions.getByRole('button', { name: 'Block' }),
    ]) {
      expect(await hidden.count()).toBe(0);
    }
    await mod.goto(app.url(`/staff/users/${subscriberId}`));
    await mod.getByRole('heading', { name: `Account Telegram ${tgId}` }).waitFor();
    await mod
      .getByRole('region', { name: 'Actions' })
      .getByRole('button', { name: 'Unblock' })
      .waitFor();
    await mod.goto(app.url('/staff/users'));
    const form = mod.getByRole('region', { name: 'Create a staff account' });
    await form.getByLabel('Kind of account').waitFor();
    await expect(
      form.getByLabel('Kind of account').locator('option').allTextContents(),
    ).resolves.toEqual(['Partner']);
    // Partners are any staff member's to create; the page shows the code the service made up.
    const partnerName = `partner_${process.pid}`;
    await form.getByRole('textbox', { name: 'Username' }).fill(partnerName);
    await form.getByRole('textbox', { name: 'Password' }).fill('a-partner-password-1234');
    await form.getByRole('textbox', { name: 'Commission, %' }).fill('12.5');
    await form.getByRole('button', { name: 'Create' }).click();
    const created = form.getByRole('region', { name: 'Account created' });
    await created.getByText('Role: Partner').waitFor();
    const [partner] = (
      await db.query<{ partner_code: string; commission_percent: string }>(
        `SELECT partner_code, commission_percent::text FROM users
          WHERE username = $1 AND role = 'partner'`,
        [partnerName],
      )
    ).rows;
    expect(partner.commission_percent).toBe('12.50');
    expect(await created.textContent()).toContain(`Partner code: ${partner.partner_code}`);
    expect(await created.textContent()).toContain('Commission: 12.5%');
    await expectAccessible(mod, 'users, as a moderator sees them');
    await app.shot(mod, 'users-moderator-view');
  });

  it('the owner sets the moderator a new password after naming them; the old one stops working', async () => {
    const page = ownerPage;
    const actions = page.getByRole('region', { name: 'Actions' });
    await actions.getByRole('button', { name: 'Set a new password' }).click();
    const dialog = page.getByRole('dialog', { name: 'Set a new password' });
    await dialog
      .getByText(`Give ${moderatorName} a new password? Every session of that account ends`)
      .waitFor();
    const newPassword = 'a-fresh-moderator-password-7';
    await dialog.getByRole('textbox', { name: 'Password' }).fill(newPassword);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByText(`${moderatorName} has a new password.`).waitFor();

    const signIn = (password: string) =>
      fetch(app.url('/api/v1/auth/admin/login'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: moderatorName, password }),
      });
    expect((await signIn(moderatorPassword)).status).toBe(401);
    expect((await signIn(newPassword)).status).toBe(200);
    const audited = (await auditOf(moderatorId)).map((e) => [e.action, e.actor_id]);
    expect(audited).toEqual(
      expect.arrayContaining([
        ['staff.created', owner.user.id],
        ['user.node_access_changed', owner.user.id],
        ['user.password_reset', owner.user.id],
      ]),
    );
  });
});
