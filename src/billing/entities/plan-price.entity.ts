import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Plan } from './plan.entity';

/** A plan's price in one currency, in that currency's minor units (nanotons for `TON`). */
@Entity('plan_prices')
@Check('CHK_plan_prices_amount', 'amount_minor > 0')
export class PlanPrice {
  @PrimaryColumn({ type: 'text' })
  planName: string;

  @ManyToOne(() => Plan, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'plan_name' })
  plan?: Plan;

  /** ISO 4217 upper-case code, or `TON`. */
  @PrimaryColumn({ type: 'text' })
  currency: string;

  @Column({ type: 'bigint' })
  amountMinor: string;
}
