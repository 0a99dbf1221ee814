import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ReasonRequest } from '../admin/dto/user-actions.dto';
import type { AuthUser } from './guards/auth-user';
import { CurrentUser } from './guards/current-user.decorator';
import { AnyStaffGuard, OwnerGuard } from './guards/role.guards';
import { Answers } from '../common/openapi/answers';
import { UuidPipe } from '../common/validation';
import {
  RecoveryCodesResponse,
  SecondFactorRequest,
  TotpCodeRequest,
  TotpSetupResponse,
  TotpStatusResponse,
} from './dto/totp.dto';
import { TotpService } from './totp.service';

/** Staff sign-in's second factor: the caller's own enrolment, and the owner's reset of another's. */
@ApiTags('auth')
@Controller()
export class TotpController {
  constructor(private readonly totp: TotpService) {}

  @Get('auth/totp')
  @UseGuards(AnyStaffGuard)
  @ApiOkResponse({ type: TotpStatusResponse })
  async status(@CurrentUser() caller: AuthUser): Promise<TotpStatusResponse> {
    const status = await this.totp.status(caller);
    return {
      enabled: status.enabled,
      recovery_codes_left: status.recoveryCodesLeft,
      required: status.required,
    };
  }

  @Answers('CONFLICT')
  @Post('auth/totp/setup')
  @UseGuards(AnyStaffGuard)
  @HttpCode(200)
  @ApiOkResponse({ type: TotpSetupResponse, description: 'enabled by its first code' })
  async setUp(@CurrentUser() caller: AuthUser): Promise<TotpSetupResponse> {
    const label = caller.record?.user.username ?? caller.id;
    const made = await this.totp.setUp(caller, label);
    return { secret: made.secret, otpauth_url: made.uri };
  }

  @Answers('CONFLICT')
  @Post('auth/totp/enable')
  @UseGuards(AnyStaffGuard)
  @HttpCode(200)
  @ApiOkResponse({ type: RecoveryCodesResponse })
  async enable(
    @CurrentUser() caller: AuthUser,
    @Body() body: TotpCodeRequest,
  ): Promise<RecoveryCodesResponse> {
    return { recovery_codes: await this.totp.enable(caller, body.code) };
  }

  @Answers('CONFLICT', 'TOTP_INVALID')
  @Post('auth/totp/disable')
  @UseGuards(AnyStaffGuard)
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'with a current code or a recovery code' })
  async disable(@CurrentUser() caller: AuthUser, @Body() body: SecondFactorRequest): Promise<void> {
    await this.totp.disable(caller, { code: body.code, recoveryCode: body.recovery_code });
  }

  @Answers('NO_USER', 'CONFLICT')
  @Post('admin/users/:id/totp/reset')
  @HttpCode(204)
  @UseGuards(OwnerGuard)
  @ApiNoContentResponse({ description: "the account's second factor removed; audited" })
  async reset(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: ReasonRequest,
  ): Promise<void> {
    await this.totp.resetFor(caller, id, body.reason);
  }
}
