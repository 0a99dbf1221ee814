import { Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service';
import { PLAN_AUDIT_ACTIONS } from './billing.constants';
import type { AdminPlanResponse, PlanResponse } from './dto/plan.dto';
import { type PlanRecord, PlansRepository } from './plans.repository';

export interface PlanChange {
  durationDays: number;
  trafficLimitBytes: number;
  prices: Record<string, string>;
  active: boolean;
}

/** The plans on sale, and staff changes to them, each audited. */
@Injectable()
export class PlansService {
  constructor(
    private readonly plans: PlansRepository,
    private readonly audit: AuditService,
  ) {}

  async activePlans(): Promise<PlanResponse[]> {
    return (await this.plans.activePlans()).map((plan) => {
      const { active: _active, ...view } = toPlanResponse(plan);
      return view;
    });
  }

  /**
   * Creates or replaces the plan and its prices. The audit entry (who, the plan before and after)
   * is written in the same transaction as the change; a PUT that changes nothing writes nothing.
   */
  upsertPlan(actorId: string, name: string, change: PlanChange): Promise<AdminPlanResponse> {
    const next: PlanRecord = {
      name,
      durationDays: change.durationDays,
      trafficLimitBytes: String(change.trafficLimitBytes),
      active: change.active,
      prices: change.prices,
    };
    return this.plans.transaction(async (tx) => {
      await this.plans.lockPlanName(tx, name);
      const before = await this.plans.findPlan(tx, name);
      if (before && samePlan(before, next)) return toPlanResponse(before);
      const saved = await this.plans.upsertPlan(tx, next);
      await this.audit.record(tx, {
        actorId,
        action: before ? PLAN_AUDIT_ACTIONS.changed : PLAN_AUDIT_ACTIONS.created,
        targetType: 'plan',
        targetId: name,
        before: before ? planAuditValues(before) : null,
        after: planAuditValues(saved),
      });
      return toPlanResponse(saved);
    });
  }
}

export function toPlanResponse(plan: PlanRecord): AdminPlanResponse {
  return {
    name: plan.name,
    duration_days: plan.durationDays,
    traffic_limit_bytes: Number(plan.trafficLimitBytes),
    prices: plan.prices,
    active: plan.active,
  };
}

/** What an audit entry keeps of a plan: the contract's fields, the name being its target. */
export function planAuditValues(plan: PlanRecord): Omit<AdminPlanResponse, 'name'> {
  const { name: _name, ...values } = toPlanResponse(plan);
  return values;
}

function samePlan(a: PlanRecord, b: PlanRecord): boolean {
  const currencies = Object.keys(a.prices);
  return (
    a.durationDays === b.durationDays &&
    a.trafficLimitBytes === b.trafficLimitBytes &&
    a.active === b.active &&
    currencies.length === Object.keys(b.prices).length &&
    currencies.every((c) => a.prices[c] === b.prices[c])
  );
}
