import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { NodesModule } from '../nodes/nodes.module';
import { UsersModule } from '../users/users.module';
import { CredentialsNudger } from './credentials-nudger';
import { CredentialsRepository } from './credentials.repository';
import { CredentialsService } from './credentials.service';
import {
  AdminDevicesController,
  CredentialsController,
  DevicesController,
} from './devices.controller';
import { DevicesCleanupJob } from './devices.jobs';
import { DevicesRepository } from './devices.repository';
import { DevicesService } from './devices.service';
import { LinkTokens } from './link-tokens';
import { PresenceRepository } from './presence.repository';
import { PresenceService } from './presence.service';
import { SubscriptionController } from './subscription.controller';
import { SubscriptionService } from './subscription.service';

/**
 * Devices and the subscription link: what client apps import, the devices they enroll, and the
 * device ids each node carries (`GET /internal/credentials`, nudges).
 */
@Module({
  imports: [AuditModule, UsersModule, NodesModule],
  controllers: [
    DevicesController,
    AdminDevicesController,
    CredentialsController,
    SubscriptionController,
  ],
  providers: [
    DevicesRepository,
    CredentialsRepository,
    DevicesService,
    SubscriptionService,
    CredentialsService,
    CredentialsNudger,
    PresenceRepository,
    PresenceService,
    DevicesCleanupJob,
    {
      provide: LinkTokens,
      useFactory: (settings: Settings) => new LinkTokens(settings.seedPepper),
      inject: [SETTINGS],
    },
  ],
  exports: [
    DevicesService,
    DevicesRepository,
    CredentialsRepository,
    CredentialsNudger,
    PresenceService,
    PresenceRepository,
  ],
})
export class DevicesModule {}
