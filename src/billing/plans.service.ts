import { Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AdvisoryLocks } from '../database/advisory-lock';
import { AuditService } from '../audit/audit.service';
import { PLAN_AUDIT_ACTIONS } from './billing.constants';
import { type AdminPlanResponse, toPlanResponse } from './dto/plan.dto';
import type { PlanStart, TrafficReset } from '../users/traffic-reset';
import { UserTrafficRepository } from '../users/user-traffic.repository';
import { type PlanDisplayTexts, sameDisplay } from './plan-display';
import { type PlanRecord, PlansRepository, type PlanToSave } from './plans.repository';

export interface PlanChange {
  durationDays: number;
  trafficLimitBytes: number;
  prices: Record<string, string>;
  active: boolean;
  /** Undefined keeps the plan's own (DEVICE_LIMIT_DEFAULT for a new plan). */
  deviceLimit?: number;
  /** Each undefined keeps the plan's own (the default for a new plan). */
  trafficReset?: TrafficReset;
  resetDay?: number;
  starts?: PlanStart;
  onHoldMaxDays?: number;
  display?: PlanDisplayTexts;
}

/** The plans on sale, and staff changes to them, each audited. */
@Injectable()
export class PlansService {
  constructor(
    private readonly plans: PlansRepository,
    private readonly audit: AuditService,
    private readonly locks: AdvisoryLocks,
    private readonly traffic: UserTrafficRepository,
  ) {}

  activePlans(): Promise<PlanRecord[]> {
    return this.plans.activePlans();
  }

  allPlans(): Promise<PlanRecord[]> {
    return this.plans.allPlans();
  }

  /**
   * Creates or replaces the plan and its prices. The audit entry (who, the plan before and after)
   * is written in the same transaction as the change; a PUT that changes nothing writes nothing.
   */
  @Transactional()
  async upsertPlan(actorId: string, name: string, change: PlanChange): Promise<PlanRecord> {
    const next: PlanToSave = {
      name,
      durationDays: change.durationDays,
      trafficLimitBytes: String(change.trafficLimitBytes),
      active: change.active,
      prices: change.prices,
      deviceLimit: change.deviceLimit,
      trafficReset: change.trafficReset,
      resetDay: change.resetDay,
      starts: change.starts,
      onHoldMaxDays: change.onHoldMaxDays,
      display: change.display,
    };
    // Changes of one plan run one after another, also while its row does not exist yet, so the
    // "before" a change reads is the one it replaces.
    await this.locks.lock(`plans:${name}`);
    const before = await this.plans.findPlan(name);
    if (before && samePlan(before, next)) return before;
    const saved = await this.plans.upsertPlan(next);
    if (
      before &&
      (before.trafficReset !== saved.trafficReset || before.resetDay !== saved.resetDay)
    ) {
      // The plan's subscribers' next reset follows the new rule, from now.
      await this.traffic.rescheduleResets(name);
    }
    await this.audit.record({
      actorId,
      action: before ? PLAN_AUDIT_ACTIONS.changed : PLAN_AUDIT_ACTIONS.created,
      targetType: 'plan',
      targetId: name,
      before: before ? planAuditValues(before) : null,
      after: planAuditValues(saved),
    });
    return saved;
  }
}

/** What an audit entry keeps of a plan: the contract's fields, the name being its target. */
export function planAuditValues(plan: PlanRecord): Omit<AdminPlanResponse, 'name'> {
  const { name: _name, ...values } = toPlanResponse(plan);
  return values;
}

function samePlan(a: PlanRecord, b: PlanToSave): boolean {
  const currencies = Object.keys(a.prices);
  return (
    (b.deviceLimit === undefined || a.deviceLimit === b.deviceLimit) &&
    (b.trafficReset === undefined || a.trafficReset === b.trafficReset) &&
    (b.resetDay === undefined || a.resetDay === b.resetDay) &&
    (b.starts === undefined || a.starts === b.starts) &&
    (b.onHoldMaxDays === undefined || a.onHoldMaxDays === b.onHoldMaxDays) &&
    (b.display === undefined || sameDisplay(a.display, b.display)) &&
    a.durationDays === b.durationDays &&
    a.trafficLimitBytes === b.trafficLimitBytes &&
    a.active === b.active &&
    currencies.length === Object.keys(b.prices).length &&
    currencies.every((c) => a.prices[c] === b.prices[c])
  );
}
