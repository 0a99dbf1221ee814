/**
 * The web app in Russian (issue 42, points 6 and 7): a refused form says what is wrong under the
 * field, in Russian, never the service's English; /plans shows a plan's Russian name and offers RUB
 * first. Chromium, the service as an operator runs it; screenshots in test-artifacts/localized-forms/.
 */
import type { Page } from 'playwright-core';
import { newUser, type TestUser } from '../harness/factories';
import { type BrowserApp, startBrowserApp } from './browser-app';

describe('the web app in Russian', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;
  let buyer: TestUser;

  beforeAll(async () => {
    app = await startBrowserApp('localized-forms');
    const owner = await newUser(app.side, 'owner');
    await app.side
      .http()
      .put('/api/v1/admin/plans/monthly')
      .set(owner.bearer)
      .send({
        duration_days: 30,
        traffic_limit_bytes: 107374182400,
        prices: { USD: '499', RUB: '45000' },
        active: true,
        display: { ru: { name: 'Месяц', description: '30 дней, 100 ГБ' } },
      })
      .expect(200);
    buyer = await newUser(app.side, 'seed');
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });
  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  /** A fresh browser set to Russian, signed in with the buyer's seed. */
  async function russianBuyer(): Promise<Page> {
    const page = await app.newPage();
    // A script as text: the tests are type-checked without the DOM's types.
    await page.addInitScript("localStorage.setItem('vpn-language', 'ru')");
    await page.goto(app.url('/'));
    await page.getByRole('textbox', { name: 'Сид' }).fill(buyer.seed ?? '');
    await page.getByRole('button', { name: 'Войти по сиду' }).click();
    await page.getByRole('heading', { name: 'Аккаунт', level: 1 }).waitFor();
    return page;
  }

  it('a ticket whose subject is only invisible characters is refused under the subject, in Russian', async () => {
    const page = await russianBuyer();
    await page.goto(app.url('/support'));
    const subject = page.getByRole('textbox', { name: 'Тема' });
    await subject.fill('\u200b\u200b');
    await page.getByRole('textbox', { name: 'Сообщение' }).fill('Не подключается телефон');
    await page.getByRole('button', { name: 'Отправить обращение' }).click();

    const problem = page.getByText(/^Используйте видимые символы/);
    await problem.waitFor();
    // The text is the subject field's own error: the field is marked invalid and described by it.
    await expect(subject.getAttribute('aria-invalid')).resolves.toBe('true');
    const describedBy = (await subject.getAttribute('aria-describedby')) ?? '';
    const errorId = await problem.getAttribute('id');
    expect(errorId).toBeTruthy();
    expect(describedBy.split(' ')).toContain(errorId);
    expect(
      await page.getByRole('textbox', { name: 'Сообщение' }).getAttribute('aria-invalid'),
    ).not.toBe('true');
    // Nothing of the service's English message reaches the page.
    expect(await page.getByText(/must|invisible/).count()).toBe(0);
    await app.shot(page, 'ticket-invisible-subject');
  });

  it('/plans shows the plan’s Russian name and offers RUB first', async () => {
    const page = await russianBuyer();
    await page.goto(app.url('/plans'));
    const card = page.getByRole('region', { name: 'Месяц' });
    await card.waitFor();
    await card.getByText('30 дней, 100 ГБ').waitFor();
    await expect(card.getByLabel('Валюта', { exact: true }).inputValue()).resolves.toBe('RUB');
    await app.shot(page, 'plans-ru');

    // A currency the buyer picked is kept over the language's.
    await card.getByLabel('Валюта', { exact: true }).click();
    await page.getByRole('option', { name: 'USD' }).click();
    await page.reload();
    await expect(
      page
        .getByRole('region', { name: 'Месяц' })
        .getByLabel('Валюта', { exact: true })
        .inputValue(),
    ).resolves.toBe('USD');
  });
});
