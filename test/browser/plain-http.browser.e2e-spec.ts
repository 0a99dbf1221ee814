/**
 * A development service opened at an address other than `localhost` over plain HTTP, as anyone
 * browses a service on a VPS or a VM (`http://<its address>:3000/`), keeps its sessions (issue 42,
 * point 1): outside production the session cookies are not `Secure`, so the browser stores them.
 *
 * The address is a host name that this test's Chromium resolves to the loopback address the
 * service listens on. Not `127.0.0.2`: Chromium counts all of 127.0.0.0/8 as `localhost` and keeps
 * `Secure` cookies there, so only a name shows what a browser does at a machine's real address.
 */
import { type Browser, chromium } from 'playwright-core';
import { newUser } from '../harness/factories';
import { type BrowserApp, startBrowserApp } from './browser-app';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium';

const HOST = 'vpn-dev.test';

describe('a development service at an address that is not localhost, over plain HTTP', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    // As `npm start` runs it: development settings, COOKIE_SECURE left to its default.
    app = await startBrowserApp('plain-http', { NODE_ENV: 'development', COOKIE_SECURE: '' });
    origin = `http://${HOST}:${new URL(app.url('/')).port}`;
    browser = await chromium.launch({
      executablePath: await chromiumExecutable(),
      args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${HOST} 127.0.0.1`],
    });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function newPage() {
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    await context.route('https://telegram.org/**', (route) => route.abort());
    return context.newPage();
  }

  it('a new seed account stays signed in, through a reload', async () => {
    const page = await newPage();
    await page.goto(`${origin}/`);
    await page.getByRole('button', { name: 'Create an account' }).click();
    const seed = page.getByRole('dialog', { name: 'Your seed' });
    await seed.getByLabel('I have written it down').check();
    await seed.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    await page.getByText(/Account id /).waitFor();

    await page.reload();
    await page.getByText(/Account id /).waitFor();
    expect(new URL(page.url()).pathname).toBe('/account');
    const cookies = await page.context().cookies();
    expect(cookies.filter((cookie) => cookie.name === 'access_token')).toEqual([
      expect.objectContaining({ domain: HOST, secure: false, httpOnly: true }),
    ]);
  });

  it('a staff account signs in to the console and stays there through a reload', async () => {
    const staff = await newUser(app.side, 'owner');
    const page = await newPage();
    await page.goto(`${origin}/staff`);
    await page.getByLabel('Username').fill(staff.user.username ?? '');
    await page.getByRole('textbox', { name: 'Password' }).fill(staff.password ?? '');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Staff console' }).waitFor();

    await page.reload();
    await page.getByRole('heading', { name: 'Staff console' }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/staff/);
  });
});
