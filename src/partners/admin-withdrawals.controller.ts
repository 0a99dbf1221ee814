import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { StaffGuard } from '../auth/guards/role.guards';
import { UuidPipe } from '../common/validation';
import {
  AdminWithdrawalQuery,
  PaidWithdrawalRequest,
  RejectWithdrawalRequest,
  WithdrawalPageResponse,
  WithdrawalResponse,
} from './dto/withdrawal.dto';
import { WithdrawalsService } from './withdrawals.service';
import { Answers } from '../common/openapi/answers';

const WRONG_MOVE = '409 WITHDRAWAL_STATE when its state does not allow this move';

@ApiTags('partners')
@UseGuards(StaffGuard)
@Controller('admin/withdrawals')
export class AdminWithdrawalsController {
  constructor(private readonly withdrawals: WithdrawalsService) {}

  @Get()
  @ApiOkResponse({ type: WithdrawalPageResponse, description: 'newest first' })
  async list(@Query() query: AdminWithdrawalQuery): Promise<WithdrawalPageResponse> {
    const page = await this.withdrawals.allPage(query.status, {
      limit: query.limit,
      cursor: query.cursor,
    });
    return WithdrawalPageResponse.from(page);
  }

  @Answers('NOT_FOUND', 'WITHDRAWAL_STATE')
  @Post(':id/approve')
  @HttpCode(200)
  @ApiOkResponse({ type: WithdrawalResponse, description: `pending → approved; ${WRONG_MOVE}` })
  async approve(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<WithdrawalResponse> {
    return WithdrawalResponse.from(
      await this.withdrawals.decide(caller.id, id, { kind: 'approve' }),
    );
  }

  @Answers('NOT_FOUND', 'WITHDRAWAL_STATE')
  @Post(':id/reject')
  @HttpCode(200)
  @ApiOkResponse({
    type: WithdrawalResponse,
    description: `pending or approved → rejected, the amount available again; ${WRONG_MOVE}`,
  })
  async reject(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: RejectWithdrawalRequest,
  ): Promise<WithdrawalResponse> {
    return WithdrawalResponse.from(
      await this.withdrawals.decide(caller.id, id, { kind: 'reject', reason: body.reason }),
    );
  }

  @Answers('NOT_FOUND', 'WITHDRAWAL_STATE')
  @Post(':id/paid')
  @HttpCode(200)
  @ApiOkResponse({ type: WithdrawalResponse, description: `approved → paid; ${WRONG_MOVE}` })
  async paid(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: PaidWithdrawalRequest,
  ): Promise<WithdrawalResponse> {
    return WithdrawalResponse.from(
      await this.withdrawals.decide(caller.id, id, { kind: 'paid', txRef: body.tx_ref ?? null }),
    );
  }
}
