/**
 * The plans page of a service with no payment method set up (no TON wallet, no bot token): no Pay
 * button that could only fail, a plain sentence instead, and for staff what to set. Chromium,
 * the service as an operator runs it; screenshots in test-artifacts/plans-payments/.
 */
import type { Page } from 'playwright-core';
import { newUser, savePlan, type TestUser } from '../harness/factories';
import { type BrowserApp, signInToConsole, startBrowserApp } from './browser-app';

describe('plans with no payment method set up', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startBrowserApp('plans-payments', {
      TON_WALLET_ADDRESS: '',
      BOT_TOKEN: '',
      TELEGRAM_PAYMENT_PROVIDER_TOKEN: '',
      BOT_MODE: 'off',
    });
    owner = await newUser(app.side, 'owner');
    await savePlan(app.side, owner, { prices: { USD: '499', XTR: '250' } }, 'monthly');
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });
  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  async function payButtons(page: Page): Promise<number> {
    return page.getByRole('button', { name: /^Pay / }).count();
  }

  it('shows the plan without Pay buttons and says no payment method is set up yet', async () => {
    const page = await app.newPage();
    await page.goto(app.url('/plans'));
    await page.getByRole('region', { name: 'monthly' }).waitFor();
    await page.getByText('No payment method is set up yet.').waitFor();
    expect(await payButtons(page)).toBe(0);
    // Subscribers are not given the operator's settings.
    expect(await page.getByText('TON_WALLET_ADDRESS').count()).toBe(0);
    await app.shot(page, 'plans-none');
  });

  it('tells staff what to set', async () => {
    const page = await app.newPage();
    await signInToConsole(app, page, owner);
    await page.goto(app.url('/plans'));
    await page.getByText('No payment method is set up yet.').waitFor();
    await page.getByText(/Set TON_WALLET_ADDRESS for TON, BOT_TOKEN for Telegram Stars/).waitFor();
    expect(await payButtons(page)).toBe(0);
    await app.shot(page, 'plans-none-staff');
  });
});
