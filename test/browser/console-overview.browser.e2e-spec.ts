/**
 * The staff console's Overview, Plans, Audit log and Settings in a real Chromium, against the
 * service as an operator runs it. The overview is read on a seeded data set (accounts, paid
 * invoices, tickets, withdrawals, nodes and their traffic on known days) and compared with what
 * the database holds; plans, the audit log and the default traffic limit are changed through the
 * pages and checked through the database, the API and the subscriber's own /plans page. Every page
 * is checked with axe-core; screenshots go to test-artifacts/console/.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import type { Locator, Page } from 'playwright-core';
import { Invoice } from '../../src/billing/entities/invoice.entity';
import { NodeTrafficDay } from '../../src/nodes/entities/node-traffic-day.entity';
import { NodesRepository } from '../../src/nodes/nodes.repository';
import { shownOnlineSql } from '../../src/nodes/node-status';
import { WithdrawalRequest } from '../../src/partners/entities/withdrawal-request.entity';
import { minorToDecimal } from '../../web/src/i18n/money';
import type { TestApp } from '../harness/app';
import { newUser, savePlan, type TestUser } from '../harness/factories';
import { DAY, dayAgo, invoiceRow, noonAgo } from '../harness/stats-seed';
import { freePort } from '../harness/metrics';
import { createNode, tcpListener } from '../harness/nodes';
import {
  type BrowserApp,
  expectAccessible,
  pathname,
  signInToConsole,
  startBrowserApp,
} from './browser-app';
import { buildWebApp } from './web-build';

const API = '/api/v1';
const GB = 1024 ** 3;

/** Bytes as the console writes them (the web app's `bytes()`, English). */
function bytesText(value: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let n = value;
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit += 1;
  }
  return `${new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 }).format(n)} ${units[unit]}`;
}

describe('the staff console: overview, plans, audit log, settings', () => {
  jest.setTimeout(90_000);
  let app: BrowserApp;
  let side: TestApp;
  let db: Client;
  let owner: TestUser;
  let moderator: TestUser;
  let page: Page;
  /** The online node's tunnel port: it answers, so a health check finds the node online too. */
  let tunnel: Awaited<ReturnType<typeof tcpListener>>;

  beforeAll(async () => {
    // One health check a day (the first soon after start): it finds what the seed records, as
    // the online node's tunnel port answers and the other's does not.
    app = await startBrowserApp('console', { NODE_HEALTH_INTERVAL_S: '86400' });
    tunnel = await tcpListener();
    ({ side, db } = app);
    [owner, moderator] = await Promise.all([newUser(side, 'owner'), newUser(side, 'moderator')]);
    await savePlan(side, owner, { prices: { USD: '499' } }, 'monthly');
    await seed();
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await tunnel?.close();
  });

  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  /**
   * Accounts on known days (two with a running subscription), invoices paid in USD and TON two
   * days ago and in EUR today, an open ticket, a pending withdrawal, two nodes (one online) and
   * their traffic two days ago and today.
   */
  async function seed(): Promise<void> {
    const running = new Date(Date.now() + 5 * DAY);
    const buyers = await Promise.all([
      newUser(side, 'seed', {
        createdAt: noonAgo(2),
        planName: 'monthly',
        subscriptionExpiresAt: running,
      }),
      newUser(side, 'seed', { createdAt: noonAgo(2) }),
      newUser(side, 'telegram', {
        createdAt: noonAgo(5),
        planName: 'monthly',
        subscriptionExpiresAt: running,
      }),
      newUser(side, 'seed', { createdAt: noonAgo(40) }),
      newUser(side, 'partner', { createdAt: noonAgo(1) }),
    ]);
    const invoice = (fields: Partial<Invoice>) => invoiceRow(buyers[0].user.id, fields);
    await side.dataSource.getRepository(Invoice).save([
      invoice({ paidAt: noonAgo(2) }),
      invoice({ paidAt: new Date(noonAgo(2).getTime() + 3_600_000), amount: '501' }),
      invoice({
        provider: 'ton',
        amount: '2500000000',
        comment: randomUUID(),
        paidAt: noonAgo(2),
      }),
      invoice({ currency: 'EUR', amount: '450', paidAt: new Date() }),
      invoice({ status: 'pending', paidAt: null }),
    ]);
    await side
      .http()
      .post(`${API}/tickets`)
      .set(buyers[1].bearer)
      .send({ subject: 'Cannot connect', message: 'hello' })
      .expect(201);
    await side.dataSource.getRepository(WithdrawalRequest).save({
      partnerId: buyers[4].user.id,
      amount: '100',
      currency: 'USD',
      destination: 'UQ-partner',
      status: 'pending',
    });
    const nodes = await Promise.all([
      createNode(side, owner, { tunnel_port: tunnel.port }),
      createNode(side, owner, { tunnel_port: await freePort() }),
    ]);
    await side.app
      .get(NodesRepository)
      .recordHealth([nodes[0].id, nodes[1].id], ['online', 'offline']);
    // Online as staff are shown it: provisioned, and its agent has just reported.
    await side.dataSource.query(
      `UPDATE nodes SET provision_state = 'ready', last_report_at = now() WHERE id = $1`,
      [nodes[0].id],
    );
    await side.dataSource.getRepository(NodeTrafficDay).save([
      { nodeId: nodes[0].id, day: dayAgo(2), bytesUp: '1000', bytesDown: '2000' },
      { nodeId: nodes[1].id, day: dayAgo(2), bytesUp: '5', bytesDown: '7' },
      { nodeId: nodes[0].id, day: dayAgo(0), bytesUp: '10', bytesDown: '0' },
    ]);
  }

  const count = async (sql: string): Promise<number> =>
    Number((await db.query<{ n: string }>(sql)).rows[0].n);

  /** The value shown beside a figure's term in the Today section. */
  const figure = (today: Locator, term: string) =>
    today.locator(`dt:text-is("${term}") + dd`).textContent();

  /** A chart's text alternative (its hidden table): day → the figure as written. */
  async function chartTable(name: string): Promise<Record<string, string>> {
    const table = page.getByRole('table', { name, exact: true });
    const rows = await table
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.querySelector('th')?.textContent ?? '',
          tr.querySelector('td')?.textContent ?? '',
        ]),
      );
    return Object.fromEntries(rows);
  }

  it("the owner's overview shows what the database holds, today's figures and 30 days", async () => {
    // One account waits for its first connection, and the bot warned two of their traffic today.
    await db.query(
      `UPDATE users SET subscription_on_hold_until = now() + interval '20 days'
        WHERE id = (SELECT id FROM users WHERE role IS NULL ORDER BY created_at LIMIT 1)`,
    );
    await db.query(
      `INSERT INTO traffic_warnings (user_id, kind, period_key, sent_at)
       SELECT id, 'traffic80', now(), now() FROM users WHERE role IS NULL ORDER BY created_at LIMIT 2`,
    );
    page = await app.newPage();
    await signInToConsole(app, page, owner);
    expect(pathname(page)).toBe('/staff/overview');
    const today = page.getByRole('region', { name: 'Today' });
    await today.waitFor();

    const held = {
      users: await count('SELECT count(*) AS n FROM users'),
      running: await count('SELECT count(*) AS n FROM users WHERE subscription_expires_at > now()'),
      tickets: await count(`SELECT count(*) AS n FROM tickets WHERE status = 'open'`),
      withdrawals: await count(
        `SELECT count(*) AS n FROM withdrawal_requests WHERE status = 'pending'`,
      ),
      online: await count(
        `SELECT count(*) AS n FROM nodes n WHERE deleted_at IS NULL AND ${shownOnlineSql('n')}`,
      ),
      nodes: await count('SELECT count(*) AS n FROM nodes WHERE deleted_at IS NULL'),
    };
    // The seed's own figures: 2 staff + 5 accounts, 2 running, 1 open, 1 pending, 1 of 2.
    expect(held).toEqual({
      users: 7,
      running: 2,
      tickets: 1,
      withdrawals: 1,
      online: 1,
      nodes: 2,
    });
    expect(await figure(today, 'Accounts')).toBe(String(held.users));
    expect(await figure(today, 'Running subscriptions')).toBe(String(held.running));
    expect(await figure(today, 'Open tickets')).toBe(String(held.tickets));
    expect(await figure(today, 'Pending withdrawals')).toBe(String(held.withdrawals));
    expect(await figure(today, 'Nodes online')).toBe(`${held.online} of ${held.nodes}`);
    expect(await figure(today, 'Received today')).toBe('4.5 EUR');
    expect(await figure(today, 'Waiting for first connection')).toBe('1');
    expect(await figure(today, 'Traffic warnings sent today')).toBe('2');

    // Per day, as the database holds it: accounts created, invoices paid and what they brought
    // (TON invoices in TON), bytes the nodes carried.
    const days = Array.from({ length: 30 }, (_, i) => dayAgo(29 - i));
    const perDay = async (sql: string): Promise<Map<string, string>> =>
      new Map(
        (await db.query<{ day: string; v: string }>(sql)).rows.map((row) => [row.day, row.v]),
      );
    const signups = await perDay(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::text AS v
         FROM users GROUP BY 1`,
    );
    const paid = await perDay(
      `SELECT to_char(paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::text AS v
         FROM invoices WHERE status = 'paid' GROUP BY 1`,
    );
    const received = (currency: string) =>
      perDay(
        `SELECT to_char(paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(amount)::text AS v
           FROM invoices WHERE status = 'paid'
            AND (CASE WHEN provider = 'ton' THEN 'TON' ELSE currency END) = '${currency}'
          GROUP BY 1`,
      );
    const traffic = await perDay(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(bytes_up + bytes_down)::text AS v
         FROM node_traffic_days GROUP BY 1`,
    );
    const expectChart = async (
      name: string,
      held: Map<string, string>,
      text: (v: string) => string,
    ) =>
      expect([name, await chartTable(name)]).toEqual([
        name,
        Object.fromEntries(days.map((day) => [day, text(held.get(day) ?? '0')])),
      ]);
    await expectChart('Sign-ups', signups, (v) => v);
    await expectChart('Paid invoices', paid, (v) => v);
    for (const currency of ['EUR', 'TON', 'USD']) {
      await expectChart(
        `Money received, ${currency}`,
        await received(currency),
        (v) => `${minorToDecimal(v, currency)} ${currency}`,
      );
    }
    await expectChart('Traffic', traffic, (v) => bytesText(Number(v)));
    // The seeded days, in words: what a person reads in the tables and captions.
    expect((await chartTable('Money received, USD'))[dayAgo(2)]).toBe('10 USD');
    expect((await chartTable('Money received, TON'))[dayAgo(2)]).toBe('2.5 TON');
    expect((await chartTable('Traffic'))[dayAgo(2)]).toBe('2.9 KB');
    expect((await chartTable('Sign-ups'))[dayAgo(2)]).toBe('2');
    await expect(
      page.getByRole('region', { name: 'Paid invoices' }).locator('figcaption').textContent(),
    ).resolves.toMatch(/^Last 30 days; the highest on .+: 3\.$/);
    // The pictures themselves are drawn.
    expect(await page.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);

    await expectAccessible(page, 'overview');
    await app.shot(page, 'overview');
  });

  it('the owner creates a plan, edits it and deactivates it; the subscriber no longer sees it', async () => {
    await page.getByRole('tab', { name: 'Plans' }).click();
    await page.getByRole('heading', { name: 'Plans', level: 2 }).waitFor();
    expect(pathname(page)).toBe('/staff/plans');
    const list = page.getByRole('region', { name: 'Every plan' });
    await list.getByRole('rowheader', { name: 'monthly' }).waitFor();
    await expectAccessible(page, 'plans');
    await app.shot(page, 'plans');

    await page.getByRole('button', { name: 'New plan' }).click();
    const dialog = page.getByRole('dialog', { name: 'New plan' });
    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('weekly');
    await dialog.getByLabel('Duration, days').fill('7');
    await dialog.getByLabel('Traffic limit, GB').fill('20');
    await dialog.getByLabel('Currency 1', { exact: true }).fill('USD');
    await dialog.getByLabel('Price 1', { exact: true }).fill('1.999');
    await dialog.getByRole('button', { name: 'Add a price' }).click();
    await dialog.getByLabel('Currency 2', { exact: true }).fill('EUR');
    await dialog.getByLabel('Price 2', { exact: true }).fill('1.79');
    await dialog.getByRole('button', { name: 'Save plan' }).click();
    // A price finer than the currency's cents is refused before anything is sent.
    await expect(dialog.getByRole('alert').textContent()).resolves.toBe(
      'The price in USD must be a positive amount of that currency.',
    );
    await dialog.getByLabel('Price 1', { exact: true }).fill('1.99');
    await expectAccessible(page, 'new plan');
    await app.shot(page, 'plan-new');
    await dialog.getByRole('button', { name: 'Save plan' }).click();
    await dialog.waitFor({ state: 'hidden' });

    await page.getByText('Plan weekly saved.').waitFor();
    const row = list.getByRole('row', { name: /weekly/ });
    await row.getByText('Active', { exact: true }).waitFor();
    expect(await row.textContent()).toContain('20 GB');
    expect(await row.textContent()).toContain('1.79 EUR, 1.99 USD');
    const plansOfApi = async () =>
      (await side.http().get(`${API}/admin/plans`).set(owner.bearer).expect(200)).body as {
        name: string;
      }[];
    expect((await plansOfApi()).find((plan) => plan.name === 'weekly')).toEqual({
      name: 'weekly',
      duration_days: 7,
      traffic_limit_bytes: 20 * GB,
      prices: { USD: '199', EUR: '179' },
      // The form's device limit left empty: the service's default (DEVICE_LIMIT_DEFAULT).
      device_limit: 3,
      // And the plan's period rules as a new plan has them.
      traffic_reset: 'none',
      reset_day: 1,
      starts: 'on_purchase',
      on_hold_max_days: 30,
      display: {},
      active: true,
    });

    const subscriber = await app.newPage();
    await subscriber.goto(app.url('/plans'));
    await subscriber.getByRole('heading', { name: 'weekly' }).waitFor();

    await row.getByRole('button', { name: 'Edit weekly' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit plan weekly' });
    await edit.getByLabel('Duration, days').fill('8');
    await edit.getByRole('button', { name: 'Save plan' }).click();
    await edit.waitFor({ state: 'hidden' });
    await row.getByRole('cell', { name: '8', exact: true }).waitFor();

    await row.getByRole('button', { name: 'Deactivate weekly' }).click();
    const confirm = page.getByRole('dialog', { name: 'Deactivate weekly' });
    await confirm
      .getByText(
        'Plan weekly will no longer be listed or sold. Running subscriptions keep their days.',
      )
      .waitFor();
    await expectAccessible(page, 'deactivate plan');
    await app.shot(page, 'plan-deactivate');
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await page.getByText('Plan weekly is no longer on sale.').waitFor();
    await row.getByText('Inactive', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Activate weekly' }).waitFor();
    expect((await plansOfApi()).find((plan) => plan.name === 'weekly')).toMatchObject({
      duration_days: 8,
      active: false,
    });

    await subscriber.reload();
    await subscriber.getByRole('heading', { name: 'monthly' }).waitFor();
    expect(await subscriber.getByRole('heading', { name: 'weekly' }).count()).toBe(0);
  });

  it('the audit log shows who changed the plan and what, narrowed by its filters', async () => {
    await page.getByRole('tab', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log', level: 2 }).waitFor();
    const entries = page.getByRole('region', { name: 'Entries' });
    await entries.getByText('plan.created').first().waitFor();

    const filters = page.getByRole('region', { name: 'Filters' });
    await filters.getByLabel('Action').fill('plan.changed');
    await filters.getByLabel('Target (id or name)').fill('weekly');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await entries.getByText('plan.created').waitFor({ state: 'hidden' });
    const rows = entries.locator('tbody tr');
    await rows.nth(1).waitFor();
    await expect(rows.count()).resolves.toBe(2);
    const newest = rows.first();
    await newest.getByText(`${owner.user.username} (owner)`).waitFor();
    expect(await newest.textContent()).toContain('plan weekly');
    expect(await newest.textContent()).toContain('active: true → false');
    expect(await rows.nth(1).textContent()).toContain('duration_days: 7 → 8');

    const held = (
      await db.query<{ actor_id: string; before: { active: boolean }; after: { active: boolean } }>(
        `SELECT actor_id, before, after FROM audit_log
          WHERE action = 'plan.changed' AND target_type = 'plan' AND target_id = 'weekly'
          ORDER BY created_at DESC, id DESC`,
      )
    ).rows;
    expect(held.map((entry) => entry.actor_id)).toEqual([owner.user.id, owner.user.id]);
    expect([held[0].before.active, held[0].after.active]).toEqual([true, false]);

    await expectAccessible(page, 'audit log');
    await app.shot(page, 'audit');

    // Choosing who acted narrows the log to that account's entries, every one of them.
    await filters.getByRole('button', { name: 'Clear' }).click();
    await entries.getByText('plan.created').first().waitFor();
    await entries
      .getByRole('button', { name: `${owner.user.username} (owner)` })
      .first()
      .click();
    await expect(filters.getByLabel('Who (account id)').inputValue()).resolves.toBe(owner.user.id);
    const byOwner = await count(
      `SELECT count(*) AS n FROM audit_log WHERE actor_id = '${owner.user.id}'`,
    );
    expect(byOwner).toBeGreaterThanOrEqual(4);
    await rows.nth(byOwner - 1).waitFor();
    await expect(rows.count()).resolves.toBe(byOwner);
    expect(await rows.locator('td:nth-child(2)').allTextContents()).toEqual(
      Array(byOwner).fill(`${owner.user.username} (owner)`),
    );
  });

  it('settings change the default traffic limit, which accounts without their own then get', async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    const section = page.getByRole('region', { name: 'Default traffic limit' });
    await section.getByText('The service does not report the current default').waitFor();
    await section.getByLabel('New default limit, GB').fill('50');
    await section.getByRole('button', { name: 'Save the default' }).click();
    await section.getByText(`The default limit is now 50 GB (${50 * GB} bytes).`).waitFor();

    const stored = await db.query<{ value: string }>(
      `SELECT value #>> '{}' AS value FROM app_settings WHERE key = 'traffic_limit_default_bytes'`,
    );
    expect(stored.rows).toEqual([{ value: String(50 * GB) }]);
    const plain = await newUser(side, 'seed');
    const me = await side.http().get(`${API}/users/me`).set(plain.bearer).expect(200);
    expect(me.body.traffic.limit_bytes).toBe(50 * GB);

    await section.getByLabel('New default limit, GB').fill('0');
    await section.getByRole('button', { name: 'Save the default' }).click();
    await expect(section.getByRole('alert').textContent()).resolves.toBe(
      'The limit must be a number of GB above 0.',
    );
    await expectAccessible(page, 'settings');
    await app.shot(page, 'settings');
  });

  it('a moderator sees no Audit tab, and the route refuses it anyway', async () => {
    const other = await app.newPage();
    await signInToConsole(app, other, moderator);
    const tabs = other.getByRole('tablist', { name: 'Staff console' });
    await tabs.getByRole('tab', { name: 'Overview' }).waitFor();
    // A moderator without node access: every staff page but Nodes and the owner's Audit log.
    expect(await tabs.getByRole('tab').allTextContents()).toEqual([
      'Overview',
      'Users',
      'Plans',
      'Payments',
      'Payouts',
      'Tickets',
      'Settings',
      'Security',
    ]);
    await other.goto(app.url('/staff/audit'));
    await other.getByRole('region', { name: 'Today' }).waitFor();
    expect(pathname(other)).toBe('/staff/overview');
    await side.http().get(`${API}/admin/audit`).set(moderator.bearer).expect(403);
    await expectAccessible(other, 'moderator overview');
    await app.shot(other, 'moderator');
  });

  it("the subscriber app's initial JavaScript holds no console code; the staff chunk does", async () => {
    const html = await (await fetch(app.url('/'))).text();
    const initial = [
      ...html.matchAll(/<script[^>]*\bsrc="\/([^"]+\.js)"/g),
      ...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="\/([^"]+\.js)"/g),
    ].map((match) => match[1]);
    expect(initial.length).toBeGreaterThan(0);
    const dir = buildWebApp();
    const later = readdirSync(join(dir, 'assets'))
      .map((name) => `assets/${name}`)
      .filter((file) => file.endsWith('.js') && !initial.includes(file));
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    // Paths only the console's pages call, and the chart library's own class names.
    const consoleMarks = [
      '/admin/stats',
      '/admin/audit',
      '/admin/settings/traffic-limit',
      'recharts-',
    ];
    for (const file of initial) {
      const text = read(file);
      expect([file, consoleMarks.filter((mark) => text.includes(mark))]).toEqual([file, []]);
    }
    const lazy = later.map(read).join('\n');
    expect(consoleMarks.filter((mark) => !lazy.includes(mark))).toEqual([]);
  });
});
