import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApp } from '../src/app.factory';
import { loadSettings } from '../src/config/settings';
import { createTestDatabase, type TestDatabase } from './harness/database';
import { TEST_SECRETS } from './harness/app';
import { startFakeBotApi, type FakeBotApi } from './fakes/telegram-bot-api';

const TOKEN_A = '111111:polling-instance-a';
const TOKEN_B = '222222:polling-instance-b';

describe('bot: long polling on one instance, stopped cleanly', () => {
  let database: TestDatabase;
  let botApi: FakeBotApi;

  beforeAll(async () => {
    [database, botApi] = await Promise.all([createTestDatabase(), startFakeBotApi()]);
  });
  afterAll(async () => {
    await botApi.close();
    await database.drop();
  });

  /** One more instance of the service on the shared database, polling with `token`. */
  const instance = async (token: string): Promise<NestExpressApplication> => {
    const app = await createApp({
      settings: loadSettings({
        NODE_ENV: 'test',
        DATA_DIR: '/nonexistent-test-data-dir',
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
        ...TEST_SECRETS,
        BOT_MODE: 'polling',
        BOT_TOKEN: token,
        TELEGRAM_API_ROOT: botApi.url,
      }),
      databaseUrl: database.url,
      schedule: false,
    });
    await app.init();
    return app;
  };

  let updateId = 900;
  const queueStart = (chatId: number): number => {
    updateId += 1;
    const from = { id: chatId, is_bot: false, first_name: 'Poller', language_code: 'en' };
    botApi.pendingUpdates.push({
      update_id: updateId,
      message: {
        message_id: updateId,
        date: Math.floor(Date.now() / 1000),
        chat: { id: chatId, type: 'private' },
        from,
        text: '/start',
        entities: [{ type: 'bot_command', offset: 0, length: 6 }],
      },
    } as { update_id: number });
    return updateId;
  };
  const answersTo = (chatId: number) =>
    botApi
      .callsOf('sendMessage')
      .filter((call) => (call.body as { chat_id: number }).chat_id === chatId);
  const polls = (token: string) =>
    botApi.callsOf('getUpdates').filter((call) => call.token === token);

  it('one instance polls; stopping confirms what it handled, so nothing is handled twice', async () => {
    const a = await instance(TOKEN_A);
    const b = await instance(TOKEN_B);
    try {
      const first = queueStart(61_000_001);
      await waitFor(() => answersTo(61_000_001).length === 1);
      expect(polls(TOKEN_A).length).toBeGreaterThan(0);
      // The second instance waits for the lock: it never asks Telegram for updates.
      expect(polls(TOKEN_B)).toEqual([]);
      expect(botApi.callsOf('deleteWebhook').length).toBeGreaterThan(0);
      expect(polls(TOKEN_A)[0].body).toMatchObject({
        allowed_updates: ['message', 'callback_query', 'pre_checkout_query', 'my_chat_member'],
      });

      await b.close();
      await a.close();
      expect(polls(TOKEN_A).at(-1)?.body).toMatchObject({ offset: first + 1, limit: 1 });
    } finally {
      await Promise.allSettled([a.close(), b.close()]);
    }

    // A restarted instance gets only what was not handled.
    const c = await instance(TOKEN_A);
    try {
      queueStart(61_000_002);
      await waitFor(() => answersTo(61_000_002).length === 1);
      expect(answersTo(61_000_001)).toHaveLength(1);
    } finally {
      await c.close();
    }
  }, 60_000);
});

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
