/**
 * Partners in the web app (issue 42, point 9): a partner signs in where staff do and lands on its
 * own page, which shows its share links with copy buttons; a visitor who opens the web link and
 * makes an account is attached to that partner, whatever the case of the code in the link.
 * Chromium against the service as an operator runs it; screenshots in test-artifacts/partner-links/.
 */
import { User } from '../../src/users/entities/user.entity';
import { newUser, type TestUser } from '../harness/factories';
import {
  type BrowserApp,
  expectAccessible,
  newWebAccount,
  pathname,
  startBrowserApp,
} from './browser-app';

describe('partner links in the web app', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;
  let partner: TestUser;

  beforeAll(async () => {
    app = await startBrowserApp('partner-links');
    partner = await newUser(app.side, 'partner', { partnerCode: 'spring-sale' });
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });
  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  it('a partner signing in at /staff lands on /syndicate and copies both of its links', async () => {
    const page = await app.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto(app.url('/staff'));
    await page.getByLabel('Username').fill(partner.user.username ?? '');
    await page.getByRole('textbox', { name: 'Password' }).fill(partner.password ?? '');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Partner', level: 1 }).waitFor();
    expect(pathname(page)).toBe('/syndicate');

    const links = page.getByRole('region', { name: 'Your links' });
    const bot = 'https://t.me/shop_vpn_bot?start=p_spring-sale';
    const web = `${app.url('')}/?partner=spring-sale`;
    await links.getByText(bot, { exact: true }).waitFor();
    await links.getByText(web, { exact: true }).waitFor();
    await expectAccessible(page, 'partner links');
    await app.shot(page, 'syndicate-links');
    const clipboard = () => page.evaluate<string>('navigator.clipboard.readText()');
    await links.getByRole('button', { name: 'Copy the Telegram bot link' }).click();
    expect(await clipboard()).toBe(bot);
    await links.getByRole('button', { name: 'Copy the web app link' }).click();
    expect(await clipboard()).toBe(web);
  });

  it('a visitor opening the web link in capitals and making an account is attached to the partner', async () => {
    const page = await app.newPage();
    await page.goto(app.url('/?partner=SPRING-SALE'));
    // The code leaves the address bar at once, and is kept over a reload for the account made next.
    await page.waitForURL((url) => url.search === '');
    const userId = await newWebAccount(app, page);
    await page.getByText('Partner code attached').waitFor();
    const user = await app.side.dataSource.getRepository(User).findOneByOrFail({ id: userId });
    expect(user.referredByPartnerId).toBe(partner.user.id);
  });
});
