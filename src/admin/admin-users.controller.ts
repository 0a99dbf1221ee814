import { Body, Controller, Get, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { OwnerGuard, StaffGuard } from '../auth/guards/role.guards';
import { UuidPipe } from '../common/validation';
import { mapPage } from '../common/pagination';
import { toUserViewResponse, UserResponse } from '../users/dto/user.response';
import { AdminService } from './admin.service';
import {
  AdminUsersPage,
  AdminUsersQuery,
  CreatePartnerRequest,
  CreateStaffRequest,
  DefaultTrafficLimitRequest,
  DefaultTrafficLimitResponse,
  NodeAccessRequest,
  UserTrafficLimitRequest,
} from './dto/admin-users.dto';
import { Answers } from '../common/openapi/answers';

@ApiTags('admin')
@Controller('admin')
export class AdminUsersController {
  constructor(private readonly admin: AdminService) {}

  @Get('users')
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: AdminUsersPage })
  async list(@Query() query: AdminUsersQuery): Promise<AdminUsersPage> {
    const page = await this.admin.listUsers({ q: query.q, role: query.role }, query);
    return mapPage(page, toUserViewResponse);
  }

  @Answers('NO_USER')
  @Get('users/:id')
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: UserResponse })
  async get(@Param('id', UuidPipe) id: string): Promise<UserResponse> {
    return toUserViewResponse(await this.admin.getUser(id));
  }

  @Answers('USERNAME_TAKEN')
  @Post('moderators')
  @UseGuards(OwnerGuard)
  @ApiCreatedResponse({ type: UserResponse })
  async createModerator(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateStaffRequest,
  ): Promise<UserResponse> {
    return toUserViewResponse(
      await this.admin.createStaff(caller.id, { ...body, role: 'moderator' }),
    );
  }

  @Answers('USERNAME_TAKEN', 'CONFLICT')
  @Post('partners')
  @UseGuards(StaffGuard)
  @ApiCreatedResponse({ type: UserResponse })
  async createPartner(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreatePartnerRequest,
  ): Promise<UserResponse> {
    const partner = await this.admin.createStaff(caller.id, {
      username: body.username,
      password: body.password,
      role: 'partner',
      commissionPercent: body.commission_percent,
      partnerCode: body.partner_code,
    });
    return toUserViewResponse(partner);
  }

  @Answers('USERNAME_TAKEN')
  @Post('support')
  @UseGuards(OwnerGuard)
  @ApiCreatedResponse({ type: UserResponse })
  async createSupport(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateStaffRequest,
  ): Promise<UserResponse> {
    return toUserViewResponse(
      await this.admin.createStaff(caller.id, { ...body, role: 'support' }),
    );
  }

  @Answers('NO_USER')
  @Patch('users/:id/node-access')
  @UseGuards(OwnerGuard)
  @ApiOkResponse({ type: UserResponse })
  async setNodeAccess(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: NodeAccessRequest,
  ): Promise<UserResponse> {
    return toUserViewResponse(await this.admin.setNodeAccess(caller, id, body.can_manage_nodes));
  }

  @Answers('NO_USER')
  @Patch('users/:id/traffic-limit')
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: UserResponse })
  async setTrafficLimit(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: UserTrafficLimitRequest,
  ): Promise<UserResponse> {
    return toUserViewResponse(
      await this.admin.setUserTrafficLimit(caller, id, body.traffic_limit_bytes),
    );
  }

  @Patch('settings/traffic-limit')
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: DefaultTrafficLimitResponse })
  async setDefaultTrafficLimit(
    @CurrentUser() caller: AuthUser,
    @Body() body: DefaultTrafficLimitRequest,
  ): Promise<DefaultTrafficLimitResponse> {
    await this.admin.setDefaultTrafficLimit(caller.id, body.default_bytes);
    return { default_bytes: body.default_bytes };
  }
}
