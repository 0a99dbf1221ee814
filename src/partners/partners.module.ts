import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module';
import { UsersModule } from '../users/users.module';
import { AdminWithdrawalsController } from './admin-withdrawals.controller';
import { PartnerAttachController, PartnersController } from './partners.controller';
import { PartnersRepository } from './partners.repository';
import { PartnersService } from './partners.service';
import { WithdrawalsService } from './withdrawals.service';
import { PARTNERS_ENTITIES } from './partners.entities';

/** Partners: attached buyers, earnings, withdrawal requests and staff decisions on them. */
@Module({
  imports: [TypeOrmModule.forFeature(PARTNERS_ENTITIES), UsersModule, AuditModule],
  controllers: [PartnerAttachController, PartnersController, AdminWithdrawalsController],
  providers: [PartnersRepository, PartnersService, WithdrawalsService],
  // The bot attaches buyers through PartnersService.attachToPartner.
  exports: [PartnersService],
})
export class PartnersModule {}
