import { Inject, Injectable } from '@nestjs/common';
import { parse as parseCookies } from 'cookie';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import type { KeyObject } from 'node:crypto';
import { ExtractJwt, Strategy } from 'passport-jwt';
import type { AuthUser } from './guards/auth-user';
import { authenticationError } from './guards/jwt-auth.guard';
import { type BatchQueue, sharedStatement } from '../common/concurrency/batch-queue';
import { ACCESS_COOKIE } from './guards/cookies';
import { AppError } from '../common/errors';
import { CANONICAL_UUID } from '../common/uuid';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import {
  AccountsRepository,
  type SessionKey,
  type UserWithDefaults,
} from '../users/accounts.repository';
import { refuseBlocked } from '../users/blocked';
import {
  ACCESS_TOKEN_ALGORITHM,
  type AccessClaims,
  accessTokenKey,
  verifyAccessToken,
} from './sessions.service';

const fromBearer = ExtractJwt.fromAuthHeaderAsBearerToken();

/**
 * The `Authorization` header when there is one, else the access cookie. A header that holds no
 * usable token is a 401, never a fall-back to the cookie, which the origin check did not look at.
 * The signed-in lane asks before the cookie parser has run: the cookie header is read here then.
 */
const accessToken = (request: Request): string | null => {
  if (request.headers.authorization !== undefined) return fromBearer(request);
  const cookies = (request.cookies ?? cookiesOf(request.headers.cookie)) as Record<string, unknown>;
  const value = cookies[ACCESS_COOKIE];
  return typeof value === 'string' ? value : null;
};

const cookiesOf = (header: string | undefined): Record<string, string | undefined> =>
  header === undefined ? {} : parseCookies(header);

/**
 * Reads the access JWT from `Authorization: Bearer` or, without that header, the access cookie,
 * and accepts it
 * only while its session is not revoked, so signing out or reuse detection takes effect at once.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  /**
   * Every signed-in request reads its session and caller; requests that arrive while a read is
   * running share the next one, so a busy service makes one round trip per batch, not per request.
   */
  private readonly sessions: BatchQueue<SessionKey, UserWithDefaults | null>;
  private readonly key: KeyObject;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    users: AccountsRepository,
  ) {
    const key = accessTokenKey(settings);
    super({
      jwtFromRequest: accessToken,
      // passport-jwt hands the key to jsonwebtoken, which takes a KeyObject; its typings predate that.
      secretOrKey: key as unknown as Buffer,
      algorithms: [ACCESS_TOKEN_ALGORITHM],
      ignoreExpiration: false,
    });
    this.sessions = sharedStatement(
      (keys) => users.findBySessions(keys),
      'too many requests waiting, retry shortly',
      settings.dbPoolWaitMs,
    );
    this.key = key;
  }

  /**
   * The caller as passport and `validate` find it, for the signed-in lane (`signed-in-lane.ts`):
   * the same token, key, algorithm and expiry as passport-jwt's `jwt.verify`, then `validate`.
   * Null where authentication would refuse before reading the session (the general pipeline then
   * answers it); past that, `validate`'s refusals and failures are thrown as the guard throws them.
   */
  async callerOf(request: Request): Promise<AuthUser | null> {
    const token = accessToken(request);
    if (token === null) return null;
    const claims = verifyAccessToken(this.key, token);
    if (typeof claims !== 'object' || claims === null) return null;
    return this.validate(claims).catch((error: unknown) => {
      throw authenticationError(error);
    });
  }

  /** The verified payload, whatever it holds: checked here before any of it is used. */
  async validate(
    claims: Partial<Record<keyof AccessClaims | 'exp' | 'iat', unknown>>,
  ): Promise<AuthUser> {
    const { sub, sid, exp, iat } = claims;
    // jsonwebtoken checks `exp` only when it is there: a token without one would never expire.
    if (
      typeof exp !== 'number' ||
      typeof iat !== 'number' ||
      exp - iat > this.settings.accessTokenTtlS
    ) {
      throw new AppError('UNAUTHENTICATED', 'the access token has no expiry or too long a life');
    }
    if (
      typeof sub !== 'string' ||
      typeof sid !== 'string' ||
      !CANONICAL_UUID.test(sub) ||
      !CANONICAL_UUID.test(sid)
    ) {
      throw new AppError('UNAUTHENTICATED', 'malformed access token');
    }
    const record = await this.sessions.submit({ sessionId: sid, userId: sub });
    if (!record) throw new AppError('UNAUTHENTICATED', 'this session was signed out');
    // Blocking ends the account's sessions; one started while the block committed ends here.
    refuseBlocked(record.user);
    return {
      id: record.user.id,
      role: record.user.role,
      canManageNodes: record.user.canManageNodes,
      sessionId: sid,
      record,
    };
  }
}
