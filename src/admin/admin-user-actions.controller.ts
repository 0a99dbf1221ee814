import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { OwnerGuard, StaffGuard } from '../auth/guards/role.guards';
import { Answers } from '../common/openapi/answers';
import { UuidPipe } from '../common/validation';
import { toUserViewResponse, UserResponse } from '../users/dto/user.response';
import {
  MoveSubscriptionRequest,
  ReasonRequest,
  StaffPasswordRequest,
} from './dto/user-actions.dto';
import { UserActionsService } from './user-actions.service';

/** What staff do to one account; each action is audited with its reason. */
@ApiTags('admin')
@Controller('admin/users/:id')
export class AdminUserActionsController {
  constructor(private readonly actions: UserActionsService) {}

  @Answers('NO_USER')
  @Post('subscription')
  @HttpCode(200)
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: UserResponse })
  async moveSubscription(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: MoveSubscriptionRequest,
  ): Promise<UserResponse> {
    const view = await this.actions.moveSubscription(caller, id, {
      days: body.days,
      planName: body.plan_name ?? null,
      reason: body.reason,
      holdDays: body.starts === 'on_first_use' ? (body.on_hold_max_days ?? 30) : null,
    });
    return toUserViewResponse(view);
  }

  @Answers('NO_USER')
  @Post('traffic/reset')
  @HttpCode(200)
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: UserResponse })
  async resetTraffic(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: ReasonRequest,
  ): Promise<UserResponse> {
    return toUserViewResponse(await this.actions.resetTraffic(caller, id, body.reason));
  }

  /** Staff block ordinary accounts; staff accounts only the owner (403 otherwise). */
  @Answers('NO_USER', 'CONFLICT')
  @Post('block')
  @HttpCode(200)
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: UserResponse })
  async block(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: ReasonRequest,
  ): Promise<UserResponse> {
    return toUserViewResponse(await this.actions.block(caller, id, body.reason));
  }

  /** Staff unblock ordinary accounts; staff accounts only the owner (403 otherwise). */
  @Answers('NO_USER')
  @Post('unblock')
  @HttpCode(200)
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: UserResponse })
  async unblock(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<UserResponse> {
    return toUserViewResponse(await this.actions.unblock(caller, id));
  }

  /** A staff account's new password; every session of that account ends. */
  @Answers('NO_USER', 'CONFLICT')
  @Post('password')
  @HttpCode(204)
  @UseGuards(OwnerGuard)
  @ApiNoContentResponse()
  async setPassword(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: StaffPasswordRequest,
  ): Promise<void> {
    await this.actions.setStaffPassword(caller, id, body.password);
  }
}
