import type { PlanStart, TrafficReset } from '../../users/traffic-reset';
import type { PlanDisplayTexts } from '../plan-display';
import { Check, Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A subscription plan users can buy; its prices per currency are in `plan_prices`. */
@Entity('plans')
@Check('CHK_plans_duration_days', 'duration_days > 0')
@Check('CHK_plans_traffic_limit', 'traffic_limit_bytes >= 0')
@Check('CHK_plans_device_limit', 'device_limit BETWEEN 1 AND 20')
@Check(
  'CHK_plans_traffic_reset',
  "traffic_reset IN ('none', 'day', 'week', 'month', 'rolling_month')",
)
@Check('CHK_plans_reset_day', 'reset_day BETWEEN 1 AND 28')
@Check('CHK_plans_starts', "starts IN ('on_purchase', 'on_first_use')")
@Check('CHK_plans_on_hold_max_days', 'on_hold_max_days BETWEEN 1 AND 365')
@Check('CHK_plans_display', "jsonb_typeof(display) = 'object'")
export class Plan {
  /** `^[a-z0-9_-]{1,32}$`; also the path parameter of `PUT /admin/plans/{name}`. */
  @PrimaryColumn({ type: 'text' })
  name: string;

  @Column({ type: 'int' })
  durationDays: number;

  @Column({ type: 'bigint' })
  trafficLimitBytes: string;

  /** Inactive plans are not listed and cannot be bought; paid invoices keep referring to them. */
  @Column({ type: 'boolean', default: true })
  active: boolean;

  /** Devices per subscriber; null follows DEVICE_LIMIT_DEFAULT. */
  @Column({ type: 'int', nullable: true })
  deviceLimit: number | null;

  /** When used traffic starts again from zero (`src/users/traffic-reset.ts`). */
  @Column({ type: 'text', default: 'none' })
  trafficReset: TrafficReset;

  /** The day of the month of a `month` reset. */
  @Column({ type: 'int', default: 1 })
  resetDay: number;

  /** `on_first_use`: the days begin with the first counted traffic, or after `onHoldMaxDays`. */
  @Column({ type: 'text', default: 'on_purchase' })
  starts: PlanStart;

  @Column({ type: 'int', default: 30 })
  onHoldMaxDays: number;

  /** Name and short description per language (`{ru: {name, description}}`); none: the slug. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  display: PlanDisplayTexts;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
