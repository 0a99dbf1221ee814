import { startTestApp, type TestApp } from './harness/app';
import { freePort } from './harness/processes';

const WEBHOOK_SECRET = 'outage-webhook-secret-0123456789';

describe('bot: Telegram unreachable', () => {
  let t: TestApp | undefined;
  afterAll(() => t?.close());

  it('a webhook update that cannot reach Telegram gives up, and the service still stops at once', async () => {
    // Nothing listens there: every call to the Bot API fails to connect.
    const telegram = `http://127.0.0.1:${await freePort()}`;
    t = await startTestApp({
      BOT_MODE: 'webhook',
      BOT_TOKEN: '123456:TEST-outage-bot-token',
      BOT_WEBHOOK_SECRET: WEBHOOK_SECRET,
      PUBLIC_API_URL: 'https://api.example.test',
      TELEGRAM_API_ROOT: telegram,
    });
    const from = { id: 700_000_001, is_bot: false, first_name: 'F' };
    const answer = await t
      .http()
      .post('/api/v1/bot/webhook')
      .set('X-Telegram-Bot-Api-Secret-Token', WEBHOOK_SECRET)
      .send({
        update_id: 900_001,
        message: {
          message_id: 1,
          date: 1,
          chat: { id: from.id, type: 'private' },
          from,
          text: '/start',
        },
      });
    expect(answer.status).toBe(200);

    const stopping = performance.now();
    const app = t;
    t = undefined;
    await app.close();
    // Before, network errors were retried with a back-off of up to an hour and the shutdown
    // waited for the update without a limit.
    expect(performance.now() - stopping).toBeLessThan(8_000);
  }, 30_000);
});
