import { Inject, Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { sqlRows } from '../database/sql';
import type { PlanStart, TrafficReset } from '../users/traffic-reset';
import type { PlanDisplayTexts } from './plan-display';

export interface PlanRecord {
  name: string;
  durationDays: number;
  trafficLimitBytes: string;
  active: boolean;
  /** currency → minor units, as strings of digits. */
  prices: Record<string, string>;
  /** Devices of a subscriber of the plan: its own, else DEVICE_LIMIT_DEFAULT. */
  deviceLimit: number;
  /** When used traffic starts again from zero (`src/users/traffic-reset.ts`). */
  trafficReset: TrafficReset;
  /** The day of the month of a `month` reset, 1-28. */
  resetDay: number;
  starts: PlanStart;
  /** The longest an `on_first_use` subscription waits for its first connection. */
  onHoldMaxDays: number;
  /** Name and short description per language; a language without one shows `name`. */
  display: PlanDisplayTexts;
}

/** The fields of a plan that, left undefined when saving, keep the plan's own (defaults when new). */
type KeptFields =
  'deviceLimit' | 'trafficReset' | 'resetDay' | 'starts' | 'onHoldMaxDays' | 'display';

/** A plan to save: each of `KeptFields` undefined keeps the plan's own (the default for a new plan). */
export type PlanToSave = Omit<PlanRecord, KeptFields> & Partial<Pick<PlanRecord, KeptFields>>;

/** A plan as bought in one currency; `priceMinor` is null when it has no price there. */
export interface PlanForPurchase {
  name: string;
  durationDays: number;
  active: boolean;
  priceMinor: string | null;
}

/** The plan columns, `p`; `deviceLimitDefault` a validated whole number. */
const planColumns = (deviceLimitDefault: number): string =>
  `p.name, p.duration_days AS "durationDays", p.traffic_limit_bytes AS "trafficLimitBytes",
  p.active, COALESCE((SELECT jsonb_object_agg(pp.currency, pp.amount_minor::text)
    FROM plan_prices pp WHERE pp.plan_name = p.name), '{}'::jsonb) AS prices,
  COALESCE(p.device_limit, ${Math.trunc(deviceLimitDefault)}) AS "deviceLimit",
  p.traffic_reset AS "trafficReset", p.reset_day AS "resetDay", p.starts,
  p.on_hold_max_days AS "onHoldMaxDays", p.display`;

/** The owner of `plans` and `plan_prices`. */
@Injectable()
export class PlansRepository {
  private readonly columns: string;

  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.columns = planColumns(settings.deviceLimitDefault);
  }

  /** The plans on sale, shortest first. */
  activePlans(): Promise<PlanRecord[]> {
    return this.plans('WHERE p.active');
  }

  /** Every plan, on sale or not, shortest first: a few dozen at most, so not paged. */
  allPlans(): Promise<PlanRecord[]> {
    return this.plans('');
  }

  private plans(where: string): Promise<PlanRecord[]> {
    return sqlRows<PlanRecord>(
      this.txHost.tx,
      `SELECT ${this.columns} FROM plans p ${where} ORDER BY p.duration_days, p.name`,
    );
  }

  async findPlan(name: string): Promise<PlanRecord | null> {
    const [plan] = await sqlRows<PlanRecord>(
      this.txHost.tx,
      `SELECT ${this.columns} FROM plans p WHERE p.name = $1`,
      [name],
    );
    return plan ?? null;
  }

  /** Creates or replaces the plan and all of its prices, inside the caller's transaction. */
  async upsertPlan(plan: PlanToSave): Promise<PlanRecord> {
    await this.txHost.tx.query(
      `INSERT INTO plans (name, duration_days, traffic_limit_bytes, active, device_limit,
                          traffic_reset, reset_day, starts, on_hold_max_days, display)
       VALUES ($1, $2, $3, $4, $5, COALESCE($6::text, 'none'), COALESCE($7::int, 1),
               COALESCE($8::text, 'on_purchase'), COALESCE($9::int, 30),
               COALESCE($10::jsonb, '{}'))
       ON CONFLICT (name) DO UPDATE SET duration_days = EXCLUDED.duration_days,
         traffic_limit_bytes = EXCLUDED.traffic_limit_bytes, active = EXCLUDED.active,
         device_limit = COALESCE(EXCLUDED.device_limit, plans.device_limit),
         traffic_reset = COALESCE($6, plans.traffic_reset),
         reset_day = COALESCE($7, plans.reset_day), starts = COALESCE($8, plans.starts),
         on_hold_max_days = COALESCE($9, plans.on_hold_max_days),
         display = COALESCE($10::jsonb, plans.display), updated_at = now()`,
      [
        plan.name,
        plan.durationDays,
        plan.trafficLimitBytes,
        plan.active,
        plan.deviceLimit ?? null,
        plan.trafficReset ?? null,
        plan.resetDay ?? null,
        plan.starts ?? null,
        plan.onHoldMaxDays ?? null,
        plan.display === undefined ? null : JSON.stringify(plan.display),
      ],
    );
    await this.txHost.tx.query(`DELETE FROM plan_prices WHERE plan_name = $1`, [plan.name]);
    await this.insertPrices(plan);
    return (await this.findPlan(plan.name)) as PlanRecord;
  }

  /** Creates the plan with its prices unless a plan of that name exists; whether it did. */
  async insertPlanIfAbsent(plan: PlanToSave): Promise<boolean> {
    const inserted = await sqlRows<{ name: string }>(
      this.txHost.tx,
      `INSERT INTO plans (name, duration_days, traffic_limit_bytes, active) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO NOTHING RETURNING name`,
      [plan.name, plan.durationDays, plan.trafficLimitBytes, plan.active],
    );
    if (inserted.length === 0) return false;
    await this.insertPrices(plan);
    return true;
  }

  async planForPurchase(name: string, currency: string): Promise<PlanForPurchase | null> {
    const [plan] = await sqlRows<PlanForPurchase>(
      this.txHost.tx,
      `SELECT p.name, p.duration_days AS "durationDays", p.active, pp.amount_minor AS "priceMinor"
       FROM plans p LEFT JOIN plan_prices pp ON pp.plan_name = p.name AND pp.currency = $2
       WHERE p.name = $1`,
      [name, currency],
    );
    return plan ?? null;
  }

  private async insertPrices(plan: PlanToSave): Promise<void> {
    const currencies = Object.keys(plan.prices);
    await this.txHost.tx.query(
      `INSERT INTO plan_prices (plan_name, currency, amount_minor)
       SELECT $1, c, a::bigint FROM unnest($2::text[], $3::text[]) AS t(c, a)`,
      [plan.name, currencies, currencies.map((c) => plan.prices[c])],
    );
  }

  /** The plan's price in that currency now, in minor units; null when it has none. */
  async priceOf(planName: string, currency: string): Promise<string | null> {
    const [row] = await sqlRows<{ amount: string }>(
      this.txHost.tx,
      `SELECT amount_minor AS amount FROM plan_prices WHERE plan_name = $1 AND currency = $2`,
      [planName, currency],
    );
    return row?.amount ?? null;
  }
}
