import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DevicesModule } from '../devices/devices.module';
import { NodesModule } from '../nodes/nodes.module';
import { UsersModule } from '../users/users.module';
import { InternalController } from './internal.controller';
import { InternalCleanupJob } from './internal.jobs';
import { InternalRepository } from './internal.repository';
import { InternalService } from './internal.service';
import { INTERNAL_ENTITIES } from './internal.entities';

@Module({
  imports: [TypeOrmModule.forFeature(INTERNAL_ENTITIES), NodesModule, UsersModule, DevicesModule],
  controllers: [InternalController],
  providers: [InternalRepository, InternalService, InternalCleanupJob],
})
export class InternalModule {}
