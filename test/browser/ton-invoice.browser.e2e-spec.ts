/**
 * A TON invoice can be found again (issue 42, point 3): its dialog has copy buttons and says how
 * long it waits; "not found yet" is said calmly; a pending invoice opens from /account; paying the
 * same plan again shows the same invoice instead of making another. Chromium against the service
 * as an operator runs it; screenshots in test-artifacts/ton-invoice/.
 */
import { newUser, savePlan } from '../harness/factories';
import {
  type BrowserApp,
  expectAccessible,
  newWebAccount,
  payWithTon,
  startBrowserApp,
  WALLET,
} from './browser-app';

describe('a pending TON invoice in the web app', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;

  beforeAll(async () => {
    app = await startBrowserApp('ton-invoice');
    const owner = await newUser(app.side, 'owner');
    await savePlan(app.side, owner, { prices: { USD: '499' } }, 'monthly');
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });
  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  const invoicesOf = async (userId: string) =>
    (
      await app.db.query<{ id: string; comment: string; status: string; expires_at: Date }>(
        `SELECT id, comment, status, expires_at FROM invoices WHERE user_id = $1`,
        [userId],
      )
    ).rows;

  it('copies, says how long it waits, reopens from /account, and a second Pay shows the same invoice', async () => {
    const page = await app.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    const userId = await newWebAccount(app, page);

    let dialog = await payWithTon(page, 'monthly');
    const [invoice] = await invoicesOf(userId);
    expect(await dialog.textContent()).toContain(invoice.comment);
    // Outside the demo mode nothing pretends to pay.
    expect(await dialog.getByRole('button', { name: 'Simulate the payment' }).count()).toBe(0);
    const until = new Intl.DateTimeFormat('en-GB', {
      dateStyle: 'medium',
      timeStyle: 'short',
      timeZone: 'UTC',
    }).format(invoice.expires_at);
    await dialog.getByText(`This invoice waits for your payment until ${until} UTC`).waitFor();

    const clipboard = () => page.evaluate<string>('navigator.clipboard.readText()');
    await dialog.getByRole('button', { name: 'Copy the comment' }).click();
    expect(await clipboard()).toBe(invoice.comment);
    await dialog.getByRole('button', { name: 'Copy the address' }).click();
    expect(await clipboard()).toBe(WALLET.toString());
    // 4.99 USD at 5 USD per TON, plus 2%: what a wallet's amount field takes.
    await dialog.getByRole('button', { name: 'Copy the amount' }).click();
    expect(await clipboard()).toBe('1.01796');

    // Pressed before paying: said plainly, not as an error.
    await dialog.getByRole('button', { name: 'I paid' }).click();
    await dialog.getByRole('status').filter({ hasText: 'No payment found yet' }).waitFor();
    expect(await dialog.getByRole('alert').count()).toBe(0);
    await expectAccessible(page, 'TON invoice');
    await app.shot(page, 'ton-invoice');
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Closed: the invoice is still one click away on /account.
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    const invoices = page.getByRole('region', { name: 'Invoices' });
    await invoices.getByText('Pending').waitFor();
    await invoices.getByRole('button', { name: /^Pay the monthly invoice of / }).click();
    dialog = page.getByRole('dialog', { name: 'Pay monthly with TON' });
    await dialog.getByRole('img', { name: 'QR code of the payment link' }).waitFor();
    expect(await dialog.textContent()).toContain(invoice.comment);
    await expectAccessible(page, 'TON invoice from the account page');
    await app.shot(page, 'ton-invoice-reopened');
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Paying the same plan again: the same invoice, not a second row.
    dialog = await payWithTon(page, 'monthly');
    expect(await dialog.textContent()).toContain(invoice.comment);
    expect((await invoicesOf(userId)).map((row) => row.id)).toEqual([invoice.id]);
  });
});
