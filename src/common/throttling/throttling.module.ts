import { Module } from '@nestjs/common';
import { RateLimitGuard } from './rate-limit.guard';
import { RateLimiter } from './rate-limiter';
import { ThrottleCleanup } from './throttle-cleanup.service';
import { ThrottleHitsRepository } from './throttle-hits.repository';

/** The rate limiter, its route guard, and the clean-up of its counters in PostgreSQL. */
@Module({
  providers: [ThrottleHitsRepository, ThrottleCleanup, RateLimiter, RateLimitGuard],
  exports: [ThrottleCleanup, RateLimiter, RateLimitGuard],
})
export class ThrottlingModule {}
