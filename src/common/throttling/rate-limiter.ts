import { Inject, Injectable } from '@nestjs/common';
import { type RateLimits, type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { AppError } from '../errors';
import { ThrottleHitsRepository } from './throttle-hits.repository';

/**
 * The one form of a throttle's key: what it counts by (`address`, `account`...) and whose attempt it
 * is (for an address, always `throttleAddress`'s form of it), so counters of the same thing meet.
 */
export function throttleKey(kind: string, key: string): string {
  return `${kind}:${key}`;
}

/**
 * The service's one rate limiter: counts one attempt at something limited (`limit`, a RATE_*
 * setting) for one key, in PostgreSQL so every instance counts the same attempts and memory stays
 * flat. Over the limit: 429 RATE_LIMITED with `Retry-After`, and refused for one window. Routes
 * declare their throttles with `@RateLimited`; services count here directly where the caller is not
 * only HTTP (invoice orders also come from the bot) or where what is counted depends on what the
 * service found (sign-ins naming no staff account).
 */
@Injectable()
export class RateLimiter {
  constructor(
    private readonly hits: ThrottleHitsRepository,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** `name`: the counter (callers naming the same one share it); `key`: whose attempt it is. */
  async hit(name: string, key: string, limit: keyof RateLimits): Promise<void> {
    const { limit: most, windowS } = this.settings.rateLimits[limit];
    const windowMs = windowS * 1000;
    const count = await this.hits.hit(`${name}:${key}`, windowMs, most, windowMs);
    if (count.blockedForS > 0) {
      throw new AppError('RATE_LIMITED', 'too many requests, try again later', undefined, {
        'Retry-After': String(Math.max(1, count.blockedForS)),
      });
    }
  }
}
