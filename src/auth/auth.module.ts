import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { ThrottlerModule, type ThrottlerOptions } from '@nestjs/throttler';
import { JwtAuthGuard } from '../common/auth/jwt-auth.guard';
import { OriginGuard } from '../common/auth/origin.guard';
import { PostgresThrottlerStorage } from '../common/throttling/postgres-throttler.storage';
import { throttleAddress } from '../common/throttling/client-address';
import { ThrottlingModule } from '../common/throttling/throttling.module';
import { UsersModule } from '../users/users.module';
import { AuthController } from './auth.controller';
import { AuthRepository } from './auth.repository';
import { AuthService } from './auth.service';
import { JwtStrategy } from './jwt.strategy';
import { SessionsService } from './sessions.service';
import { StaffDevices } from './staff-devices';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';

function usernameOf(request: Record<string, unknown>): string {
  const username = (request.body as { username?: unknown } | undefined)?.username;
  return typeof username === 'string' ? username.toLowerCase().slice(0, 64) : '';
}

/**
 * Staff login attempts. The strict limit is per client address and username, so a stranger who
 * guesses at `owner` cannot lock the owner out from elsewhere; a looser ceiling per username,
 * whatever the address, slows a guess spread over many addresses; and one per address slows a
 * sweep of usernames. A device that signed in as that username before (its device cookie) counts
 * against itself instead of the address and username: guesses from elsewhere, however many
 * addresses they come from, never block it; nor does the count per address, which a neighbour
 * behind the same address (or NAT) fills. IPv6 clients count by their /64. Behind a reverse proxy set TRUST_PROXY to the hops or
 * the proxies' addresses, or every client shares one address.
 */
export function loginThrottles(devices: StaffDevices): ThrottlerOptions[] {
  const device = (request: Record<string, unknown>): string | null =>
    devices.deviceOf(request.cookies as Record<string, unknown> | undefined, usernameOf(request));
  return [
    {
      name: 'ip',
      ttl: 60_000,
      limit: 20,
      // A known device has its own count here too: neighbours behind its address (or a stranger
      // guessing from it) never lock it out.
      getTracker: (request: Record<string, unknown>) => {
        const known = device(request);
        return known ? `device:${known}` : `address:${throttleAddress(request.ip as string)}`;
      },
    },
    {
      name: 'account',
      ttl: 60_000,
      limit: 5,
      getTracker: (request: Record<string, unknown>) => {
        const known = device(request);
        return known
          ? `device:${known}`
          : `${throttleAddress(request.ip as string)}|${usernameOf(request)}`;
      },
    },
    {
      name: 'username',
      ttl: 60_000,
      limit: 30,
      getTracker: (request: Record<string, unknown>) => {
        const known = device(request);
        return known ? `device:${known}` : `username:${usernameOf(request)}`;
      },
    },
  ];
}

@Module({
  imports: [
    PassportModule,
    // Counted in PostgreSQL: every instance behind the load balancer sees the same attempts.
    ThrottlerModule.forRootAsync({
      imports: [ThrottlingModule],
      inject: [PostgresThrottlerStorage, SETTINGS],
      useFactory: (storage: PostgresThrottlerStorage, settings: Settings) => ({
        throttlers: loginThrottles(new StaffDevices(settings)),
        storage,
      }),
    }),
    ThrottlingModule,
    UsersModule,
  ],
  controllers: [AuthController],
  providers: [
    AuthRepository,
    AuthService,
    SessionsService,
    StaffDevices,
    JwtStrategy,
    // Order matters: the origin check runs before authentication and before any rule of the route.
    { provide: APP_GUARD, useClass: OriginGuard },
    { provide: APP_GUARD, useClass: JwtAuthGuard },
  ],
  exports: [AuthService, SessionsService],
})
export class AuthModule {}
