import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type RateLimits } from '../../config/settings';
import type { AuthenticatedRequest } from '../auth/auth-user';
import { sha256 } from '../secrets';
import { CANONICAL_UUID } from '../uuid';
import { DocumentedGuard } from '../openapi/answers';
import { throttleAddress } from './client-address';
import { RateLimiter } from './rate-limiter';

/** What a throttle counts by; null when the request has no such thing (it is then not counted). */
const TRACKERS = {
  address: (request: AuthenticatedRequest) => throttleAddress(request.ip),
  /** Everyone together: a bound on the work a flood causes, whatever addresses it claims. */
  global: () => 'all',
  account: (request: AuthenticatedRequest) => request.user?.id ?? null,
  /** The seed a sign-in tries, hashed: a bounded key whatever the client sends. */
  seed: (request: AuthenticatedRequest) => {
    const seed = (request.body as { seed?: unknown } | undefined)?.seed;
    return typeof seed === 'string' ? sha256(seed).toString('base64url') : null;
  },
  /** The ticket addressed by the path; none when the path holds no ticket id (the route's 400). */
  ticket: (request: AuthenticatedRequest) => {
    const id = (request.params as Record<string, string | undefined>).id?.toLowerCase();
    return id !== undefined && CANONICAL_UUID.test(id) ? id : null;
  },
} as const;

export interface RateRule {
  /** The counter's name: routes naming the same one share it. */
  name: string;
  limit: keyof RateLimits;
  by: keyof typeof TRACKERS;
}

const RATE_RULES = 'throttle:rules';

/**
 * Throttles a route by the rules given, counted in PostgreSQL (every instance sees the same hits,
 * memory stays flat). Runs after authentication, so `account` rules see the caller. Over a limit:
 * 429 RATE_LIMITED with `Retry-After`.
 */
export const RateLimited = (...rules: RateRule[]) =>
  applyDecorators(SetMetadata(RATE_RULES, rules), UseGuards(RateLimitGuard));

@Injectable()
@DocumentedGuard({ errors: ['RATE_LIMITED'] })
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rules = this.reflector.get<RateRule[] | undefined>(RATE_RULES, context.getHandler());
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    for (const rule of rules ?? []) {
      const key = TRACKERS[rule.by](request);
      if (key === null) continue;
      await this.limiter.hit(rule.name, `${rule.by}:${key}`, rule.limit);
    }
    return true;
  }
}
