/**
 * The staff console's money and support pages in a real Chromium (test/browser/browser-app.ts):
 * a moderator approves, rejects and pays partners' withdrawals; attaches a TON transfer that paid
 * no invoice (found by the service's own reconciliation on the fake toncenter) to a buyer's
 * invoice; support answers and closes a ticket and sees nothing else. The database is read to
 * check that it agrees with what the pages show. Screenshots go to test-artifacts/console/.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import type { Page } from 'playwright-core';
import { tonTransaction, type FakeToncenter } from '../fakes/toncenter';
import type { TestApp } from '../harness/app';
import { newUser, savePlan, type TestUser } from '../harness/factories';
import {
  type BrowserApp,
  expectAccessible,
  pathname,
  signInToConsole,
  startBrowserApp,
  WALLET,
} from './browser-app';

const WALLET_RAW = WALLET.toRawString().toUpperCase();

interface Invoice {
  id: string;
  amount: string;
  payment: { comment: string };
}

describe('the staff console: payments, payouts, tickets', () => {
  jest.setTimeout(90_000);
  let app: BrowserApp;
  let side: TestApp;
  let db: Client;
  let toncenter: FakeToncenter;
  let moderator: TestUser;
  let moderatorPage: Page;

  beforeAll(async () => {
    // Reconciliation runs every 2 seconds: transfers pushed to the fake toncenter are read, paid
    // or kept as unmatched by the service itself, as in production.
    app = await startBrowserApp('console', { RECONCILE_INTERVAL_S: '2' });
    ({ side, db, toncenter } = app);
    const owner = await newUser(side, 'owner');
    await savePlan(side, owner, { prices: { USD: '499' } }, 'monthly');
    moderator = await newUser(side, 'moderator');
    moderatorPage = await app.newPage();
    await signInToConsole(app, moderatorPage, moderator);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  });

  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  /** A call to the service as `who`, with its Bearer token. */
  async function call<T>(who: TestUser, method: string, path: string, body?: unknown) {
    const response = await fetch(app.url(`/api/v1${path}`), {
      method,
      headers: { ...who.bearer, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as T };
  }

  /** Polls a query until `done` holds for its rows (the service works on its own schedule). */
  async function eventually<R extends Record<string, unknown>>(
    sql: string,
    params: unknown[],
    done: (rows: R[]) => boolean,
  ): Promise<R[]> {
    const until = Date.now() + 30_000;
    for (;;) {
      const rows = (await db.query<R>(sql, params)).rows;
      if (done(rows)) return rows;
      if (Date.now() > until) throw new Error(`not reached: ${sql} ${JSON.stringify(rows)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  const order = async (buyer: TestUser) => {
    const made = await call<Invoice>(buyer, 'POST', '/invoices', {
      plan_name: 'monthly',
      currency: 'USD',
      provider: 'ton',
    });
    expect(made.status).toBe(201);
    return made.body;
  };

  const transfer = (value: string, comment: string | null) => {
    const tx = tonTransaction({ to: WALLET_RAW, value, comment });
    toncenter.transactions.push(tx);
    return tx.hash as string;
  };

  const withdrawalRow = (page: Page, amount: string) =>
    page
      .getByRole('region', { name: 'Withdrawals' })
      .getByRole('row')
      .filter({ hasText: `${amount}UQ-partner-wallet` });

  it('a moderator approves and pays one withdrawal, rejects another; a stale move is refused in words', async () => {
    // A buyer of the partner pays 4.99 USD in TON; reconciliation finds it: 0.49 USD commission.
    const partner = await newUser(side, 'partner');
    const buyer = await newUser(side, 'seed');
    const attached = await call(buyer, 'POST', '/users/me/partner', {
      partner_code: partner.user.partnerCode,
    });
    expect(attached.status).toBe(200);
    const invoice = await order(buyer);
    transfer(invoice.amount, invoice.payment.comment);
    await eventually(
      `SELECT 1 FROM partner_commissions WHERE partner_id = $1`,
      [partner.user.id],
      (rows) => rows.length === 1,
    );
    const ask = async (amount: string) => {
      const made = await call<{ id: string }>(partner, 'POST', '/partners/me/withdrawals', {
        amount,
        currency: 'USD',
        destination: 'UQ-partner-wallet',
      });
      expect(made.status).toBe(201);
      return made.body.id;
    };
    const paidOne = await ask('40');
    const rejectedOne = await ask('5');

    const page = moderatorPage;
    await page.getByRole('tab', { name: 'Payouts' }).click();
    await page.getByRole('heading', { name: 'Payouts' }).waitFor();
    expect(pathname(page)).toBe('/staff/payouts');
    const first = withdrawalRow(page, '0.4 USD');
    await first.getByText('Pending').waitFor();
    await expectAccessible(page, 'payouts');
    await app.shot(page, 'payouts');

    await first.getByRole('button', { name: 'Approve' }).click();
    const approve = page.getByRole('dialog', { name: 'Approve' });
    await approve.getByText('Approve paying 0.4 USD to UQ-partner-wallet?').waitFor();
    await expectAccessible(page, 'approve dialog');
    await approve.getByRole('button', { name: 'Confirm' }).click();
    await first.getByText('Approved').waitFor();
    const state = async (id: string) =>
      (
        await db.query<{ status: string; tx_ref: string | null; reason: string | null }>(
          `SELECT status, tx_ref, reason FROM withdrawal_requests WHERE id = $1`,
          [id],
        )
      ).rows[0];
    expect(await state(paidOne)).toMatchObject({ status: 'approved', tx_ref: null });

    await first.getByRole('button', { name: 'Mark paid' }).click();
    const paid = page.getByRole('dialog', { name: 'Mark paid' });
    await paid.getByLabel('Payout reference').fill('bank-transfer-0042');
    await paid.getByRole('button', { name: 'Confirm' }).click();
    await first.getByText('Reference: bank-transfer-0042').waitFor();
    await first.getByText('Paid', { exact: true }).waitFor();
    expect(await state(paidOne)).toEqual({
      status: 'paid',
      tx_ref: 'bank-transfer-0042',
      reason: null,
    });

    const second = withdrawalRow(page, '0.05 USD');
    await second.getByRole('button', { name: 'Reject' }).click();
    const reject = page.getByRole('dialog', { name: 'Reject' });
    await reject.getByLabel('Reason, shown to the partner').fill('Wrong wallet, ask again');
    await reject.getByRole('button', { name: 'Confirm' }).click();
    await second.getByText('Reason: Wrong wallet, ask again').waitFor();
    expect(await state(rejectedOne)).toMatchObject({
      status: 'rejected',
      reason: 'Wrong wallet, ask again',
    });

    // The partner's balance agrees: 0.40 paid out, the rejected 0.05 available again.
    const earnings = await call<{ balances: Record<string, string>[] }>(
      partner,
      'GET',
      '/partners/me/earnings',
    );
    expect(earnings.body.balances).toEqual([
      expect.objectContaining({
        currency: 'USD',
        earned: '49',
        requested: '0',
        paid: '40',
        available: '9',
      }),
    ]);

    // Another staff member rejects a third one while this page still offers to approve it.
    const stale = await ask('3');
    await page.getByLabel('State', { exact: true }).selectOption('pending');
    const third = withdrawalRow(page, '0.03 USD');
    await third.waitFor();
    const colleague = await newUser(side, 'moderator');
    expect(
      (await call(colleague, 'POST', `/admin/withdrawals/${stale}/reject`, { reason: 'dup' }))
        .status,
    ).toBe(200);
    await third.getByRole('button', { name: 'Approve' }).click();
    await approve.getByRole('button', { name: 'Confirm' }).click();
    await expect(approve.getByRole('alert').textContent()).resolves.toBe(
      'This withdrawal cannot be changed now.',
    );
    await approve.getByRole('button', { name: 'Cancel' }).click();
    // Read again after the refusal: it has left the pending list.
    await third.waitFor({ state: 'detached' });
    expect(await state(stale)).toMatchObject({ status: 'rejected', reason: 'dup' });
  });

  it('an unmatched TON transfer is attached to an expired invoice and extends the subscription; a too-small one is refused in words', async () => {
    const buyer = await newUser(side, 'seed');
    const lapsed = await order(buyer);
    // The first invoice ran out before the buyer paid, as the expiry job leaves it; ordering the
    // plan again then makes a new invoice (a pending one would be offered again instead).
    await db.query(
      `UPDATE invoices SET status = 'expired', expires_at = now() - interval '1 hour' WHERE id = $1`,
      [lapsed.id],
    );
    const pending = await order(buyer);
    expect(pending.id).not.toBe(lapsed.id);
    // An hour ago, 55 small gifts: more than one page of the list (50).
    const anHourAgo = Math.floor(Date.now() / 1000) - 3600;
    const gifts = Array.from({ length: 55 }, (_, i) => {
      const tx = tonTransaction({
        to: WALLET_RAW,
        value: '1000',
        comment: `gift ${i}`,
        at: anHourAgo,
      });
      toncenter.transactions.push(tx);
      return tx.hash as string;
    });
    // Both sent without the invoice's comment: reconciliation cannot tell what they pay.
    const exact = transfer(lapsed.amount, null);
    const short = transfer((BigInt(pending.amount) - 1n).toString(), 'for my vpn');
    await eventually(
      `SELECT tx_ref FROM received_payments WHERE tx_ref = ANY($1) AND reason = 'no_invoice'`,
      [[exact, short, ...gifts]],
      (rows) => rows.length === 57,
    );

    const page = moderatorPage;
    await page.getByRole('tab', { name: 'Payments' }).click();
    await page.getByRole('heading', { name: 'Payments', exact: true }).waitFor();
    const invoices = page.getByRole('region', { name: 'Invoices' });
    await invoices.getByLabel('Account').fill(buyer.user.id);
    // Both of the buyer's invoices, and only them, with their ids as staff copy them.
    const lapsedRow = invoices.getByRole('row').filter({ hasText: lapsed.id });
    await lapsedRow.getByText('Expired').waitFor();
    await invoices.getByRole('row').filter({ hasText: pending.id }).getByText('Pending').waitFor();
    await expect(invoices.getByRole('row').count()).resolves.toBe(3);
    await invoices.getByLabel('Status').selectOption('expired');
    await invoices.getByRole('row').filter({ hasText: pending.id }).waitFor({ state: 'detached' });
    // The filtered list is read anew: its rows are counted once it has come.
    await lapsedRow.getByText('Expired').waitFor();
    await expect(invoices.getByRole('row').count()).resolves.toBe(2);
    await invoices.getByLabel('Status').selectOption('');

    const unmatched = page.getByRole('region', { name: 'Unmatched payments' });
    // The page was read when the moderator signed in, before these arrived.
    await unmatched.getByRole('button', { name: 'Refresh' }).click();
    const exactRow = unmatched.getByRole('row').filter({ hasText: exact });
    const shortRow = unmatched.getByRole('row').filter({ hasText: short });
    await exactRow.getByText('Its comment names no invoice that could be paid').waitFor();
    expect(await shortRow.textContent()).toContain('for my vpn');
    await expectAccessible(page, 'payments');
    await app.shot(page, 'payments');
    // A page at a time, newest first: the oldest gifts only after "More", each listed once.
    await expect(unmatched.getByRole('row').count()).resolves.toBe(1 + 50);
    await unmatched.getByRole('button', { name: 'More' }).click();
    await unmatched.getByRole('row').nth(57).waitFor();
    await expect(unmatched.getByRole('row').count()).resolves.toBe(1 + 57);
    await expect(unmatched.getByRole('button', { name: 'More' }).count()).resolves.toBe(0);
    const listed = await unmatched.getByRole('row').allTextContents();
    expect(gifts.filter((hash) => listed.some((row) => row.includes(hash)))).toHaveLength(55);

    await shortRow.getByRole('button', { name: 'Attach to an invoice' }).click();
    const dialog = page.getByRole('dialog', { name: 'Attach to an invoice' });
    await dialog.getByLabel('Invoice id').fill('the buyer');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await expect(dialog.getByRole('alert').textContent()).resolves.toBe(
      'Some of what you entered is not valid. Enter the whole invoice id (36 characters).',
    );
    await dialog.getByLabel('Invoice id').fill(pending.id);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await expect(dialog.getByRole('alert').textContent()).resolves.toBe(
      'The payment is smaller than the invoice.',
    );
    await expectAccessible(page, 'attach refused');
    await app.shot(page, 'attach-refused');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    await exactRow.getByRole('button', { name: 'Attach to an invoice' }).click();
    await dialog.getByLabel('Invoice id').fill(randomUUID());
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await expect(dialog.getByRole('alert').textContent()).resolves.toBe(
      'There is no invoice with this id, or this payment has been attached already.',
    );
    await dialog.getByLabel('Invoice id').fill(lapsed.id);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    const done = unmatched.getByRole('status').filter({ hasText: `Invoice ${lapsed.id} is paid` });
    await done.waitFor();
    await exactRow.waitFor({ state: 'detached' });
    await lapsedRow.getByText('Paid', { exact: true }).waitFor();

    const [row] = (
      await db.query<{ status: string; expires_at: Date; kept: string | null }>(
        `SELECT i.status, u.subscription_expires_at AS expires_at, r.invoice_id AS kept
           FROM invoices i JOIN users u ON u.id = i.user_id
           JOIN received_payments r ON r.tx_ref = $2
          WHERE i.id = $1`,
        [lapsed.id, exact],
      )
    ).rows;
    expect(row.status).toBe('paid');
    expect(row.kept).toBe(lapsed.id);
    const days = (row.expires_at.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    const endDate = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });
    expect(await done.textContent()).toContain(endDate.format(row.expires_at));
    const [other] = (
      await db.query<{ status: string }>(`SELECT status FROM invoices WHERE id = $1`, [pending.id])
    ).rows;
    expect(other.status).toBe('pending');
  });

  it('support answers and closes a ticket, sees no other tab, and is sent back from payments', async () => {
    const user = await newUser(side, 'seed');
    const opened = await call<{ ticket: { id: string } }>(user, 'POST', '/tickets', {
      subject: 'The app will not connect on hotel wifi',
      message: 'It says timeout.',
    });
    expect(opened.status).toBe(201);
    const ticketId = opened.body.ticket.id;

    const support = await newUser(side, 'support');
    const page = await app.newPage();
    await signInToConsole(app, page, support);
    await page.getByRole('heading', { name: 'Tickets' }).waitFor();
    expect(pathname(page)).toBe('/staff/tickets');
    // Tickets, and the second factor every staff account sets up for itself.
    await expect(page.getByRole('tab').allTextContents()).resolves.toEqual(['Tickets', 'Security']);

    const queue = page.getByRole('region', { name: 'Tickets in the queue' });
    const entry = queue.getByRole('row').filter({ hasText: 'The app will not connect' });
    await entry.getByText('Awaiting a reply').waitFor();
    await expectAccessible(page, 'tickets');
    await app.shot(page, 'tickets');

    await entry.getByRole('link', { name: 'The app will not connect on hotel wifi' }).click();
    await page.getByRole('heading', { name: 'The app will not connect on hotel wifi' }).waitFor();
    expect(pathname(page)).toBe(`/staff/tickets/${ticketId}`);
    await page.getByText('It says timeout.').waitFor();
    await page.getByLabel('Reply').fill('Switch the transport to TCP in the settings.');
    await page.getByRole('button', { name: 'Send the reply' }).click();
    const messages = page.getByRole('list', { name: 'Messages' }).getByRole('listitem');
    await messages.filter({ hasText: 'Switch the transport to TCP' }).waitFor();
    expect(await messages.nth(1).textContent()).toMatch(/^Staff/);
    await expect(page.getByLabel('Reply').inputValue()).resolves.toBe('');
    await expectAccessible(page, 'ticket thread');
    await app.shot(page, 'ticket');

    await page.getByRole('button', { name: 'Close the ticket' }).click();
    const dialog = page.getByRole('dialog', { name: 'Close the ticket' });
    await dialog.getByText('Close “The app will not connect on hotel wifi”?').waitFor();
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.getByText('This ticket is closed.').waitFor();

    const [ticket] = (
      await db.query<{ status: string }>(`SELECT status FROM tickets WHERE id = $1`, [ticketId])
    ).rows;
    expect(ticket.status).toBe('closed');
    const thread = await call<{ messages: { author_role: string; author_id: string }[] }>(
      user,
      'GET',
      `/tickets/${ticketId}`,
    );
    expect(thread.body.messages.map((m) => m.author_role)).toEqual(['user', 'staff']);
    expect(thread.body.messages[1].author_id).toBe(support.user.id);

    await page.getByRole('link', { name: 'All tickets' }).click();
    await queue.getByText('None yet').waitFor();
    await page.getByLabel('Queue', { exact: true }).selectOption('closed');
    await queue.getByRole('link', { name: 'The app will not connect on hotel wifi' }).waitFor();

    // Payments are the staff guard's: the address lands on a page support may open.
    await page.goto(app.url('/staff/payments'));
    await page.getByRole('heading', { name: 'Tickets' }).waitFor();
    expect(pathname(page)).toBe('/staff/tickets');
    await expect(page.getByRole('heading', { name: 'Payments' }).count()).resolves.toBe(0);
    expect((await call(support, 'GET', '/admin/invoices')).status).toBe(403);
  });
});
