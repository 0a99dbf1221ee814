import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';

export interface PlanRecord {
  name: string;
  durationDays: number;
  trafficLimitBytes: string;
  active: boolean;
  /** currency → minor units, as strings of digits. */
  prices: Record<string, string>;
}

/** A plan as bought in one currency; `priceMinor` is null when it has no price there. */
export interface PlanForPurchase {
  name: string;
  durationDays: number;
  active: boolean;
  priceMinor: string | null;
}

const PLAN = `p.name, p.duration_days AS "durationDays", p.traffic_limit_bytes AS "trafficLimitBytes",
  p.active, COALESCE((SELECT jsonb_object_agg(pp.currency, pp.amount_minor::text)
    FROM plan_prices pp WHERE pp.plan_name = p.name), '{}'::jsonb) AS prices`;

/** The owner of `plans` and `plan_prices`. */
@Injectable()
export class PlansRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

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
      `SELECT ${PLAN} FROM plans p ${where} ORDER BY p.duration_days, p.name`,
    );
  }

  async findPlan(name: string): Promise<PlanRecord | null> {
    const [plan] = await sqlRows<PlanRecord>(
      this.txHost.tx,
      `SELECT ${PLAN} FROM plans p WHERE p.name = $1`,
      [name],
    );
    return plan ?? null;
  }

  /** Creates or replaces the plan and all of its prices, inside the caller's transaction. */
  async upsertPlan(plan: PlanRecord): Promise<PlanRecord> {
    await this.txHost.tx.query(
      `INSERT INTO plans (name, duration_days, traffic_limit_bytes, active) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO UPDATE SET duration_days = EXCLUDED.duration_days,
         traffic_limit_bytes = EXCLUDED.traffic_limit_bytes, active = EXCLUDED.active,
         updated_at = now()`,
      [plan.name, plan.durationDays, plan.trafficLimitBytes, plan.active],
    );
    await this.txHost.tx.query(`DELETE FROM plan_prices WHERE plan_name = $1`, [plan.name]);
    await this.insertPrices(plan);
    return (await this.findPlan(plan.name)) as PlanRecord;
  }

  /** Creates the plan with its prices unless a plan of that name exists; whether it did. */
  async insertPlanIfAbsent(plan: PlanRecord): Promise<boolean> {
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

  private async insertPrices(plan: PlanRecord): Promise<void> {
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
