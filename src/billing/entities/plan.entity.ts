import { Check, Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A subscription plan users can buy; its prices per currency are in `plan_prices`. */
@Entity('plans')
@Check('CHK_plans_duration_days', 'duration_days > 0')
@Check('CHK_plans_traffic_limit', 'traffic_limit_bytes >= 0')
@Check('CHK_plans_device_limit', 'device_limit BETWEEN 1 AND 20')
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

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
