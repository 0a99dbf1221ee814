/**
 * The service as an operator runs it (its own process, the web app built as `npm run build` builds
 * it), local toncenter, tonapi and Bot API fakes, the same database through the application in this
 * process (factories, direct reads), and a real Chromium. Shared by the browser tests of the web app
 * and of the staff console.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Address } from '@ton/core';
import { Client } from 'pg';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { startFakeBotApi, type FakeBotApi } from '../fakes/telegram-bot-api';
import { startFakeTonapi, type FakeTonapi } from '../fakes/tonapi';
import { startFakeToncenter, type FakeToncenter } from '../fakes/toncenter';
import { startTestApp, type TestApp } from '../harness/app';
import { createTestDatabase, type TestDatabase } from '../harness/database';
import type { TestUser } from '../harness/factories';
import { freePort } from '../harness/metrics';
import {
  spawnService,
  stopService,
  waitHealthy,
  type ServiceProcess,
} from '../harness/service-process';
import { CHROMIUM_ARGS, chromiumExecutable } from './chromium';
import { buildWebApp } from './web-build';

export const WALLET = new Address(0, Buffer.alloc(32, 9));
export const BOT_TOKEN = '123456:TEST-web-app-bot-token';
export const WEBHOOK_SECRET = 'test-webhook-secret-web-app-0123';
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1100, height: 760 };
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: { target: string[]; failureSummary?: string }[];
}

export interface BrowserApp {
  service: ServiceProcess;
  /** The application in this process, on the same database: factories and staff calls. */
  side: TestApp;
  db: Client;
  database: TestDatabase;
  tonapi: FakeTonapi;
  toncenter: FakeToncenter;
  botApi: FakeBotApi;
  browser: Browser;
  /** A fresh browser profile: its own cookies, as another person's browser. */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** An address of the service. */
  url(path: string): string;
  /** Errors thrown in any page since the last call; a test's `afterEach` expects none. */
  takePageErrors(): string[];
  /** A screenshot under test-artifacts/<folder>/. */
  shot(page: Page, name: string): Promise<unknown>;
  close(): Promise<void>;
}

/** Starts everything; `env` adds to or overrides the service's settings. */
export async function startBrowserApp(
  shotsFolder: string,
  env: Record<string, string> = {},
): Promise<BrowserApp> {
  const webDir = buildWebApp();
  const [database, tonapi, toncenter, botApi] = await Promise.all([
    createTestDatabase(),
    startFakeTonapi({ USD: '5' }),
    startFakeToncenter(),
    startFakeBotApi(),
  ]);
  const port = await freePort();
  const service = spawnService(port, {
    DATABASE_URL: database.url,
    MIGRATIONS_RUN: 'false',
    WEB_DIR: webDir,
    COOKIE_SECURE: 'false',
    PUBLIC_API_URL: `http://127.0.0.1:${port}`,
    TON_RATES_URL: tonapi.url,
    TON_API_URL: toncenter.url,
    TON_WALLET_ADDRESS: WALLET.toString(),
    TELEGRAM_API_ROOT: botApi.url,
    BOT_TOKEN,
    TELEGRAM_PAYMENT_PROVIDER_TOKEN: '284685063:TEST:web-app-provider',
    BOT_USERNAME: 'shop_vpn_bot',
    BOT_MODE: 'webhook',
    BOT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    // Payments are found by "I paid" in these tests, not by the background reconciliation.
    RECONCILE_INTERVAL_S: '86400',
    ...env,
  });
  const side = await startTestApp({}, { database });
  const db = new Client({ connectionString: database.url });
  await Promise.all([waitHealthy(service), db.connect()]);
  const shots = join(__dirname, '../../test-artifacts', shotsFolder);
  mkdirSync(shots, { recursive: true });
  const browser = await chromium.launch({
    executablePath: await chromiumExecutable(),
    args: CHROMIUM_ARGS,
  });
  const pageErrors: string[] = [];
  const contexts: BrowserContext[] = [];

  return {
    service,
    side,
    db,
    database,
    tonapi,
    toncenter,
    botApi,
    browser,
    async newPage(viewport = DESKTOP) {
      const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
      context.setDefaultTimeout(15_000);
      // No network beyond loopback: the Telegram widget's script is refused at once.
      await context.route('https://telegram.org/**', (route) => route.abort());
      contexts.push(context);
      const page = await context.newPage();
      page.on('pageerror', (error) => pageErrors.push(error.message));
      return page;
    },
    url: (path) => `${service.baseUrl}${path}`,
    takePageErrors: () => pageErrors.splice(0),
    shot: (page, name) => page.screenshot({ path: join(shots, `${name}.png`) }),
    async close() {
      await browser.close();
      await db.end();
      await stopService(service);
      await side.close();
      await Promise.all([tonapi.close(), toncenter.close(), botApi.close()]);
    },
  };
}

export const pathname = (page: Page) => new URL(page.url()).pathname;

/** axe-core on the page as it stands: no serious or critical violation. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  // Colours are read as they are painted: a dialog still fading in would show blended ones.
  await page.waitForFunction(() =>
    (globalThis as unknown as { document: { getAnimations(): { playState: string }[] } }).document
      .getAnimations()
      .every((animation) => animation.playState !== 'running'),
  );
  // Evaluated through the debugging protocol: the page's own CSP forbids injected scripts.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } })
      .axe;
    return (await axe.run()).violations;
  });
  const bad = (violations as AxeViolation[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes.map((n) => `${n.target.join(' ')} ${n.failureSummary ?? ''}`).join(', ')}`,
    );
  expect([name, bad]).toEqual([name, []]);
}

/** Signs a staff account in through the console's sign-in form and waits for the console. */
export async function signInToConsole(app: BrowserApp, page: Page, staff: TestUser): Promise<void> {
  await page.goto(app.url('/staff'));
  await page.getByLabel('Username').fill(staff.user.username ?? '');
  await page.getByRole('textbox', { name: 'Password' }).fill(staff.password ?? '');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Staff console' }).waitFor();
}

/** A new anonymous account through the sign-in page's "Create an account"; returns its id. */
export async function newWebAccount(app: BrowserApp, page: Page): Promise<string> {
  await page.goto(app.url('/'));
  await page.getByRole('button', { name: 'Create an account' }).click();
  const seed = page.getByRole('dialog', { name: 'Your seed' });
  await seed.getByLabel('I have written it down').check();
  await seed.getByRole('button', { name: 'Continue' }).click();
  const text = await page.getByText(/Account id /).textContent();
  return /Account id ([0-9a-f-]{36})/.exec(text ?? '')?.[1] ?? '';
}

/** From any page of the app: Plans, the plan's "Pay with TON", and its dialog once the QR shows. */
export async function payWithTon(page: Page, plan: string) {
  await page.getByRole('link', { name: 'Plans', exact: true }).click();
  await page
    .getByRole('region', { name: plan })
    .getByRole('button', { name: 'Pay with TON' })
    .click();
  const dialog = page.getByRole('dialog', { name: `Pay ${plan} with TON` });
  await dialog.getByRole('img', { name: 'QR code of the payment link' }).waitFor();
  return dialog;
}
