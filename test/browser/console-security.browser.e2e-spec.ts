/**
 * A staff account's second factor in the console, in a real Chromium: the owner sets it up from
 * Security (a QR code and the key, confirmed with a code from the app, then the recovery codes),
 * and the next sign-in asks for the code after the password. Screenshots go to
 * test-artifacts/console/.
 */
import { authenticator } from 'otplib';
import { newUser, type TestUser } from '../harness/factories';
import { previousStepCode } from '../harness/totp';
import { type BrowserApp, expectAccessible, signInToConsole, startBrowserApp } from './browser-app';

describe('the console’s Security page in Chromium', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startBrowserApp('console');
    owner = await newUser(app.side, 'owner');
  });
  afterAll(() => app?.close());
  afterEach(() => expect(app.takePageErrors()).toEqual([]));

  it('sets up a second factor, then a sign-in asks for its code', async () => {
    const page = await app.newPage();
    await signInToConsole(app, page, owner);
    await page.getByRole('tab', { name: 'Security' }).click();
    await page.getByRole('button', { name: 'Set up a second factor' }).click();
    await page.getByRole('img', { name: 'QR code for the authenticator app' }).waitFor();
    const key = (await page.getByText(/^[A-Z2-7]{32}$/).textContent())!.trim();
    await expectAccessible(page, 'the console’s Security page');
    // The code of the previous period, so that the sign-in below can take the current one.
    const previous = await previousStepCode(key);
    await page.getByLabel('Code from the app').fill(previous);
    await page.getByRole('button', { name: 'Turn on' }).click();
    const codes = page.getByLabel('Recovery codes');
    await codes.waitFor();
    expect((await codes.textContent())?.match(/[a-z2-7]{5}-[a-z2-7]{5}/g)).toHaveLength(10);
    await page.getByText('The second factor is on. Recovery codes left: 10.').waitFor();
    await app.shot(page, 'security-enrolled');

    const again = await app.newPage();
    await again.goto(app.url('/staff'));
    await again.getByLabel('Username').fill(owner.user.username ?? '');
    await again.getByRole('textbox', { name: 'Password' }).fill(owner.password ?? '');
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again.getByRole('alert').getByText('This account also needs the code').waitFor();
    await again
      .getByLabel('Code from your authenticator app (or a recovery code)')
      .fill(authenticator.generate(key));
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again.getByRole('heading', { name: 'Staff console' }).waitFor();
  });
});
