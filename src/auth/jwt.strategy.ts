import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { ExtractJwt, Strategy } from 'passport-jwt';
import type { AuthUser } from '../common/auth/auth-user';
import { ACCESS_COOKIE } from '../common/auth/cookies';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { UsersRepository } from '../users/users.repository';
import { type AccessClaims, accessTokenKey } from './sessions.service';

const fromBearer = ExtractJwt.fromAuthHeaderAsBearerToken();

/**
 * The `Authorization` header when there is one, else the access cookie. A header that holds no
 * usable token is a 401, never a fall-back to the cookie, which the origin check did not look at.
 */
const accessToken = (request: Request): string | null => {
  if (request.headers.authorization !== undefined) return fromBearer(request);
  const value = (request.cookies as Record<string, unknown> | undefined)?.[ACCESS_COOKIE];
  return typeof value === 'string' ? value : null;
};

/**
 * Reads the access JWT from `Authorization: Bearer` or, without that header, the access cookie,
 * and accepts it
 * only while its session is not revoked, so signing out or reuse detection takes effect at once.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly users: UsersRepository,
  ) {
    super({
      jwtFromRequest: accessToken,
      // passport-jwt hands the key to jsonwebtoken, which takes a KeyObject; its typings predate that.
      secretOrKey: accessTokenKey(settings) as unknown as Buffer,
      algorithms: ['HS256'],
      ignoreExpiration: false,
    });
  }

  async validate(claims: AccessClaims): Promise<AuthUser> {
    if (typeof claims.sub !== 'string' || typeof claims.sid !== 'string') {
      throw new AppError('UNAUTHENTICATED', 'malformed access token');
    }
    const record = await this.users.findBySession(claims.sid, claims.sub);
    if (!record) throw new AppError('UNAUTHENTICATED', 'this session was signed out');
    return {
      id: record.user.id,
      role: record.user.role,
      canManageNodes: record.user.canManageNodes,
      sessionId: claims.sid,
      record,
    };
  }
}
