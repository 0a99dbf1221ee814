import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { JwtAuthGuard } from './guards/jwt-auth.guard';
import { OriginGuard } from './guards/origin.guard';
import { ThrottlingModule } from '../common/throttling/throttling.module';
import { AuditModule } from '../audit/audit.module';
import { SecretBox, secretBoxFactory } from '../common/secret-box';
import { SETTINGS } from '../config/settings.module';
import { UsersModule } from '../users/users.module';
import { AuthController } from './auth.controller';
import { AuthCleanupJob } from './auth.jobs';
import { AuthRepository } from './auth.repository';
import { AuthService } from './auth.service';
import { JwtStrategy } from './jwt.strategy';
import { SessionsService } from './sessions.service';
import { StaffDevices } from './staff-devices';
import { STAFF_LOGIN_TRACKERS } from './staff-login-throttles';
import { TotpController } from './totp.controller';
import { TotpRepository } from './totp.repository';
import { TotpService } from './totp.service';
import { AUTH_ENTITIES } from './auth.entities';

/**
 * Accounts' sign-in and sessions (seed, Telegram, staff password), the staff sign-in throttles'
 * trackers, and the global guards every route passes: the origin check, then authentication.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature(AUTH_ENTITIES),
    PassportModule,
    ThrottlingModule,
    UsersModule,
    AuditModule,
  ],
  controllers: [AuthController, TotpController],
  providers: [
    AuthRepository,
    AuthCleanupJob,
    AuthService,
    SessionsService,
    StaffDevices,
    TotpRepository,
    TotpService,
    { provide: SecretBox, useFactory: secretBoxFactory, inject: [SETTINGS] },
    ...STAFF_LOGIN_TRACKERS,
    JwtStrategy,
    // Order matters: the origin check runs before authentication and before any rule of the route.
    { provide: APP_GUARD, useClass: OriginGuard },
    { provide: APP_GUARD, useClass: JwtAuthGuard },
  ],
  exports: [AuthService, SessionsService],
})
export class AuthModule {}
