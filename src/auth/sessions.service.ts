import { Inject, Injectable } from '@nestjs/common';
import type { CookieOptions } from 'express';
import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { type CookieWriter, ACCESS_COOKIE, REFRESH_COOKIE } from './guards/cookies';
import { AppError } from '../common/errors';
import { randomToken, sha256 } from '../common/secrets';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { refuseBlocked } from '../users/blocked';
import type { Role } from '../users/entities/user.entity';
import { AuthRepository, type RotationResult } from './auth.repository';
import { Transactional } from '@nestjs-cls/transactional';

export interface AccessClaims {
  sub: string;
  sid: string;
  role: Role | null;
}

export interface IssuedSession {
  userId: string;
  sessionId: string;
  accessToken: string;
  refreshToken: string;
}

/**
 * The HS256 key of access tokens as a KeyObject, made once. Given a string, jsonwebtoken first
 * tries to parse it as a PEM public key on every call, and that failed attempt dominated the cost
 * of each authenticated request.
 */
export function accessTokenKey(settings: Settings): KeyObject {
  return createSecretKey(Buffer.from(settings.jwtAccessSecret, 'utf8'));
}

/** The one algorithm access tokens are signed with and the only one accepted when verifying. */
export const ACCESS_TOKEN_ALGORITHM = 'HS256' satisfies jwt.Algorithm;

/**
 * The payload of an access token that verifies under `key` (signature, algorithm and expiry, as
 * passport-jwt checks them), whatever the payload holds; null for any token that does not.
 */
export function verifyAccessToken(key: KeyObject, token: string): string | jwt.JwtPayload | null {
  try {
    return jwt.verify(token, key, { algorithms: [ACCESS_TOKEN_ALGORITHM] });
  } catch {
    return null;
  }
}

/** Cookie sessions: a short-lived access JWT and a rotating opaque refresh token. */
@Injectable()
export class SessionsService {
  private readonly key: KeyObject;

  constructor(
    private readonly repository: AuthRepository,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.key = accessTokenKey(settings);
  }

  /** A new sign-in of `user`; 403 ACCOUNT_BLOCKED when staff blocked the account. */
  async start(user: {
    id: string;
    role: Role | null;
    blockedAt: Date | null;
  }): Promise<IssuedSession> {
    refuseBlocked(user);
    const refreshToken = randomToken(32);
    const sessionId = await this.repository.createSession(
      user.id,
      sha256(refreshToken),
      this.settings.refreshTokenTtlS,
    );
    return {
      userId: user.id,
      sessionId,
      refreshToken,
      accessToken: this.signAccess(user.id, sessionId, user.role),
    };
  }

  /**
   * Rotates a refresh token. Reuse of a rotated one revokes every session of its user. A blocked
   * account's token answers 403 ACCOUNT_BLOCKED, whether or not the block has revoked it yet.
   */
  async refresh(
    refreshToken: string | undefined,
    account: (userId: string) => Promise<{ role: Role | null; blockedAt: Date | null }>,
  ): Promise<IssuedSession> {
    if (!refreshToken || refreshToken.length > 200) {
      throw new AppError('REFRESH_INVALID', 'missing or unknown refresh token');
    }
    const next = randomToken(32);
    const result = await this.rotate(sha256(refreshToken), sha256(next));
    switch (result.outcome) {
      case 'rotated': {
        // Blocking revokes every session; this catches a sign-in that raced the block.
        const { role } = refuseBlocked(await account(result.userId));
        return {
          userId: result.userId,
          sessionId: result.sessionId,
          refreshToken: next,
          accessToken: this.signAccess(result.userId, result.sessionId, role),
        };
      }
      case 'reused':
        throw new AppError(
          'REFRESH_REUSED',
          'this refresh token was already used; every session is now signed out',
        );
      case 'invalid':
        // Blocking revoked the session: say so, as a sign-in would, not merely that it is invalid.
        if (result.userId !== null) refuseBlocked(await account(result.userId));
        throw new AppError('REFRESH_INVALID', 'missing, unknown, expired or revoked refresh token');
    }
  }

  /**
   * Rotates the session of `tokenHash` and starts its successor, together. A token that was
   * already rotated is reuse, and revokes every session of its user.
   */
  @Transactional()
  private async rotate(tokenHash: Buffer, newTokenHash: Buffer): Promise<RotationResult> {
    const rotated = await this.repository.markRotated(tokenHash);
    if (rotated) {
      const sessionId = await this.repository.createSession(
        rotated.userId,
        newTokenHash,
        this.settings.refreshTokenTtlS,
        rotated.familyId,
      );
      return { outcome: 'rotated', userId: rotated.userId, sessionId };
    }
    const session = await this.repository.findSession(tokenHash);
    if (session && session.rotatedAt !== null && session.revokedAt === null) {
      await this.repository.revokeAllSessions(session.userId);
      return { outcome: 'reused', userId: session.userId };
    }
    return { outcome: 'invalid', userId: session?.userId ?? null };
  }

  /** Ends the whole sign-in: every access and refresh token of its family stops working. */
  signOut(sessionId: string): Promise<void> {
    return this.repository.revokeFamily(sessionId);
  }

  revokeAll(userId: string): Promise<void> {
    return this.repository.revokeAllSessions(userId);
  }

  setCookies(cookies: CookieWriter, session: IssuedSession): void {
    cookies.set(ACCESS_COOKIE, session.accessToken, {
      ...this.cookieBase('/'),
      maxAge: this.settings.accessTokenTtlS * 1000,
    });
    cookies.set(REFRESH_COOKIE, session.refreshToken, {
      ...this.cookieBase(REFRESH_PATH),
      maxAge: this.settings.refreshTokenTtlS * 1000,
    });
  }

  clearCookies(cookies: CookieWriter): void {
    cookies.clear(ACCESS_COOKIE, this.cookieBase('/'));
    cookies.clear(REFRESH_COOKIE, this.cookieBase(REFRESH_PATH));
  }

  private signAccess(userId: string, sessionId: string, role: Role | null): string {
    const claims: AccessClaims = { sub: userId, sid: sessionId, role };
    return jwt.sign(claims, this.key, {
      algorithm: ACCESS_TOKEN_ALGORITHM,
      expiresIn: this.settings.accessTokenTtlS,
    });
  }

  private cookieBase(path: string): CookieOptions {
    return {
      httpOnly: true,
      secure: this.settings.cookieSecure,
      sameSite: 'lax',
      path,
      ...(this.settings.cookieDomain ? { domain: this.settings.cookieDomain } : {}),
    };
  }
}

export const REFRESH_PATH = '/api/v1/auth';
