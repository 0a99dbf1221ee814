import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { InternalSecretGuard } from '../auth/guards/internal-secret.guard';
import { StaffGuard } from '../auth/guards/role.guards';
import { Answers } from '../common/openapi/answers';
import { Public } from '../common/public.decorator';
import { UuidPipe } from '../common/validation';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { ReasonRequest } from '../admin/dto/user-actions.dto';
import { CredentialsService } from './credentials.service';
import { DevicesService } from './devices.service';
import {
  CreatedDeviceResponse,
  CredentialsQuery,
  CredentialsResponse,
  DeviceListResponse,
  DeviceNameRequest,
  DeviceResponse,
  StaffDeviceListResponse,
  SubscriptionUrlResponse,
  toDeviceResponse,
} from './dto/devices.dto';

/** The caller's devices and subscription link. */
@ApiTags('devices')
@Controller('users/me')
export class DevicesController {
  constructor(
    private readonly devices: DevicesService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  @Get('devices')
  @ApiOkResponse({ type: DeviceListResponse })
  async list(@CurrentUser() caller: AuthUser): Promise<DeviceListResponse> {
    const list = await this.devices.list(caller.id);
    return {
      subscription_url: list.subscriptionUrl,
      device_limit: list.deviceLimit,
      devices: list.devices.map((d) => toDeviceResponse(d, this.settings.deviceSwitchesSuspect)),
    };
  }

  @Answers('DEVICE_LIMIT')
  @Post('devices')
  @ApiCreatedResponse({ type: CreatedDeviceResponse })
  async create(
    @CurrentUser() caller: AuthUser,
    @Body() body: DeviceNameRequest,
  ): Promise<CreatedDeviceResponse> {
    const made = await this.devices.createLinked(caller.id, body.name);
    return {
      device: toDeviceResponse(made.device, this.settings.deviceSwitchesSuspect),
      subscription_url: made.subscriptionUrl,
    };
  }

  @Answers('NOT_FOUND')
  @Patch('devices/:id')
  @ApiOkResponse({ type: DeviceResponse })
  async rename(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: DeviceNameRequest,
  ): Promise<DeviceResponse> {
    const device = await this.devices.rename(caller.id, id, body.name);
    return toDeviceResponse(device, this.settings.deviceSwitchesSuspect);
  }

  @Answers('NOT_FOUND')
  @Delete('devices/:id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'its id stops working on every node within seconds' })
  async remove(@CurrentUser() caller: AuthUser, @Param('id', UuidPipe) id: string): Promise<void> {
    await this.devices.remove(caller.id, id);
  }

  @Post('subscription-link/rotate')
  @HttpCode(200)
  @ApiOkResponse({ type: SubscriptionUrlResponse, description: 'the old link answers 404' })
  async rotate(@CurrentUser() caller: AuthUser): Promise<SubscriptionUrlResponse> {
    return { subscription_url: await this.devices.rotateLink(caller.id) };
  }
}

/** A user's devices for staff. */
@ApiTags('admin')
@Controller('admin/users/:id/devices')
export class AdminDevicesController {
  constructor(
    private readonly devices: DevicesService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  @Answers('NO_USER')
  @Get()
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: StaffDeviceListResponse })
  async list(@Param('id', UuidPipe) id: string): Promise<StaffDeviceListResponse> {
    const list = await this.devices.staffList(id);
    return {
      device_limit: list.deviceLimit,
      devices: list.devices.map((d) => toDeviceResponse(d, this.settings.deviceSwitchesSuspect)),
    };
  }

  @Answers('NO_USER', 'NOT_FOUND')
  @Delete(':device_id')
  @HttpCode(204)
  @UseGuards(StaffGuard)
  @ApiNoContentResponse({ description: 'audited; its id stops working on every node' })
  async remove(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Param('device_id', UuidPipe) deviceId: string,
    @Body() body: ReasonRequest,
  ): Promise<void> {
    await this.devices.staffRemove(caller, id, deviceId, body.reason);
  }
}

/** The node agents' device sets: a node's own secret, about its own node. */
@ApiTags('internal')
@Public()
@UseGuards(InternalSecretGuard)
@Controller('internal')
export class CredentialsController {
  constructor(private readonly credentials: CredentialsService) {}

  @Get('credentials')
  @ApiOkResponse({ type: CredentialsResponse })
  credentialsOf(@Query() query: CredentialsQuery): Promise<CredentialsResponse> {
    return this.credentials.forNode(query.node_id.toLowerCase(), query.since);
  }
}
