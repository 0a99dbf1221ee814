import { mapPage } from '../common/pagination';
import {
  Body,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { NodeManageGuard } from '../auth/guards/role.guards';
import { UuidPipe } from '../common/validation';
import {
  CreateNodeRequest,
  DEFAULT_TRAFFIC_DAYS,
  NodePageQuery,
  NodeTrafficQuery,
  UpdateNodeRequest,
} from './dto/node.dto';
import {
  NodePageResponse,
  NodeResponse,
  NodeTrafficResponse,
  NodeWorkAcceptedResponse,
  RoutingEntryResponse,
} from './dto/node.response';
import { NodesService } from './nodes.service';
import { ProvisioningService } from './provisioning.service';
import { RoutingService } from './routing.service';
import { Answers } from '../common/openapi/answers';

/** The node registry and the SSH work on nodes: owner, or staff with node access. */
@ApiTags('nodes')
@UseGuards(NodeManageGuard)
@Controller('admin/nodes')
export class AdminNodesController {
  constructor(
    private readonly nodes: NodesService,
    private readonly provisioning: ProvisioningService,
  ) {}

  @Get()
  @ApiOkResponse({ type: NodePageResponse, description: 'oldest first' })
  async list(@Query() query: NodePageQuery): Promise<NodePageResponse> {
    return mapPage(await this.nodes.list(query), (node) => NodeResponse.from(node));
  }

  @Post()
  @ApiCreatedResponse({ type: NodeResponse })
  async create(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateNodeRequest,
  ): Promise<NodeResponse> {
    return NodeResponse.from(await this.nodes.create(caller.id, body));
  }

  @Answers('NOT_FOUND')
  @Get(':id')
  @ApiOkResponse({ type: NodeResponse })
  async get(@Param('id', UuidPipe) id: string): Promise<NodeResponse> {
    return NodeResponse.from(await this.nodes.get(id));
  }

  @Answers('NOT_FOUND')
  @Get(':id/traffic')
  @ApiOkResponse({
    type: NodeTrafficResponse,
    description: "the node's bytes per UTC day of the last `days`, today included",
  })
  async traffic(
    @Param('id', UuidPipe) id: string,
    @Query() query: NodeTrafficQuery,
  ): Promise<NodeTrafficResponse> {
    return NodeTrafficResponse.from(
      await this.nodes.traffic(id, query.days ?? DEFAULT_TRAFFIC_DAYS),
    );
  }

  @Answers('NOT_FOUND')
  @Patch(':id')
  @ApiOkResponse({ type: NodeResponse })
  async update(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateNodeRequest,
  ): Promise<NodeResponse> {
    return NodeResponse.from(await this.nodes.update(caller.id, id, body));
  }

  @Answers('NOT_FOUND')
  @Delete(':id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'out of routing and health checks at once' })
  async remove(@CurrentUser() caller: AuthUser, @Param('id', UuidPipe) id: string): Promise<void> {
    await this.nodes.delete(caller.id, id);
  }

  @Answers('NOT_FOUND', 'NODE_BUSY')
  @Post(':id/provision')
  @HttpCode(202)
  @ApiAcceptedResponse({
    type: NodeWorkAcceptedResponse,
    description: 'SSH work runs in the background; 409 NODE_BUSY while one runs',
  })
  async provision(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<NodeWorkAcceptedResponse> {
    await this.provisioning.provision(caller.id, id);
    return { id, provision_state: 'provisioning' };
  }

  @Answers('NOT_FOUND')
  @Post(':id/restart')
  @HttpCode(202)
  @ApiAcceptedResponse({ description: 'systemctl restart over SSH in the background' })
  async restart(@CurrentUser() caller: AuthUser, @Param('id', UuidPipe) id: string): Promise<void> {
    await this.provisioning.restart(caller.id, id);
  }
}

/** Routing data for clients: any signed-in user with an active subscription. */
@ApiTags('nodes')
@Controller('nodes')
export class RoutingController {
  constructor(private readonly routing: RoutingService) {}

  /** Answers JSON text built by `RoutingEntryResponse.serialize`: every client, every connect. */
  @Answers('SUBSCRIPTION_REQUIRED', 'ACCOUNT_BLOCKED')
  @Get('routing')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOkResponse({ type: [RoutingEntryResponse], description: '402 SUBSCRIPTION_REQUIRED' })
  async get(@CurrentUser() caller: AuthUser): Promise<string> {
    const { nodes, sessionTokens } = await this.routing.routing(caller);
    return RoutingEntryResponse.serialize(nodes, sessionTokens);
  }
}
