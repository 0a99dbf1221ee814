import { Body, Controller, Get, Param, Put, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user';
import { CurrentUser } from '../common/auth/current-user.decorator';
import { StaffGuard } from '../common/auth/role.guards';
import { Public } from '../common/public.decorator';
import {
  AdminPlanResponse,
  PlanNamePipe,
  PlanResponse,
  toPlanResponse,
  toPublicPlanResponse,
  UpsertPlanRequest,
} from './dto/plan.dto';
import { PlansService } from './plans.service';

@ApiTags('billing')
@Controller()
export class PlansController {
  constructor(private readonly plans: PlansService) {}

  @Public()
  @Get('plans')
  @ApiOkResponse({ type: [PlanResponse], description: 'active plans' })
  async list(): Promise<PlanResponse[]> {
    return (await this.plans.activePlans()).map(toPublicPlanResponse);
  }

  @Get('admin/plans')
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: [AdminPlanResponse], description: 'every plan, active or not' })
  async listAll(): Promise<AdminPlanResponse[]> {
    return (await this.plans.allPlans()).map(toPlanResponse);
  }

  @Put('admin/plans/:name')
  @UseGuards(StaffGuard)
  @ApiOkResponse({
    type: AdminPlanResponse,
    description: 'created or replaced, prices included; audited (plan.created / plan.changed)',
  })
  async upsert(
    @CurrentUser() caller: AuthUser,
    @Param('name', PlanNamePipe) name: string,
    @Body() body: UpsertPlanRequest,
  ): Promise<AdminPlanResponse> {
    const plan = await this.plans.upsertPlan(caller.id, name, {
      durationDays: body.duration_days,
      trafficLimitBytes: body.traffic_limit_bytes,
      prices: body.prices,
      active: body.active,
      deviceLimit: body.device_limit,
      trafficReset: body.traffic_reset,
      resetDay: body.reset_day,
      starts: body.starts,
      onHoldMaxDays: body.on_hold_max_days,
    });
    return toPlanResponse(plan);
  }
}
