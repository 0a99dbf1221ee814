import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
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

/** Every query on `plans` and `plan_prices`. */
@Injectable()
export class PlansRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  activePlans(): Promise<PlanRecord[]> {
    return sqlRows<PlanRecord>(
      this.dataSource,
      `SELECT ${PLAN} FROM plans p WHERE p.active ORDER BY p.duration_days, p.name`,
    );
  }

  async findPlan(tx: EntityManager, name: string): Promise<PlanRecord | null> {
    const [plan] = await sqlRows<PlanRecord>(tx, `SELECT ${PLAN} FROM plans p WHERE p.name = $1`, [
      name,
    ]);
    return plan ?? null;
  }

  /**
   * Serialises changes of one plan until the transaction ends, also while its row does not exist
   * yet, so the "before" a change reads is the one it replaces.
   */
  async lockPlanName(tx: EntityManager, name: string): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`plans:${name}`]);
  }

  /** Creates or replaces the plan and all of its prices, inside the caller's transaction. */
  async upsertPlan(tx: EntityManager, plan: PlanRecord): Promise<PlanRecord> {
    await tx.query(
      `INSERT INTO plans (name, duration_days, traffic_limit_bytes, active) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO UPDATE SET duration_days = EXCLUDED.duration_days,
         traffic_limit_bytes = EXCLUDED.traffic_limit_bytes, active = EXCLUDED.active,
         updated_at = now()`,
      [plan.name, plan.durationDays, plan.trafficLimitBytes, plan.active],
    );
    await tx.query(`DELETE FROM plan_prices WHERE plan_name = $1`, [plan.name]);
    await this.insertPrices(tx, plan);
    return (await this.findPlan(tx, plan.name)) as PlanRecord;
  }

  /** Creates the plan with its prices unless a plan of that name exists; whether it did. */
  async insertPlanIfAbsent(tx: EntityManager, plan: PlanRecord): Promise<boolean> {
    const inserted = await sqlRows<{ name: string }>(
      tx,
      `INSERT INTO plans (name, duration_days, traffic_limit_bytes, active) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO NOTHING RETURNING name`,
      [plan.name, plan.durationDays, plan.trafficLimitBytes, plan.active],
    );
    if (inserted.length === 0) return false;
    await this.insertPrices(tx, plan);
    return true;
  }

  async planForPurchase(name: string, currency: string): Promise<PlanForPurchase | null> {
    const [plan] = await sqlRows<PlanForPurchase>(
      this.dataSource,
      `SELECT p.name, p.duration_days AS "durationDays", p.active, pp.amount_minor AS "priceMinor"
       FROM plans p LEFT JOIN plan_prices pp ON pp.plan_name = p.name AND pp.currency = $2
       WHERE p.name = $1`,
      [name, currency],
    );
    return plan ?? null;
  }

  private async insertPrices(tx: EntityManager, plan: PlanRecord): Promise<void> {
    const currencies = Object.keys(plan.prices);
    await tx.query(
      `INSERT INTO plan_prices (plan_name, currency, amount_minor)
       SELECT $1, c, a::bigint FROM unnest($2::text[], $3::text[]) AS t(c, a)`,
      [plan.name, currencies, currencies.map((c) => plan.prices[c])],
    );
  }
}
