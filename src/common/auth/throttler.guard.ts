import { Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { ExecutionContext } from '@nestjs/common';
import { AppError } from '../errors';
import { DocumentedGuard } from '../openapi/answers';

/** Throttles login attempts; answers 429 RATE_LIMITED with `Retry-After` in seconds. */
@Injectable()
@DocumentedGuard({ errors: ['RATE_LIMITED'] })
export class LoginThrottlerGuard extends ThrottlerGuard {
  protected override async throwThrottlingException(
    _context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    throw new AppError('RATE_LIMITED', 'too many attempts, try again later', undefined, {
      'Retry-After': String(Math.max(1, detail.timeToBlockExpire)),
    });
  }
}
