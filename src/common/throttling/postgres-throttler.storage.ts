import { Injectable } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottleHitsRepository } from './throttle-hits.repository';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * Throttle counters in PostgreSQL, so that every instance behind the load balancer counts the same
 * attempts, and memory stays flat whatever keys a client makes up (rows expire and are deleted by
 * the clean-up job).
 */
@Injectable()
export class PostgresThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly hits: ThrottleHitsRepository) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const count = await this.hits.hit(`${throttlerName}:${key}`, ttl, limit, blockDuration);
    return {
      totalHits: count.hits,
      timeToExpire: count.expiresInS,
      isBlocked: count.blockedForS > 0,
      timeToBlockExpire: count.blockedForS,
    };
  }
}
