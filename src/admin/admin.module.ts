import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { UsersModule } from '../users/users.module';
import { AdminUsersController } from './admin-users.controller';
import { AdminRepository } from './admin.repository';
import { AdminService } from './admin.service';

/** Staff administration: staff accounts, node access and traffic limits. */
@Module({
  imports: [UsersModule, AuditModule],
  controllers: [AdminUsersController],
  providers: [AdminRepository, AdminService],
})
export class AdminModule {}
