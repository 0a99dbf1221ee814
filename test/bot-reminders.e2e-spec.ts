import { RemindersService } from '../src/bot/reminders.service';
import { type BotWorld, type TgUser, startBotWorld } from './fakes/bot';
import { controlClock, type ControlledClock } from './fakes/clock';

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('bot: subscription reminders', () => {
  let w: BotWorld;
  let clock: ControlledClock;
  let reminders: RemindersService;
  /** Every subscription below ends at the same moment, 10 days after the tests start. */
  const end = new Date(Date.now() + 10 * DAY);
  let offset = 0;

  beforeAll(async () => {
    w = await startBotWorld();
    clock = controlClock(w.t);
    reminders = w.t.app.get(RemindersService);
  });
  afterAll(() => w.close());

  /** Moves the service's clock so that it reads `end + delta`. */
  const at = (delta: number) => {
    const target = end.getTime() + delta - Date.now();
    clock.advance(target - offset);
    offset = target;
  };

  const subscribe = async (from: TgUser, until: Date) => {
    await w.start(from);
    await w.t.dataSource.query(`UPDATE users SET subscription_expires_at = $2 WHERE tg_id = $1`, [
      from.id,
      until,
    ]);
  };

  const remindersTo = (from: TgUser) =>
    w
      .sentTo(from.id, 'sendMessage')
      .map((call) => (call.body as { text: string }).text)
      .filter((text) => /subscription|подписка/i.test(text));

  it('3 days, 1 day before and at the end, each once, in the account language, with a renew button', async () => {
    const en = w.user('en');
    const ru = w.user('ru');
    await subscribe(en, end);
    await subscribe(ru, end);

    at(-10 * DAY + HOUR);
    expect((await reminders.run()).sent).toBe(0);

    at(-2.5 * DAY);
    const [first, again] = [await reminders.run(), await reminders.run()];
    expect(first.sent).toBeGreaterThanOrEqual(2);
    expect(again.sent).toBe(0);
    expect(remindersTo(en)).toEqual([
      `Your VPN subscription ends in 3 days, on ${end.toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
    ]);
    expect(remindersTo(ru)[0]).toMatch(/^Ваша подписка на VPN закончится через 3 дня/);
    const renew = w.buttons(w.sentTo(en.id, 'sendMessage').at(-1)!);
    expect(renew).toEqual([
      { text: 'Renew', callback_data: 'v1:plans' },
      { text: 'Turn these messages off', callback_data: 'v1:warnings:off' },
    ]);

    at(-0.5 * DAY);
    // Two instances at once: the advisory lock lets one send.
    await Promise.all([reminders.run(), reminders.run()]);
    await reminders.run();
    expect(remindersTo(en)).toHaveLength(2);
    expect(remindersTo(en)[1]).toMatch(/ends tomorrow/);

    at(HOUR);
    await reminders.run();
    await reminders.run();
    expect(remindersTo(en)).toHaveLength(3);
    expect(remindersTo(en)[2]).toMatch(/ended on/);
    expect(remindersTo(ru)).toHaveLength(3);
  });

  it('a renewal starts a new set; an account that blocked the bot is not written to until it writes', async () => {
    const blocked = w.user();
    const renewed = w.user();
    const laterEnd = new Date(end.getTime() + 30 * DAY);
    await subscribe(blocked, laterEnd);
    await subscribe(renewed, laterEnd);

    w.botApi.answers.set('sendMessage', (call) =>
      (call.body as { chat_id: number }).chat_id === blocked.id
        ? { error: { code: 403, description: 'Forbidden: bot was blocked by the user' } }
        : undefined,
    );
    at(30 * DAY - 2.5 * DAY);
    const report = await reminders.run();
    expect(report.unreachable).toBe(1);
    const [chat] = await w.t.dataSource.query(
      `SELECT unreachable_at FROM bot_chats WHERE tg_id = $1`,
      [blocked.id],
    );
    expect(chat.unreachable_at).not.toBeNull();
    w.botApi.answers.delete('sendMessage');

    at(30 * DAY - 0.5 * DAY);
    const tried = w.sentTo(blocked.id).length;
    await reminders.run();
    expect(w.sentTo(blocked.id)).toHaveLength(tried);
    expect(remindersTo(renewed)).toHaveLength(2);

    // The user writes again: reachable, and the next reminder reaches it.
    await w.start(blocked);
    at(30 * DAY + HOUR);
    await reminders.run();
    expect(remindersTo(blocked).at(-1)).toMatch(/ended on/);

    // Renewed: the end moves, and its reminders come again for the new end.
    const renewedEnd = new Date(laterEnd.getTime() + 30 * DAY);
    await w.t.dataSource.query(`UPDATE users SET subscription_expires_at = $2 WHERE tg_id = $1`, [
      renewed.id,
      renewedEnd,
    ]);
    const before = remindersTo(renewed).length;
    at(60 * DAY - 2.5 * DAY);
    await reminders.run();
    expect(remindersTo(renewed)).toHaveLength(before + 1);
    expect(remindersTo(renewed).at(-1)).toMatch(/ends in 3 days/);
  });
});
