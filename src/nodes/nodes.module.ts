import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module';
import { HostResolver } from '../common/host-resolver';
import { SecretBox, secretBoxFactory } from '../common/secret-box';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { UsersModule } from '../users/users.module';
import { HealthService } from './health.service';
import { NodeShell, SshNodeShell } from './node-shell';
import { AdminNodesController, RoutingController } from './nodes.controller';
import { NodeJobs } from './nodes.jobs';
import { InternalCallers } from './internal-callers';
import { NodeSecretLookup } from './node-secret-lookup';
import { NodesRepository } from './nodes.repository';
import { NodeHosts } from './node-hosts';
import { NodesService } from './nodes.service';
import { ProvisioningService } from './provisioning.service';
import { RoutingService } from './routing.service';
import { SessionTokens } from './session-token';
import { NODES_ENTITIES } from './nodes.entities';

@Module({
  imports: [TypeOrmModule.forFeature(NODES_ENTITIES), AuditModule, UsersModule],
  controllers: [AdminNodesController, RoutingController],
  providers: [
    NodesRepository,
    NodesService,
    NodeHosts,
    HostResolver,
    RoutingService,
    ProvisioningService,
    HealthService,
    NodeJobs,
    NodeSecretLookup,
    InternalCallers,
    { provide: NodeShell, useClass: SshNodeShell },
    { provide: SecretBox, useFactory: secretBoxFactory, inject: [SETTINGS] },
    {
      provide: SessionTokens,
      useFactory: (settings: Settings) => new SessionTokens(settings.proxyTokenSecret),
      inject: [SETTINGS],
    },
  ],
  // The agents' internal routes validate session tokens, read nodes and know the nodes' secrets.
  exports: [
    SessionTokens,
    RoutingService,
    SecretBox,
    NodesRepository,
    HealthService,
    ProvisioningService,
    NodeSecretLookup,
    InternalCallers,
  ],
})
export class NodesModule {}
