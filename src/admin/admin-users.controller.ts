import { Body, Controller, Get, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiCookieAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user';
import { CurrentUser } from '../common/auth/current-user.decorator';
import { OwnerGuard, StaffGuard } from '../common/auth/role.guards';
import { UuidPipe } from '../common/validation';
import { UserResponse } from '../users/dto/user.response';
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

@ApiTags('admin')
@ApiCookieAuth()
@Controller('admin')
export class AdminUsersController {
  constructor(private readonly admin: AdminService) {}

  @Get('users')
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: AdminUsersPage })
  list(@Query() query: AdminUsersQuery): Promise<AdminUsersPage> {
    return this.admin.listUsers({ q: query.q, role: query.role }, query.limit, query.cursor);
  }

  @Get('users/:id')
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: UserResponse })
  get(@Param('id', UuidPipe) id: string): Promise<UserResponse> {
    return this.admin.getUser(id);
  }

  @Post('moderators')
  @UseGuards(OwnerGuard)
  @ApiCreatedResponse({ type: UserResponse })
  createModerator(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateStaffRequest,
  ): Promise<UserResponse> {
    return this.admin.createStaff(caller.id, { ...body, role: 'moderator' });
  }

  @Post('partners')
  @UseGuards(StaffGuard)
  @ApiCreatedResponse({ type: UserResponse })
  createPartner(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreatePartnerRequest,
  ): Promise<UserResponse> {
    return this.admin.createStaff(caller.id, {
      username: body.username,
      password: body.password,
      role: 'partner',
      commissionPercent: body.commission_percent,
      partnerCode: body.partner_code,
    });
  }

  @Post('support')
  @UseGuards(OwnerGuard)
  @ApiCreatedResponse({ type: UserResponse })
  createSupport(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateStaffRequest,
  ): Promise<UserResponse> {
    return this.admin.createStaff(caller.id, { ...body, role: 'support' });
  }

  @Patch('users/:id/node-access')
  @UseGuards(OwnerGuard)
  @ApiOkResponse({ type: UserResponse })
  setNodeAccess(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: NodeAccessRequest,
  ): Promise<UserResponse> {
    return this.admin.setNodeAccess(caller.id, id, body.can_manage_nodes);
  }

  @Patch('users/:id/traffic-limit')
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: UserResponse })
  setTrafficLimit(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: UserTrafficLimitRequest,
  ): Promise<UserResponse> {
    return this.admin.setUserTrafficLimit(caller.id, id, body.traffic_limit_bytes);
  }

  @Patch('settings/traffic-limit')
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: DefaultTrafficLimitResponse })
  setDefaultTrafficLimit(
    @CurrentUser() caller: AuthUser,
    @Body() body: DefaultTrafficLimitRequest,
  ): Promise<DefaultTrafficLimitResponse> {
    return this.admin.setDefaultTrafficLimit(caller.id, body.default_bytes);
  }
}
