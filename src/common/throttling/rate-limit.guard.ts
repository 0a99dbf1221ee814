import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { type RateLimits } from '../../config/settings';
import { sha256 } from '../secrets';
import { CANONICAL_UUID } from '../uuid';
import { DocumentedGuard } from '../openapi/answers';
import { throttleAddress } from './client-address';
import { RateLimiter, throttleKey } from './rate-limiter';

/** A request as the throttles read it: the caller's id once authentication has put it there. */
export type ThrottledRequest = Request & { user?: { id: string } };

/** What a throttle counts by; null when the request has no such thing (it is then not counted). */
const TRACKERS = {
  address: (request: ThrottledRequest) => throttleAddress(request.ip),
  /** Everyone together: a bound on the work a flood causes, whatever addresses it claims. */
  global: () => 'all',
  account: (request: ThrottledRequest) => request.user?.id ?? null,
  /** The seed a sign-in tries, hashed: a bounded key whatever the client sends. */
  seed: (request: ThrottledRequest) => {
    const seed = (request.body as { seed?: unknown } | undefined)?.seed;
    return typeof seed === 'string' ? sha256(seed).toString('base64url') : null;
  },
  /** The ticket addressed by the path; none when the path holds no ticket id (the route's 400). */
  ticket: (request: ThrottledRequest) => {
    const id = (request.params as Record<string, string | undefined>).id?.toLowerCase();
    return id !== undefined && CANONICAL_UUID.test(id) ? id : null;
  },
} as const;

/**
 * A tracker that needs the application's services (a signing key, say): an injectable class of
 * whichever module owns that knowledge, found by the guard among the application's providers.
 */
export interface RequestTracker {
  /** Whose attempt the request is; null when it is not counted. */
  keyOf(request: ThrottledRequest): string | null;
}

export interface RateRule {
  /** The counter's name: routes naming the same one share it. */
  name: string;
  /** The RATE_* setting that bounds it. */
  limit: keyof RateLimits;
  /** What it counts by: a tracker above, or a `RequestTracker` class (its name prefixes the key). */
  by: keyof typeof TRACKERS | Type<RequestTracker>;
}

const RATE_RULES = 'throttle:rules';

/**
 * Throttles a route by the rules given, in their order, through the `RateLimiter` (counted in
 * PostgreSQL). Runs after authentication, so `account` rules see the caller; before validation, so
 * a malformed attempt counts too. Over a limit: 429 RATE_LIMITED with `Retry-After`, and the rules
 * after it are not counted.
 */
export const RateLimited = (...rules: RateRule[]) =>
  applyDecorators(SetMetadata(RATE_RULES, rules), UseGuards(RateLimitGuard));

@Injectable()
@DocumentedGuard({ errors: ['RATE_LIMITED'] })
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
    private readonly modules: ModuleRef,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rules = this.reflector.get<RateRule[] | undefined>(RATE_RULES, context.getHandler());
    const request = context.switchToHttp().getRequest<ThrottledRequest>();
    for (const rule of rules ?? []) {
      const [kind, key] =
        typeof rule.by === 'string'
          ? [rule.by, TRACKERS[rule.by](request)]
          : [rule.by.name, this.modules.get(rule.by, { strict: false }).keyOf(request)];
      if (key === null) continue;
      await this.limiter.hit(rule.name, throttleKey(kind, key), rule.limit);
    }
    return true;
  }
}
