import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { ExtractJwt, Strategy } from 'passport-jwt';
import type { AuthUser } from '../common/auth/auth-user';
import { ACCESS_COOKIE } from '../common/auth/cookies';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AuthRepository } from './auth.repository';
import { type AccessClaims, accessTokenKey } from './sessions.service';

const fromCookie = (request: Request): string | null => {
  const value = (request.cookies as Record<string, unknown> | undefined)?.[ACCESS_COOKIE];
  return typeof value === 'string' ? value : null;
};

/**
 * Reads the access JWT from `Authorization: Bearer` (first) or the access cookie, and accepts it
 * only while its session is not revoked, so signing out or reuse detection takes effect at once.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly repository: AuthRepository,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromExtractors([
        ExtractJwt.fromAuthHeaderAsBearerToken(),
        fromCookie,
      ]),
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
    const caller = await this.repository.activeSessionCaller(claims.sid, claims.sub);
    if (!caller) throw new AppError('UNAUTHENTICATED', 'this session was signed out');
    return {
      id: caller.userId,
      role: caller.role,
      canManageNodes: caller.canManageNodes,
      sessionId: claims.sid,
    };
  }
}
