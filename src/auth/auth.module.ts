import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { ThrottlerModule, type ThrottlerOptions } from '@nestjs/throttler';
import { JwtAuthGuard } from '../common/auth/jwt-auth.guard';
import { OriginGuard } from '../common/auth/origin.guard';
import { UsersModule } from '../users/users.module';
import { AuthController } from './auth.controller';
import { AuthRepository } from './auth.repository';
import { AuthService } from './auth.service';
import { JwtStrategy } from './jwt.strategy';
import { SessionsService } from './sessions.service';

function usernameOf(request: Record<string, unknown>): string {
  const username = (request.body as { username?: unknown } | undefined)?.username;
  return typeof username === 'string' ? username.toLowerCase().slice(0, 64) : '';
}

/**
 * Staff login attempts. The strict limit is per client address and username, so a stranger who
 * guesses at `owner` cannot lock the owner out; a looser ceiling per username, whatever the
 * address, slows a guess spread over many addresses; and one per address slows a sweep of
 * usernames. Behind a reverse proxy set TRUST_PROXY=true, or every client shares one address.
 */
export const LOGIN_THROTTLES: ThrottlerOptions[] = [
  { name: 'ip', ttl: 60_000, limit: 20 },
  {
    name: 'account',
    ttl: 60_000,
    limit: 5,
    getTracker: (request: Record<string, unknown>) =>
      `${String(request.ip)}|${usernameOf(request)}`,
  },
  {
    name: 'username',
    ttl: 60_000,
    limit: 30,
    getTracker: (request: Record<string, unknown>) => `username:${usernameOf(request)}`,
  },
];

@Module({
  imports: [PassportModule, ThrottlerModule.forRoot({ throttlers: LOGIN_THROTTLES }), UsersModule],
  controllers: [AuthController],
  providers: [
    AuthRepository,
    AuthService,
    SessionsService,
    JwtStrategy,
    // Order matters: the origin check runs before authentication and before any rule of the route.
    { provide: APP_GUARD, useClass: OriginGuard },
    { provide: APP_GUARD, useClass: JwtAuthGuard },
  ],
  exports: [AuthService, SessionsService],
})
export class AuthModule {}
