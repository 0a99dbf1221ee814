import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AuthModule } from '../auth/auth.module';
import { UsersModule } from '../users/users.module';
import { AdminStatsController } from './admin-stats.controller';
import { AdminUserActionsController } from './admin-user-actions.controller';
import { AdminUsersController } from './admin-users.controller';
import { AdminRepository } from './admin.repository';
import { AdminService } from './admin.service';
import { StatsRepository } from './stats.repository';
import { StatsService } from './stats.service';
import { UserActionsService } from './user-actions.service';

/**
 * Staff administration: staff accounts, node access, traffic limits, actions on one account
 * (subscription, traffic reset, block, staff passwords) and the business's figures.
 */
@Module({
  imports: [UsersModule, AuditModule, AuthModule],
  controllers: [AdminUsersController, AdminUserActionsController, AdminStatsController],
  providers: [AdminRepository, AdminService, UserActionsService, StatsRepository, StatsService],
})
export class AdminModule {}
