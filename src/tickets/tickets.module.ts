import { Module } from '@nestjs/common';
import { ThrottlingModule } from '../common/throttling/throttling.module';
import { UsersModule } from '../users/users.module';
import { AdminTicketsController, TicketsController } from './tickets.controller';
import { TicketsRepository } from './tickets.repository';
import { TicketsService } from './tickets.service';

@Module({
  imports: [UsersModule, ThrottlingModule],
  controllers: [TicketsController, AdminTicketsController],
  providers: [TicketsRepository, TicketsService],
})
export class TicketsModule {}
