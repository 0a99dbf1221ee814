import { Inject, Injectable } from '@nestjs/common';
import { type RateLimits, type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { AppError } from '../errors';
import { PostgresThrottlerStorage } from './postgres-throttler.storage';

/**
 * Counts one attempt at something limited (`limit`, a RATE_* setting) for one key, in PostgreSQL so
 * every instance counts the same attempts and memory stays flat. Over the limit: 429 RATE_LIMITED
 * with `Retry-After`. The route guard (`@RateLimited`) and services whose callers are not only HTTP
 * (invoice orders also come from the bot) both count here.
 */
@Injectable()
export class RateLimiter {
  constructor(
    private readonly storage: PostgresThrottlerStorage,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** `name`: the counter (callers naming the same one share it); `key`: whose attempt it is. */
  async hit(name: string, key: string, limit: keyof RateLimits): Promise<void> {
    const { limit: most, windowS } = this.settings.rateLimits[limit];
    const count = await this.storage.increment(key, windowS * 1000, most, windowS * 1000, name);
    if (count.isBlocked) {
      throw new AppError('RATE_LIMITED', 'too many requests, try again later', undefined, {
        'Retry-After': String(Math.max(1, Math.ceil(count.timeToBlockExpire))),
      });
    }
  }
}
