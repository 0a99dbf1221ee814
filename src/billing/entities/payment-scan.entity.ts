import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * How far the wallet's transactions have been read. Reads go newest to oldest: `doneLt` is the
 * newest logical time below which everything is stored; a read that stopped part-way keeps the
 * range it covered (`scanTopLt` down to `scanLowLt`), and the next run finishes it first.
 */
@Entity('payment_scans')
export class PaymentScan {
  @PrimaryColumn({ type: 'text' })
  provider: string;

  @Column({ type: 'bigint', nullable: true })
  doneLt: string | null;

  @Column({ type: 'bigint', nullable: true })
  scanTopLt: string | null;

  @Column({ type: 'bigint', nullable: true })
  scanLowLt: string | null;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
