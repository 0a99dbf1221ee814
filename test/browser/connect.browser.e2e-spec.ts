/**
 * The subscription link in a real Chromium (issue 40), against the service as an operator runs it:
 * `/account` → Connect shows the link, its QR code and the apps' deep links; devices enrolled by
 * fetching the link as apps do are listed, renamed and removed; a device with its own link is
 * added until the plan's limit refuses one; "make a new link" replaces the link. The link opened
 * in a browser is the subscription page, in English and in Russian; staff see and remove a user's
 * devices and set a plan's device limit. What the pages show is checked against the API and the
 * database; axe-core checks each page. Screenshots go to test-artifacts/connect/.
 */
import type { Client } from 'pg';
import type { Page } from 'playwright-core';
import { DEVICE_AUDIT_ACTIONS } from '../../src/devices/devices.constants';
import type { TestApp } from '../harness/app';
import { newUser, savePlan, type TestUser } from '../harness/factories';
import {
  type BrowserApp,
  expectAccessible,
  pathname,
  PHONE,
  signInToConsole,
  startBrowserApp,
} from './browser-app';

const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;
const API = '/api/v1';

interface DeviceList {
  subscription_url: string;
  device_limit: number;
  devices: { id: string; name: string; source: string; client: string | null }[];
}

describe('the subscription link in Chromium', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;
  let side: TestApp;
  let db: Client;
  let owner: TestUser;
  let subscriber: TestUser;
  let page: Page;
  let link = '';

  /** From the service process: its links carry its own address (the in-process app's would not). */
  async function devicesOf(user: TestUser): Promise<DeviceList> {
    const response = await fetch(app.url(`${API}/users/me/devices`), { headers: user.bearer });
    expect(response.status).toBe(200);
    return (await response.json()) as DeviceList;
  }

  /** A fetch of the link as a client app makes it, which enrolls the app as a device. */
  async function fetchAsApp(url: string, headers: Record<string, string>): Promise<Response> {
    const response = await fetch(url, { headers });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    return response;
  }

  beforeAll(async () => {
    app = await startBrowserApp('connect');
    ({ side, db } = app);
    owner = await newUser(side, 'owner');
    await savePlan(side, owner, { traffic_limit_bytes: 100 * GIB }, 'monthly');
    subscriber = await newUser(side, 'seed');
    await db.query(
      `UPDATE users SET plan_name = 'monthly', subscription_expires_at = $2,
                        traffic_used_bytes = $3
        WHERE id = $1`,
      [subscriber.user.id, new Date(Date.now() + 10 * DAY_MS - 3_600_000), 25 * GIB],
    );
    link = (await devicesOf(subscriber)).subscription_url;
    // Two apps fetch the link: Happ with its HWID, v2rayNG by its name.
    await fetchAsApp(link, {
      'User-Agent': 'Happ/3.2.1',
      'x-hwid': 'a1b2c3d4e5f6g7h8',
      'x-device-model': 'iPhone 15',
    });
    await fetchAsApp(link, { 'User-Agent': 'v2rayNG/1.9.30', 'x-device-model': 'Pixel 8' });
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  });

  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  it('/account → Connect shows the link, its QR code and the apps that import it', async () => {
    expect((await devicesOf(subscriber)).devices.map((d) => d.name).sort()).toEqual([
      'Pixel 8',
      'iPhone 15',
    ]);
    page = await app.newPage();
    await page.goto(app.url('/'));
    await page.getByRole('textbox', { name: 'Seed' }).fill(subscriber.seed ?? '');
    await page.getByRole('button', { name: 'Sign in with the seed' }).click();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    expect(pathname(page)).toBe('/account');

    const connect = page.getByRole('region', { name: 'Connect' });
    const field = connect.getByRole('textbox', { name: 'Subscription link' });
    await expect(field.inputValue()).resolves.toBe(link);
    const qr = connect.getByRole('img', { name: 'QR code of the subscription link' });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);

    // Each platform's apps, each opening with the link (encoded where it is a query parameter).
    await connect.getByRole('tab', { name: 'iOS' }).click();
    const ios = connect.getByRole('tabpanel', { name: 'iOS' });
    await expect(
      ios.getByRole('link', { name: 'Open in Happ' }).getAttribute('href'),
    ).resolves.toBe(`happ://add/${link}`);
    await connect.getByRole('tab', { name: 'Android' }).click();
    const android = connect.getByRole('tabpanel', { name: 'Android' });
    await expect(
      android.getByRole('link', { name: 'Open in v2rayNG' }).getAttribute('href'),
    ).resolves.toBe(`v2rayng://install-config?url=${encodeURIComponent(link)}`);
    await connect.getByRole('tab', { name: 'Linux' }).click();
    const linux = connect.getByRole('tabpanel', { name: 'Linux' });
    await expect(
      linux.getByRole('link', { name: 'Open in sing-box' }).getAttribute('href'),
    ).resolves.toBe(`sing-box://import-remote-profile?url=${encodeURIComponent(link)}`);

    // The devices the two fetches made, with what each app said of itself.
    await connect.getByText('2 of 3 devices').waitFor();
    const pixel = connect.getByRole('row', { name: /Pixel 8/ });
    expect(await pixel.textContent()).toContain('v2rayNG/1.9.30');
    await connect.getByRole('row', { name: /iPhone 15/ }).waitFor();
    await expectAccessible(page, 'account with Connect');
    await app.shot(page, 'account-connect');
  });

  it('renames a device and removes another, which leaves the list and the account', async () => {
    const connect = page.getByRole('region', { name: 'Connect' });
    await connect.getByRole('button', { name: 'Rename iPhone 15' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename iPhone 15' });
    await rename.getByRole('textbox', { name: 'New name' }).fill('Work iPhone');
    await rename.getByRole('button', { name: 'Save' }).click();
    await rename.waitFor({ state: 'hidden' });
    await connect.getByRole('row', { name: /Work iPhone/ }).waitFor();

    await connect.getByRole('button', { name: 'Remove Pixel 8' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove Pixel 8' });
    await dialog.getByText('Pixel 8 is disconnected at once').waitFor();
    await expectAccessible(page, 'remove a device');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await connect.getByRole('row', { name: /Pixel 8/ }).waitFor({ state: 'detached' });
    await connect.getByText('1 of 3 devices').waitFor();
    expect((await devicesOf(subscriber)).devices.map((d) => d.name)).toEqual(['Work iPhone']);
  });

  it('adds devices with links of their own until the plan’s limit refuses one', async () => {
    const connect = page.getByRole('region', { name: 'Connect' });
    const add = connect.getByRole('form', { name: 'Add a device with its own link' });
    await add.getByRole('textbox', { name: 'Device name' }).fill('Second phone');
    await add.getByRole('button', { name: 'Add the device' }).click();
    const made = page.getByRole('dialog', { name: 'Device Second phone added' });
    const ownLink = await made.getByRole('textbox', { name: 'Subscription link' }).inputValue();
    expect(ownLink).toMatch(/\/sub\/[^/]+$/);
    expect(ownLink).not.toBe(link);
    await made.getByRole('img', { name: 'QR code of the subscription link' }).waitFor();
    await expectAccessible(page, 'a device with its own link');
    await app.shot(page, 'device-added');
    await made.getByRole('button', { name: 'Close' }).click();
    await made.waitFor({ state: 'hidden' });
    await connect.getByText('2 of 3 devices').waitFor();

    await add.getByRole('textbox', { name: 'Device name' }).fill('Tablet');
    await add.getByRole('button', { name: 'Add the device' }).click();
    await page
      .getByRole('dialog', { name: 'Device Tablet added' })
      .getByRole('button', { name: 'Close' })
      .click();
    await connect.getByText('3 of 3 devices').waitFor();

    await add.getByRole('textbox', { name: 'Device name' }).fill('Laptop');
    await add.getByRole('button', { name: 'Add the device' }).click();
    await expect(add.getByRole('alert').textContent()).resolves.toBe(
      'You have 3 of 3 devices: remove one first.',
    );
    expect((await devicesOf(subscriber)).devices).toHaveLength(3);
  });

  it('"make a new link" replaces the link: the old one answers 404, the new one works', async () => {
    const connect = page.getByRole('region', { name: 'Connect' });
    await connect.getByRole('button', { name: 'Make a new link' }).click();
    const dialog = page.getByRole('dialog', { name: 'Make a new link' });
    await dialog.getByText('The current link stops working at once').waitFor();
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const field = connect.getByRole('textbox', { name: 'Subscription link' });
    // The field shows the new link once the list is read again.
    let fresh = await field.inputValue();
    for (let tries = 0; fresh === link && tries < 100; tries += 1) {
      await page.waitForTimeout(100);
      fresh = await field.inputValue();
    }
    expect(fresh).not.toBe(link);
    expect(fresh).toBe((await devicesOf(subscriber)).subscription_url);
    expect((await fetch(link, { headers: { 'User-Agent': 'v2rayNG/1.9.30' } })).status).toBe(404);
    await fetchAsApp(fresh, { 'User-Agent': 'Happ/3.2.1', 'x-hwid': 'a1b2c3d4e5f6g7h8' });
    // The same Happ is the same device: nothing was added.
    expect((await devicesOf(subscriber)).devices).toHaveLength(3);
    link = fresh;
  });

  it('the link in a browser is the subscription page, in English and in Russian', async () => {
    const visitor = await app.newPage(PHONE);
    await visitor.goto(link);
    await visitor.getByRole('heading', { name: 'Your subscription', level: 1 }).waitFor();
    expect(pathname(visitor)).toBe(new URL(link).pathname);
    await expect(visitor.locator('meta[name="robots"]').getAttribute('content')).resolves.toContain(
      'noindex',
    );
    await visitor.getByRole('heading', { name: 'Plan: monthly' }).waitFor();
    await visitor.getByText('10 days left, until').waitFor();
    await visitor.getByText('25 GB of 100 GB used').waitFor();
    await visitor.getByRole('progressbar', { name: 'Traffic used' }).waitFor();
    // No node is online in this test: the page says so in words.
    await visitor.getByRole('status').getByText('No server is online right now').waitFor();
    const devices = visitor.getByRole('region', { name: 'Devices: 3 of 3' });
    for (const name of ['Work iPhone', 'Second phone', 'Tablet']) {
      await devices.getByRole('cell', { name, exact: true }).waitFor();
    }
    const connect = visitor.getByRole('region', { name: 'Connect' });
    await expect(
      connect.getByRole('textbox', { name: 'Subscription link' }).inputValue(),
    ).resolves.toBe(link);
    await connect.getByRole('img', { name: 'QR code of the subscription link' }).waitFor();
    await connect.getByRole('tab', { name: 'Windows' }).click();
    await expect(
      connect
        .getByRole('tabpanel', { name: 'Windows' })
        .getByRole('link', { name: 'Open in Clash Verge Rev' })
        .getAttribute('href'),
    ).resolves.toBe(`clash://install-config?url=${encodeURIComponent(link)}`);
    await expectAccessible(visitor, 'subscription page (en)');
    await app.shot(visitor, 'subscription-page-en');

    await visitor.getByText('RU', { exact: true }).click();
    await visitor.getByRole('heading', { name: 'Ваша подписка', level: 1 }).waitFor();
    await expect(visitor.locator('html').getAttribute('lang')).resolves.toBe('ru');
    await visitor.getByRole('heading', { name: 'Тариф: monthly' }).waitFor();
    await visitor.getByText('Сейчас ни один сервер не в сети').waitFor();
    await visitor.getByRole('region', { name: 'Устройства: 3 из 3' }).waitFor();
    await visitor
      .getByRole('region', { name: 'Подключение' })
      .getByRole('tab', { name: 'Android' })
      .waitFor();
    await expectAccessible(visitor, 'subscription page (ru)');
    await app.shot(visitor, 'subscription-page-ru');
    await visitor.getByText('EN', { exact: true }).click();
    await visitor.getByRole('heading', { name: 'Your subscription', level: 1 }).waitFor();
  });

  it('the page of a link that no longer works says so', async () => {
    const visitor = await app.newPage();
    await visitor.goto(link);
    await visitor.getByRole('heading', { name: 'Your subscription', level: 1 }).waitFor();
    // The service answers a replaced link's address 404 itself; the page, when it is already open
    // and moves to such a link, says it in words.
    await visitor.evaluate(
      "history.pushState(null, '', '/sub/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');" +
        "dispatchEvent(new PopStateEvent('popstate'));",
    );
    await visitor
      .getByRole('alert')
      .getByText('This link is not valid (or was replaced by a new one).')
      .waitFor();
    await expectAccessible(visitor, 'subscription page of an unknown link');
  });

  it('staff see a user’s devices and remove one with a reason; the plan form sets the limit', async () => {
    const staffPage = await app.newPage();
    await signInToConsole(app, staffPage, owner);
    await staffPage.goto(app.url(`/staff/users/${subscriber.user.id}`));
    const devices = staffPage.getByRole('region', { name: 'Devices (3 of 3)' });
    for (const name of ['Work iPhone', 'Second phone', 'Tablet']) {
      await devices.getByRole('row', { name: new RegExp(name) }).waitFor();
    }
    expect(await devices.getByRole('row', { name: /Work iPhone/ }).textContent()).toContain(
      'Happ/3.2.1',
    );
    await expectAccessible(staffPage, 'a user’s devices');
    await app.shot(staffPage, 'staff-user-devices');

    await devices.getByRole('button', { name: 'Remove Tablet' }).click();
    const dialog = staffPage.getByRole('dialog', { name: 'Remove Tablet' });
    await dialog.getByRole('textbox', { name: 'Reason' }).fill('Asked by the user in a ticket');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await staffPage.getByRole('region', { name: 'Devices (2 of 3)' }).waitFor();
    await devices.getByRole('row', { name: /Tablet/ }).waitFor({ state: 'detached' });
    expect((await devicesOf(subscriber)).devices.map((d) => d.name).sort()).toEqual([
      'Second phone',
      'Work iPhone',
    ]);
    const { rows } = await db.query<{ before: { name: string }; after: { reason: string } }>(
      `SELECT before, after FROM audit_log
        WHERE actor_id = $1 AND target_id = $2 AND action = $3`,
      [owner.user.id, subscriber.user.id, DEVICE_AUDIT_ACTIONS.removed],
    );
    expect(rows.map((row) => [row.after.reason, row.before.name])).toEqual([
      ['Asked by the user in a ticket', 'Tablet'],
    ]);

    // The plan's device limit, set in the plan form, is the subscriber's.
    await staffPage.getByRole('tab', { name: 'Plans' }).click();
    const list = staffPage.getByRole('region', { name: 'Every plan' });
    await list.getByRole('button', { name: 'Edit monthly' }).click();
    const edit = staffPage.getByRole('dialog', { name: 'Edit plan monthly' });
    const limit = edit.getByRole('textbox', { name: 'Devices per subscriber' });
    await expect(limit.inputValue()).resolves.toBe('3');
    await limit.fill('5');
    await expectAccessible(staffPage, 'plan form with the device limit');
    await edit.getByRole('button', { name: 'Save plan' }).click();
    await edit.waitFor({ state: 'hidden' });
    expect((await devicesOf(subscriber)).device_limit).toBe(5);
    await staffPage.goto(app.url(`/staff/users/${subscriber.user.id}`));
    await staffPage.getByRole('region', { name: 'Devices (2 of 5)' }).waitFor();
  });
});
