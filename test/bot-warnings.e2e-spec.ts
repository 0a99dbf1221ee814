import { randomUUID } from 'node:crypto';
import { Clock } from '../src/billing/clock';
import { TrafficResetService } from '../src/billing/traffic-reset.service';
import { RemindersService } from '../src/bot/reminders.service';
import { SubscriptionsRepository } from '../src/users/subscriptions.repository';
import { type BotWorld, type TgUser, startBotWorld } from './fakes/bot';
import { newUser } from './harness/factories';
import { createNode } from './harness/nodes';

const LIMIT = 1_000_000;

describe('bot: traffic warnings at 80% and 100%, once each, and turned off in the bot (issue 45)', () => {
  let w: BotWorld;
  let warnings: RemindersService;
  let nodeId: string;

  beforeAll(async () => {
    w = await startBotWorld();
    warnings = w.t.app.get(RemindersService);
    const owner = await newUser(w.t, 'owner');
    nodeId = (await createNode(w.t, owner)).id;
    await w.t
      .http()
      .put('/api/v1/admin/plans/capped')
      .set(owner.bearer)
      .send({
        duration_days: 30,
        traffic_limit_bytes: LIMIT,
        prices: { USD: '499' },
        active: true,
        traffic_reset: 'month',
        reset_day: 1,
      })
      .expect(200);
  });
  afterAll(() => w.close());

  /** A Telegram account that bought the capped plan. */
  async function subscriber(language: string): Promise<TgUser & { userId: string }> {
    const from = w.user(language);
    await w.start(from);
    const [row] = (await w.t.dataSource.query(`SELECT id FROM users WHERE tg_id = $1`, [
      from.id,
    ])) as { id: string }[];
    await w.t.app.get(SubscriptionsRepository).extendForPlan(row.id, 'capped');
    return { ...from, userId: row.id };
  }

  const report = (userId: string, bytes: number) =>
    w.t
      .http()
      .post('/api/v1/internal/traffic')
      .set('X-Internal-Secret', w.t.settings.internalSecret)
      .send({
        node_id: nodeId,
        report_id: randomUUID(),
        entries: [{ user_id: userId, bytes_up: 0, bytes_down: bytes }],
      })
      .expect(200);

  const warningsTo = (from: TgUser) =>
    w
      .sentTo(from.id, 'sendMessage')
      .map((call) => (call.body as { text: string }).text)
      .filter((text) => /^(You have used|Вы израсходовали)/.test(text));

  it('80% crossed sends one, a second report past 80% none, 100% one; two instances send each once', async () => {
    const en = await subscriber('en');
    const ru = await subscriber('ru');

    await report(en.userId, 700_000);
    await report(ru.userId, 700_000);
    expect((await warnings.runTrafficWarnings()).sent).toBe(0);

    await report(en.userId, 150_000);
    await report(ru.userId, 150_000);
    // Two instances at once: each warning goes out once.
    await Promise.all([warnings.runTrafficWarnings(), warnings.runTrafficWarnings()]);
    await warnings.runTrafficWarnings();
    expect(warningsTo(en)).toHaveLength(1);
    expect(warningsTo(en)[0]).toMatch(/^You have used 80% of your VPN traffic/);
    expect(warningsTo(en)[0]).toMatch(/starts again from zero on \d{4}-\d\d-01 00:00 UTC/);
    expect(warningsTo(ru)[0]).toMatch(/^Вы израсходовали 80% трафика/);
    const buttons = w.buttons(w.sentTo(en.id, 'sendMessage').at(-1)!);
    expect(buttons).toContainEqual({
      text: 'Turn these messages off',
      callback_data: 'v1:warnings:off',
    });

    await report(en.userId, 50_000);
    await warnings.runTrafficWarnings();
    expect(warningsTo(en)).toHaveLength(1);

    await report(en.userId, 200_000);
    await Promise.all([warnings.runTrafficWarnings(), warnings.runTrafficWarnings()]);
    expect(warningsTo(en)).toHaveLength(2);
    expect(warningsTo(en)[1]).toMatch(/^You have used all of your VPN traffic/);
    await report(en.userId, 200_000);
    await warnings.runTrafficWarnings();
    expect(warningsTo(en)).toHaveLength(2);
  });

  it('a reset opens a new period: the warnings come again, and the old ones are gone', async () => {
    const from = await subscriber('en');
    await report(from.userId, 900_000);
    await warnings.runTrafficWarnings();
    expect(warningsTo(from)).toHaveLength(1);
    const [{ due }] = (await w.t.dataSource.query(
      `SELECT traffic_reset_at AS due FROM users WHERE id = $1`,
      [from.userId],
    )) as { due: Date }[];
    w.t.app.get(Clock).now = () => due.getTime() + 1000;
    try {
      expect((await w.t.app.get(TrafficResetService).run()).reset).toBeGreaterThanOrEqual(1);
    } finally {
      w.t.app.get(Clock).now = () => Date.now();
    }
    const [{ n }] = (await w.t.dataSource.query(
      `SELECT count(*)::int AS n FROM traffic_warnings WHERE user_id = $1`,
      [from.userId],
    )) as { n: number }[];
    expect(n).toBe(0);
    await report(from.userId, 900_000);
    await warnings.runTrafficWarnings();
    expect(warningsTo(from)).toHaveLength(2);
  });

  it('a jump straight past the limit sends the 100% warning only', async () => {
    const from = await subscriber('en');
    await report(from.userId, 1_200_000);
    await warnings.runTrafficWarnings();
    expect(warningsTo(from)).toHaveLength(1);
    expect(warningsTo(from)[0]).toMatch(/used all of your VPN traffic/);
  });

  it('a user turns warnings off in the bot (none then, reminders neither) and on again', async () => {
    const from = await subscriber('en');
    await w.press(from, 'v1:warnings:off');
    expect(
      w
        .sentTo(from.id, 'sendMessage')
        .map((call) => (call.body as { text: string }).text)
        .at(-1),
    ).toMatch(/are off/);
    await report(from.userId, 900_000);
    await warnings.runTrafficWarnings();
    expect(warningsTo(from)).toHaveLength(0);
    await w.t.dataSource.query(
      `UPDATE users SET subscription_expires_at = now() + interval '2 days' WHERE id = $1`,
      [from.userId],
    );
    await warnings.run();
    expect(
      w
        .sentTo(from.id, 'sendMessage')
        .map((call) => (call.body as { text: string }).text)
        .filter((text) => /^Your VPN subscription ends/.test(text)),
    ).toHaveLength(0);

    await w.send({
      update_id: w.nextUpdateId(),
      message: {
        message_id: 1,
        date: Math.floor(Date.now() / 1000),
        chat: { id: from.id, type: 'private' },
        from,
        text: '/warnings',
        entities: [{ type: 'bot_command', offset: 0, length: 9 }],
      },
    });
    const status = w.sentTo(from.id, 'sendMessage').at(-1)!;
    expect(w.buttons(status)).toEqual([
      { text: 'Turn these messages on', callback_data: 'v1:warnings:on' },
    ]);
    await w.press(from, 'v1:warnings:on');
    await warnings.run();
    expect(
      w
        .sentTo(from.id, 'sendMessage')
        .map((call) => (call.body as { text: string }).text)
        .filter((text) => /^Your VPN subscription ends/.test(text)),
    ).toHaveLength(1);
  });
});
