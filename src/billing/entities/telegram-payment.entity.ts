import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
} from 'typeorm';
import { Invoice } from './invoice.entity';

/**
 * A Telegram `successful_payment` as the bot received it, kept even when confirming fails, so that
 * reconciliation can credit it later. These are the Telegram provider's transactions.
 */
@Entity('telegram_payments')
@Index('IDX_telegram_payments_invoice', ['invoiceId'])
// Reconciliation reads the recent ones every run.
@Index('IDX_telegram_payments_created', ['createdAt'])
export class TelegramPayment {
  @PrimaryColumn({ type: 'text' })
  telegramPaymentChargeId: string;

  @Column({ type: 'uuid' })
  invoiceId: string;

  @ManyToOne(() => Invoice, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'invoice_id' })
  invoice?: Invoice;

  @Column({ type: 'bigint' })
  tgId: string;

  @Column({ type: 'text' })
  currency: string;

  /** In minor units of `currency`, as Telegram reports `total_amount`. */
  @Column({ type: 'bigint' })
  totalAmount: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /**
   * Set when this charge arrived for an invoice that another charge had paid already: it is never
   * credited, but refunded (Stars, by the service) or left for staff to refund (other currencies).
   */
  @Column({ type: 'timestamptz', nullable: true })
  duplicateAt: Date | null;

  /** When the service refunded this charge through the Bot API (`refundStarPayment`). */
  @Column({ type: 'timestamptz', nullable: true })
  refundedAt: Date | null;
}
