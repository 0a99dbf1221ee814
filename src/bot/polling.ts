import type { Logger } from '@nestjs/common';
import { type Api, GrammyError } from 'grammy';
import type { Update } from 'grammy/types';
import type { AdvisoryLocks } from '../database/advisory-lock';
import {
  ALLOWED_UPDATES,
  POLL_LOCK_RETRY_MS,
  POLL_TIMEOUT_S,
  POLLING_LOCK_KEY,
} from './bot.constants';

/**
 * Long polling on one instance: whoever holds the advisory lock polls, the others try to take it
 * over now and then. Updates are handled one after another; on stop the offset after the last
 * handled one is sent back to Telegram, so a restart receives only what was not handled.
 */
/** grammY types its signal with a polyfill's type; Node's own AbortSignal is what it gets. */
export type ApiSignal = Parameters<Api['getUpdates']>[1];

export class Polling {
  private stopping = false;
  private readonly abort = new AbortController();
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly api: Api,
    private readonly locks: AdvisoryLocks,
    private readonly handle: (update: Update) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const lock = await this.locks.hold(POLLING_LOCK_KEY).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'could not ask for the polling lock');
        return null;
      });
      if (!lock) {
        await this.sleep(POLL_LOCK_RETRY_MS);
        continue;
      }
      try {
        await this.pollWhileHeld();
      } catch (error) {
        this.logger.error({ err: error }, 'polling stopped; trying again');
        await this.sleep(POLL_LOCK_RETRY_MS);
      } finally {
        await lock.release().catch(() => undefined);
      }
    }
  }

  private async pollWhileHeld(): Promise<void> {
    // getUpdates is refused while a webhook is set.
    await this.api.deleteWebhook({}, this.abort.signal as ApiSignal).catch(() => undefined);
    let offset: number | undefined;
    while (!this.stopping) {
      let updates: Update[];
      try {
        updates = await this.api.getUpdates(
          { offset, timeout: POLL_TIMEOUT_S, allowed_updates: [...ALLOWED_UPDATES] },
          this.abort.signal as ApiSignal,
        );
      } catch (error) {
        if (this.stopping) break;
        const retryAfter = error instanceof GrammyError ? (error.parameters.retry_after ?? 3) : 3;
        this.logger.warn({ err: error }, `getUpdates failed; again in ${retryAfter} s`);
        await this.sleep(retryAfter * 1000);
        continue;
      }
      for (const update of updates) {
        if (this.stopping) break;
        await this.handle(update);
        offset = update.update_id + 1;
      }
    }
    if (offset !== undefined) {
      // Confirms every handled update: Telegram forgets updates below the offset.
      await this.api.getUpdates({ offset, limit: 1, timeout: 0 }).catch((error) => {
        this.logger.warn({ err: error }, 'could not confirm the handled updates');
      });
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
