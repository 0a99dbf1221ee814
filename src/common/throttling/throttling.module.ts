import { Module } from '@nestjs/common';
import { PostgresThrottlerStorage } from './postgres-throttler.storage';
import { RateLimitGuard } from './rate-limit.guard';
import { RateLimiter } from './rate-limiter';
import { ThrottleCleanup } from './throttle-cleanup.service';
import { ThrottleHitsRepository } from './throttle-hits.repository';

/** Throttle counters shared by every instance through PostgreSQL, the guard, and their clean-up. */
@Module({
  providers: [
    ThrottleHitsRepository,
    PostgresThrottlerStorage,
    ThrottleCleanup,
    RateLimiter,
    RateLimitGuard,
  ],
  exports: [PostgresThrottlerStorage, ThrottleCleanup, RateLimiter, RateLimitGuard],
})
export class ThrottlingModule {}
