import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { PartnerGuard } from '../auth/guards/role.guards';
import { PageQuery } from '../common/pagination';
import { toUserViewResponse, UserResponse } from '../users/dto/user.response';
import { UsersService } from '../users/users.service';
import { AttachPartnerRequest, EarningsQuery, EarningsResponse } from './dto/partners.dto';
import {
  CreateWithdrawalRequest,
  WithdrawalPageResponse,
  WithdrawalResponse,
} from './dto/withdrawal.dto';
import { PartnersService } from './partners.service';
import { WithdrawalsService } from './withdrawals.service';
import { Answers } from '../common/openapi/answers';

/** `POST /users/me/partner` lives with partners: it attaches a buyer to one. */
@ApiTags('users')
@Controller('users')
export class PartnerAttachController {
  constructor(
    private readonly partners: PartnersService,
    private readonly users: UsersService,
  ) {}

  @Answers('NOT_FOUND', 'CONFLICT', 'ALREADY_ATTACHED')
  @Post('me/partner')
  @HttpCode(200)
  @ApiOkResponse({
    type: UserResponse,
    description:
      '404 NOT_FOUND for an unknown code; 409 ALREADY_ATTACHED when attached to another partner; 409 CONFLICT for your own code',
  })
  async attach(
    @CurrentUser() caller: AuthUser,
    @Body() body: AttachPartnerRequest,
  ): Promise<UserResponse> {
    await this.partners.attachToPartner(caller.id, body.partner_code);
    return toUserViewResponse(await this.users.view(caller.id));
  }
}

@ApiTags('partners')
@UseGuards(PartnerGuard)
@Controller('partners/me')
export class PartnersController {
  constructor(
    private readonly partners: PartnersService,
    private readonly withdrawals: WithdrawalsService,
  ) {}

  @Get('earnings')
  @ApiOkResponse({ type: EarningsResponse })
  async earnings(
    @CurrentUser() caller: AuthUser,
    @Query() query: EarningsQuery,
  ): Promise<EarningsResponse> {
    return EarningsResponse.from(await this.partners.earnings(caller.id, query));
  }

  @Get('withdrawals')
  @ApiOkResponse({ type: WithdrawalPageResponse, description: 'own withdrawals, newest first' })
  async list(
    @CurrentUser() caller: AuthUser,
    @Query() query: PageQuery,
  ): Promise<WithdrawalPageResponse> {
    return WithdrawalPageResponse.from(await this.withdrawals.ownPage(caller.id, query));
  }

  @Answers('INSUFFICIENT_BALANCE')
  @Post('withdrawals')
  @ApiCreatedResponse({
    type: WithdrawalResponse,
    description: '409 INSUFFICIENT_BALANCE when the amount exceeds what is available',
  })
  async request(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateWithdrawalRequest,
  ): Promise<WithdrawalResponse> {
    const withdrawal = await this.withdrawals.request(caller.id, {
      amount: BigInt(body.amount),
      currency: body.currency,
      destination: body.destination,
    });
    return WithdrawalResponse.from(withdrawal);
  }
}
