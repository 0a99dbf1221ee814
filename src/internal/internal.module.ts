import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module';
import { UsersModule } from '../users/users.module';
import { InternalController } from './internal.controller';
import { InternalCleanupJob } from './internal.jobs';
import { InternalRepository } from './internal.repository';
import { InternalService } from './internal.service';

@Module({
  imports: [NodesModule, UsersModule],
  controllers: [InternalController],
  providers: [InternalRepository, InternalService, InternalCleanupJob],
})
export class InternalModule {}
