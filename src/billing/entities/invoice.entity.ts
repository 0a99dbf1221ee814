import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
} from 'typeorm';
import { User } from '../../users/entities/user.entity';
import { Plan } from './plan.entity';

export const INVOICE_PROVIDERS = ['ton', 'telegram'] as const;
export type InvoiceProvider = (typeof INVOICE_PROVIDERS)[number];

export const INVOICE_STATUSES = ['pending', 'paid', 'expired'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/**
 * One purchase of a plan. `amount` is in the provider's own unit: nanotons for `ton` (the price in
 * `currency` converted at the cached rate, plus 2%), minor units of `currency` for `telegram`.
 */
@Entity('invoices')
@Check('CHK_invoices_provider', "provider IN ('ton', 'telegram')")
@Check('CHK_invoices_status', "status IN ('pending', 'paid', 'expired')")
@Check('CHK_invoices_amount', 'amount > 0')
@Index('IDX_invoices_user', ['userId', 'createdAt'])
@Index('IDX_invoices_open', ['provider', 'createdAt'], { where: "status <> 'paid'" })
// The expiry job reads only pending invoices past their expiry, not every expired one ever made.
@Index('IDX_invoices_pending_expiry', ['expiresAt'], { where: "status = 'pending'" })
// The staff list, newest first (of one status too: pending ones come from the index above).
@Index('IDX_invoices_created', ['createdAt', 'id'])
// The staff figures: paid invoices and money received per day.
@Index('IDX_invoices_paid', ['paidAt'], { where: "status = 'paid'" })
export class Invoice {
  /** Made by the service before the provider is asked: Telegram carries it as the payload. */
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'uuid' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  @Column({ type: 'text' })
  planName: string;

  @ManyToOne(() => Plan, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'plan_name' })
  plan?: Plan;

  /** The currency the price was chosen in (for `ton`, the fiat the nanotons were converted from). */
  @Column({ type: 'text' })
  currency: string;

  @Column({ type: 'bigint' })
  amount: string;

  @Column({ type: 'text' })
  provider: InvoiceProvider;

  @Column({ type: 'text', default: 'pending' })
  status: InvoiceStatus;

  /** What the payer needs, exactly as the contract shows it under `payment`. */
  @Column({ type: 'jsonb' })
  payment: Record<string, unknown>;

  /** TON only: the text comment that ties an on-chain transfer to this invoice. */
  @Index('UQ_invoices_comment', { unique: true, where: 'comment IS NOT NULL' })
  @Column({ type: 'text', nullable: true })
  comment: string | null;

  /** The TON transaction hash or Telegram charge id that paid it: one transaction pays one invoice. */
  @Index('UQ_invoices_provider_tx_ref', { unique: true, where: 'provider_tx_ref IS NOT NULL' })
  @Column({ type: 'text', nullable: true })
  providerTxRef: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  paidAt: Date | null;

  /** A pending invoice becomes `expired` after this; a late payment is still credited for a while. */
  @Column({ type: 'timestamptz' })
  expiresAt: Date;
}
