/**
 * What every page of the web app does for the feel of it (issue 42, point 14): a title per page in
 * the page's language and an icon, `<html lang>` following the language, a page for addresses the
 * app does not know, a quiet first load for a visitor (nothing in the console), a buyer sent to
 * sign in brought back to its plan, and the optional partner code. Chromium against the service as
 * an operator runs it; screenshots in test-artifacts/page-basics/.
 */
import type { Page } from 'playwright-core';
import { newUser, savePlan } from '../harness/factories';
import {
  type BrowserApp,
  expectAccessible,
  newWebAccount,
  pathname,
  startBrowserApp,
} from './browser-app';

describe('the basics of every page', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;

  beforeAll(async () => {
    app = await startBrowserApp('page-basics');
    const owner = await newUser(app.side, 'owner');
    await savePlan(app.side, owner, { prices: { USD: '499' } }, 'monthly');
    await newUser(app.side, 'partner', { partnerCode: 'autumn-sale' });
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });
  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  /**
   * What the page writes to the browser's console as errors (a failed request among them), but
   * for the Telegram widget's script, which these tests' browsers are kept from loading.
   */
  function consoleErrors(page: Page): string[] {
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      if (message.location().url.startsWith('https://telegram.org/')) return;
      errors.push(`${message.text()} ${message.location().url}`);
    });
    return errors;
  }

  it('a visitor’s first pages load without an error in the console', async () => {
    const page = await app.newPage();
    const errors = consoleErrors(page);
    await page.goto(app.url('/'));
    await page.getByRole('button', { name: 'Create an account' }).waitFor();
    await page.getByRole('link', { name: 'Plans', exact: true }).click();
    await page.getByRole('region', { name: 'monthly' }).waitFor();
    await page.goto(app.url('/plans'));
    await page.getByRole('region', { name: 'monthly' }).waitFor();
    expect(errors).toEqual([]);
  });

  it('each page has its own title in the chosen language, an icon, and <html lang>', async () => {
    const page = await app.newPage();
    await page.goto(app.url('/plans'));
    await page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    await expect(page.title()).resolves.toBe('Plans — VPN');
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('en');
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    expect(icon).toMatch(/^data:image\/svg\+xml,/);

    await page.getByText('RU', { exact: true }).click();
    await page.getByRole('heading', { name: 'Тарифы', level: 1 }).waitFor();
    await expect(page.title()).resolves.toBe('Тарифы — VPN');
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('ru');
    // The choice is kept: a new page load starts in Russian.
    await page.goto(app.url('/'));
    await page.getByRole('heading', { name: 'Вход', level: 1 }).waitFor();
    await expect(page.title()).resolves.toBe('Вход — VPN');
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('ru');
  });

  it('an address the app does not know says so, with a link home', async () => {
    const page = await app.newPage();
    await page.goto(app.url('/no-such-page'));
    await page.getByRole('heading', { name: 'Page not found', level: 1 }).waitFor();
    expect(pathname(page)).toBe('/no-such-page');
    await expect(page.title()).resolves.toBe('Page not found — VPN');
    await expectAccessible(page, 'not found');
    await app.shot(page, 'not-found');
    await page.getByRole('link', { name: 'Go to the home page' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    expect(pathname(page)).toBe('/');
  });

  it('a visitor pressing Buy is asked to sign in, and comes back to the plan', async () => {
    const page = await app.newPage();
    await page.goto(app.url('/plans'));
    await page
      .getByRole('region', { name: 'monthly' })
      .getByRole('button', { name: 'Pay with TON' })
      .click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: 'Sign in or create an account to buy monthly' })
      .waitFor();
    await expectAccessible(page, 'sign in to buy');
    await page.getByRole('button', { name: 'Create an account' }).click();
    const seed = page.getByRole('dialog', { name: 'Your seed' });
    await seed.getByLabel('I have written it down').check();
    await seed.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    expect(new URL(page.url()).hash).toBe('#plan-monthly');
    // Signed in now: the same button makes the invoice.
    await page
      .getByRole('region', { name: 'monthly' })
      .getByRole('button', { name: 'Pay with TON' })
      .click();
    await page.getByRole('dialog', { name: 'Pay monthly with TON' }).waitFor();
  });

  it('the partner code is optional, and its field empties once the code is attached', async () => {
    const page = await app.newPage();
    await newWebAccount(app, page);
    const card = page.getByRole('region', { name: 'Partner code' });
    const field = card.getByRole('textbox', { name: 'Partner code' });
    await expect(field.getAttribute('aria-required')).resolves.toBeNull();
    await expect(field.getAttribute('required')).resolves.toBeNull();
    await expect(card.getByRole('button', { name: 'Attach' }).isDisabled()).resolves.toBe(true);
    await field.fill('autumn-sale');
    await card.getByRole('button', { name: 'Attach' }).click();
    await page.getByText('Partner code attached').waitFor();
    await expect(field.inputValue()).resolves.toBe('');
  });
});
