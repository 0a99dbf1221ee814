/**
 * The demo mode (issue 42, point 2): with DEMO_PAYMENTS=true and nothing else set up (no wallet, no
 * bot, no plans), a newcomer buys a plan end to end in the browser: a new account, /plans, Pay with
 * TON, the QR dialog, "Simulate the payment", and the subscription on /account. Chromium against
 * the service as `npm run demo` runs it; screenshots in test-artifacts/demo-purchase/.
 */
import {
  type BrowserApp,
  expectAccessible,
  newWebAccount,
  payWithTon,
  startBrowserApp,
} from './browser-app';

describe('buying a plan in the demo mode', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;

  beforeAll(async () => {
    app = await startBrowserApp('demo-purchase', {
      DEMO_PAYMENTS: 'true',
      TON_WALLET_ADDRESS: '',
      BOT_TOKEN: '',
      TELEGRAM_PAYMENT_PROVIDER_TOKEN: '',
      BOT_USERNAME: '',
      BOT_MODE: 'off',
    });
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });
  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  it('a new account pays for the monthly plan with the simulate button and sees it on /account', async () => {
    const page = await app.newPage();
    await newWebAccount(app, page);
    await page.getByText('No subscription yet.').waitFor();

    // The demo plans were made at start.
    const dialog = await payWithTon(page, 'monthly');
    await expectAccessible(page, 'TON invoice in the demo mode');
    await app.shot(page, 'demo-invoice');

    await dialog.getByRole('button', { name: 'Simulate the payment' }).click();
    await dialog
      .getByRole('status')
      .filter({ hasText: 'Paid: your subscription runs until' })
      .waitFor();
    await app.shot(page, 'demo-paid');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('link', { name: 'Account', exact: true }).click();
    const subscription = page.getByRole('region', { name: 'Subscription' });
    await subscription.getByText('monthly', { exact: true }).waitFor();
    await subscription.getByText('Active', { exact: true }).waitFor();
    expect(await subscription.getByText('No subscription yet.').count()).toBe(0);
    await page.getByRole('region', { name: 'Invoices' }).getByText('Paid').waitFor();
    await app.shot(page, 'demo-account');
  });
});
