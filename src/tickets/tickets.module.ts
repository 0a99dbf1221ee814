import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ThrottlingModule } from '../common/throttling/throttling.module';
import { UsersModule } from '../users/users.module';
import { AdminTicketsController, TicketsController } from './tickets.controller';
import { TicketsRepository } from './tickets.repository';
import { TicketsService } from './tickets.service';
import { TICKETS_ENTITIES } from './tickets.entities';

@Module({
  imports: [TypeOrmModule.forFeature(TICKETS_ENTITIES), UsersModule, ThrottlingModule],
  controllers: [TicketsController, AdminTicketsController],
  providers: [TicketsRepository, TicketsService],
})
export class TicketsModule {}
