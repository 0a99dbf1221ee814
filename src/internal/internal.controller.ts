import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AnyNode, InternalSecretGuard } from '../auth/guards/internal-secret.guard';
import { Public } from '../common/public.decorator';
import {
  LimitsQuery,
  TrafficReportRequest,
  TrafficReportResponse,
  UserLimitResponse,
  ValidateTokenRequest,
  ValidateTokenResponse,
} from './dto/internal.dto';
import { InternalService } from './internal.service';
import { type TrafficReport, TrafficReportPipe } from './traffic-report.pipe';
import { Answers } from '../common/openapi/answers';

/**
 * The node agents' routes: `X-Internal-Secret` only (INTERNAL_SECRET, or a node's own secret for
 * requests about that node); a session is no substitute.
 */
@ApiTags('internal')
@Public()
@UseGuards(InternalSecretGuard)
@Controller('internal')
export class InternalController {
  constructor(private readonly internal: InternalService) {}

  @Post('validate')
  @HttpCode(200)
  @ApiOkResponse({ type: ValidateTokenResponse })
  async validate(@Body() body: ValidateTokenRequest): Promise<ValidateTokenResponse> {
    const result = await this.internal.validate(body.token, body.node_id);
    if (!result.valid) return { valid: false, reason: result.reason };
    const { standing } = result;
    return {
      valid: true,
      user_id: standing.id,
      traffic_limit_bytes: Number(standing.limitBytes),
      traffic_used_bytes: Number(standing.usedBytes),
      expires_at: standing.subscriptionExpiresAt!.toISOString(),
    };
  }

  @Answers('NOT_FOUND')
  @Post('traffic')
  @HttpCode(200)
  @ApiBody({ type: TrafficReportRequest })
  @ApiOkResponse({ type: TrafficReportResponse })
  async traffic(@Body(TrafficReportPipe) report: TrafficReport): Promise<TrafficReportResponse> {
    const outcome = await this.internal.report(report);
    return {
      applied: outcome.applied,
      over_limit: outcome.overLimit,
      unknown_users: outcome.unknownUsers,
      close: outcome.close,
    };
  }

  @Get('limits')
  @AnyNode()
  @ApiOkResponse({ type: [UserLimitResponse] })
  async limits(@Query() query: LimitsQuery): Promise<UserLimitResponse[]> {
    const standings = await this.internal.limits(query.user_ids);
    return standings.map((standing) => ({
      user_id: standing.id,
      traffic_limit_bytes: Number(standing.limitBytes),
      traffic_used_bytes: Number(standing.usedBytes),
      active: standing.active,
    }));
  }
}
