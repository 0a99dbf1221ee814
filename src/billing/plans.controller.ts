import { Body, Controller, Get, Param, Put, UseGuards } from '@nestjs/common';
import { ApiCookieAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user';
import { CurrentUser } from '../common/auth/current-user.decorator';
import { StaffGuard } from '../common/auth/role.guards';
import { Public } from '../common/public.decorator';
import { AdminPlanResponse, PlanNamePipe, PlanResponse, UpsertPlanRequest } from './dto/plan.dto';
import { PlansService } from './plans.service';

@ApiTags('billing')
@Controller()
export class PlansController {
  constructor(private readonly plans: PlansService) {}

  @Public()
  @Get('plans')
  @ApiOkResponse({ type: [PlanResponse], description: 'active plans' })
  list(): Promise<PlanResponse[]> {
    return this.plans.activePlans();
  }

  @Put('admin/plans/:name')
  @UseGuards(StaffGuard)
  @ApiCookieAuth()
  @ApiOkResponse({
    type: AdminPlanResponse,
    description: 'created or replaced, prices included; audited (plan.created / plan.changed)',
  })
  upsert(
    @CurrentUser() caller: AuthUser,
    @Param('name', PlanNamePipe) name: string,
    @Body() body: UpsertPlanRequest,
  ): Promise<AdminPlanResponse> {
    return this.plans.upsertPlan(caller.id, name, {
      durationDays: body.duration_days,
      trafficLimitBytes: body.traffic_limit_bytes,
      prices: body.prices,
      active: body.active,
    });
  }
}
