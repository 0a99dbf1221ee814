import { type BotWorld, startBotWorld } from './fakes/bot';

describe('bot: signing in to an app through /start login_<code>', () => {
  let w: BotWorld;

  beforeAll(async () => {
    w = await startBotWorld();
  });
  afterAll(() => w.close());

  const newCode = async () => {
    const res = await w.t.http().post('/api/v1/auth/bot/login-codes').expect(201);
    return res.body as { code: string; poll_secret: string };
  };
  const poll = (code: { code: string; poll_secret: string }) =>
    w.t
      .http()
      .post(`/api/v1/auth/bot/login-codes/${code.code}/poll`)
      .send({ poll_secret: code.poll_secret })
      .expect(200);

  /** Opens the link as `from`; the prompt the bot sent, with its two buttons. */
  const open = async (from: ReturnType<BotWorld['user']>, code: string) => {
    await w.start(from, `login_${code}`);
    const prompt = w.sentTo(from.id, 'sendMessage').at(-1);
    if (!prompt) throw new Error('no prompt');
    const [confirm, cancel] = w.buttons(prompt);
    return { prompt, confirm, cancel };
  };

  it('the link alone signs nobody in: it asks, saying when the request was made', async () => {
    const code = await newCode();
    const from = w.user();
    const { prompt, confirm, cancel } = await open(from, code.code);
    const [row] = await w.t.dataSource.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS at FROM login_codes
       ORDER BY created_at DESC LIMIT 1`,
    );
    expect((prompt.body as { text: string }).text).toContain(`made at ${row.at} UTC`);
    expect([confirm.text, cancel.text]).toEqual(['Confirm', 'Cancel']);
    expect((await poll(code)).body).toEqual({ status: 'pending' });
  });

  it('Confirm by the account that opened it: polling gives a bootstrap token once, for that account', async () => {
    const code = await newCode();
    const from = w.user();
    const { confirm } = await open(from, code.code);
    await w.press(from, confirm.callback_data as string);
    expect(w.botApi.callsOf('answerCallbackQuery').length).toBeGreaterThan(0);
    expect(w.sentTo(from.id, 'editMessageText').at(-1)?.body).toMatchObject({
      text: 'Signed in. Go back to the app.',
    });

    const first = await poll(code);
    expect(first.body.status).toBe('confirmed');
    expect((await poll(code)).body).toEqual({ status: 'expired' });
    const exchanged = await w.t
      .http()
      .post('/api/v1/auth/exchange')
      .send({ bootstrap_token: first.body.bootstrap_token })
      .expect(200);
    expect(exchanged.body.user.tg_id).toBe(from.id);
  });

  it('Cancel ends the code: polling answers expired, and Confirm afterwards does nothing', async () => {
    const code = await newCode();
    const from = w.user('ru');
    const { confirm, cancel } = await open(from, code.code);
    expect(confirm.text).toBe('Подтвердить');
    await w.press(from, cancel.callback_data as string);
    expect((await poll(code)).body).toEqual({ status: 'expired' });
    await w.press(from, confirm.callback_data as string);
    expect((await poll(code)).body).toEqual({ status: 'expired' });
    expect(w.sentTo(from.id, 'editMessageText').at(-1)?.body).toMatchObject({
      text: 'Этот запрос на вход больше не ждёт ответа.',
    });
  });

  it('another account can neither confirm the code nor take it over by opening it', async () => {
    const code = await newCode();
    const victim = w.user();
    const attacker = w.user();
    const { confirm } = await open(victim, code.code);

    // The same button data, pressed by someone else.
    await w.press(attacker, confirm.callback_data as string);
    expect((await poll(code)).body).toEqual({ status: 'pending' });

    // Opening the link that another account opened first is refused.
    await w.start(attacker, `login_${code.code}`);
    const refusal = w.sentTo(attacker.id, 'sendMessage').at(-1);
    expect((refusal?.body as { text: string }).text).toContain('belongs to another account');
    expect(w.buttons(refusal!)).toEqual([]);
    expect((await poll(code)).body).toEqual({ status: 'pending' });
  });

  it('an unknown or expired code is not offered for confirmation', async () => {
    const from = w.user();
    await w.start(from, 'login_AAAAAAAAAAAAAAAAAAAAAA');
    const answer = w.sentTo(from.id, 'sendMessage').at(-1);
    expect((answer?.body as { text: string }).text).toContain('has expired');
    expect(w.buttons(answer!)).toEqual([]);
  });
});
