import { Body, Controller, Get, Param, Put, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { StaffGuard } from '../auth/guards/role.guards';
import { Public } from '../common/public.decorator';
import {
  AdminPlanResponse,
  type PlanDisplay,
  PlanNamePipe,
  PlanResponse,
  toPlanResponse,
  toPublicPlanResponse,
  UpsertPlanRequest,
} from './dto/plan.dto';
import { DISPLAY_LANGUAGES, type PlanDisplayTexts } from './plan-display';
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
      display: body.display ? displayTexts(body.display) : undefined,
    });
    return toPlanResponse(plan);
  }
}

/** The request's texts as stored: only the languages given, each without absent members. */
function displayTexts(display: PlanDisplay): PlanDisplayTexts {
  const texts: PlanDisplayTexts = {};
  for (const language of DISPLAY_LANGUAGES) {
    const text = display[language];
    if (!text) continue;
    texts[language] =
      text.description === undefined
        ? { name: text.name }
        : { name: text.name, description: text.description };
  }
  return texts;
}
