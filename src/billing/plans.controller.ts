import { Body, Controller, Get, Param, Put, UseGuards } from '@nestjs/common';
import { ApiCookieAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { StaffGuard } from '../common/auth/role.guards';
import { Public } from '../common/public.decorator';
import { BillingService } from './billing.service';
import { AdminPlanResponse, PlanNamePipe, PlanResponse, UpsertPlanRequest } from './dto/plan.dto';

@ApiTags('billing')
@Controller()
export class PlansController {
  constructor(private readonly billing: BillingService) {}

  @Public()
  @Get('plans')
  @ApiOkResponse({ type: [PlanResponse], description: 'active plans' })
  list(): Promise<PlanResponse[]> {
    return this.billing.activePlans();
  }

  @Put('admin/plans/:name')
  @UseGuards(StaffGuard)
  @ApiCookieAuth()
  @ApiOkResponse({ type: AdminPlanResponse, description: 'created or replaced, prices included' })
  upsert(
    @Param('name', PlanNamePipe) name: string,
    @Body() body: UpsertPlanRequest,
  ): Promise<AdminPlanResponse> {
    return this.billing.upsertPlan(name, {
      durationDays: body.duration_days,
      trafficLimitBytes: body.traffic_limit_bytes,
      prices: body.prices,
      active: body.active,
    });
  }
}
