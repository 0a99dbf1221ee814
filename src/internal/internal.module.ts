import { Module } from '@nestjs/common';
import { DevicesModule } from '../devices/devices.module';
import { NodesModule } from '../nodes/nodes.module';
import { UsersModule } from '../users/users.module';
import { InternalController } from './internal.controller';
import { InternalCleanupJob } from './internal.jobs';
import { InternalRepository } from './internal.repository';
import { InternalService } from './internal.service';

@Module({
  imports: [NodesModule, UsersModule, DevicesModule],
  controllers: [InternalController],
  providers: [InternalRepository, InternalService, InternalCleanupJob],
})
export class InternalModule {}
