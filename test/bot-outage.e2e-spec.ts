import { startBotWorld } from './fakes/bot';
import { freePort } from './harness/metrics';

describe('bot: Telegram unreachable', () => {
  it('a webhook update that cannot reach Telegram gives up, and the service still stops at once', async () => {
    // Nothing listens there (a port below the range the fakes started next take theirs from):
    // every call to the Bot API fails to connect.
    const w = await startBotWorld(undefined, {
      TELEGRAM_API_ROOT: `http://127.0.0.1:${await freePort()}`,
    });
    let closed = false;
    try {
      const answer = await w.start(w.user());
      expect(answer.status).toBe(200);

      const stopping = performance.now();
      closed = true;
      await w.close();
      // Before, network errors were retried with a back-off of up to an hour, and the shutdown
      // waited for the update without a limit.
      expect(performance.now() - stopping).toBeLessThan(8_000);
    } finally {
      if (!closed) await w.close();
    }
  }, 30_000);
});
