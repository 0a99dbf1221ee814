/**
 * The bot's Connect: the subscription link, the devices that use it, a button to the link's page
 * (a browser shows it with a button per app) and one to the account to manage devices; en and ru.
 */
import { type BotWorld, startBotWorld } from './fakes/bot';

describe('bot: Connect', () => {
  let w: BotWorld;

  beforeAll(async () => {
    w = await startBotWorld();
  });
  afterAll(() => w.close());

  const textOf = (call: { body: unknown }) => (call.body as { text: string }).text;

  it('the menu’s Connect answers with the link, the devices and the page', async () => {
    const from = w.user();
    await w.start(from);
    const [welcome] = w.sentTo(from.id, 'sendMessage');
    const connect = w.buttons(welcome).find((b) => b.callback_data === 'v1:connect');
    expect(connect?.text).toBe('Connect');
    await w.press(from, connect!.callback_data!);
    const answer = w.sentTo(from.id, 'sendMessage').at(-1)!;
    const buttons = w.buttons(answer);
    expect(buttons.map((b) => b.text)).toEqual(['Open the connection page', 'Manage devices']);
    // The account page's link signs its opener in: the account's own link is the one shown.
    const account = new URL(buttons[1].url!);
    expect(account.pathname).toBe('/account');
    const browser = w.t.http();
    await browser
      .post('/api/v1/auth/exchange')
      .send({ bootstrap_token: account.searchParams.get('bootstrap') })
      .expect(200);
    const devices = await browser.get('/api/v1/users/me/devices').expect(200);
    const link = devices.body.subscription_url as string;
    expect(textOf(answer)).toContain(link);
    expect(textOf(answer)).toContain('Devices: 0 of 3');
    expect(buttons[0].url).toBe(link);

    // The account subscribes and a device fetches the link: /connect lists it.
    await w.t.dataSource.query(
      `UPDATE users SET plan_name = 'monthly', subscription_expires_at = now() + interval '30 days'
        WHERE tg_id = $1`,
      [from.id],
    );
    await w.t.http().get(new URL(link).pathname).set('User-Agent', 'v2rayNG/1.8.5').expect(200);
    await w.send({
      update_id: w.nextUpdateId(),
      message: {
        message_id: 2,
        date: 1,
        chat: { id: from.id, type: 'private' },
        from,
        text: '/connect',
        entities: [{ type: 'bot_command', offset: 0, length: 8 }],
      },
    });
    const listed = textOf(w.sentTo(from.id, 'sendMessage').at(-1)!);
    expect(listed).toContain('Devices: 1 of 3');
    expect(listed).toMatch(/• v2rayng, last seen \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
  });

  it('speaks Russian to a Russian account', async () => {
    const from = w.user('ru');
    await w.start(from);
    await w.press(from, 'v1:connect');
    const answer = w.sentTo(from.id, 'sendMessage').at(-1)!;
    expect(textOf(answer)).toContain('Устройства: 0 из 3');
    expect(w.buttons(answer)[0].text).toBe('Открыть страницу подключения');
  });
});
