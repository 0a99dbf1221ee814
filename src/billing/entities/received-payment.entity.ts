import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { INVOICE_PROVIDERS, type InvoiceProvider } from './invoice.entity';

export const UNMATCHED_REASONS = ['no_invoice', 'underpaid', 'too_late'] as const;
export type UnmatchedReason = (typeof UNMATCHED_REASONS)[number];

/**
 * Money that reached the service's wallet, as read from the chain: every incoming transfer is kept
 * once (by its hash), then settled by reconciliation as paying an invoice or as unmatched, with the
 * reason, for staff to attach by hand. Nothing received is ever dropped.
 */
@Entity('received_payments')
@Check(
  'CHK_received_payments_provider',
  `provider IN (${INVOICE_PROVIDERS.map((p) => `'${p}'`).join(', ')})`,
)
@Check('CHK_received_payments_reason', "reason IN ('no_invoice', 'underpaid', 'too_late')")
@Index('IDX_received_payments_unsettled', ['provider', 'lt'], { where: 'settled_at IS NULL' })
@Index('IDX_received_payments_memo', ['provider', 'memoKey'], { where: 'settled_at IS NULL' })
@Index('IDX_received_payments_unmatched', ['receivedAt', 'id'], {
  where: 'reason IS NOT NULL AND invoice_id IS NULL',
})
export class ReceivedPayment {
  /** The list's keyset tie-breaker; the transaction is identified by `txRef`. */
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The TON transaction hash. */
  @Index('UQ_received_payments_tx_ref', { unique: true })
  @Column({ type: 'text' })
  txRef: string;

  @Column({ type: 'text' })
  provider: InvoiceProvider;

  /** The transaction's logical time on the wallet's account. */
  @Column({ type: 'bigint', nullable: true })
  lt: string | null;

  @Column({ type: 'text', nullable: true })
  sender: string | null;

  /** In the provider's own unit (nanotons). */
  @Column({ type: 'bigint' })
  amount: string;

  @Column({ type: 'text' })
  currency: string;

  /** The text comment as sent. */
  @Column({ type: 'text', nullable: true })
  comment: string | null;

  /** The comment trimmed and lower-cased, as invoice comments are matched. */
  @Column({ type: 'text', nullable: true })
  memoKey: string | null;

  @Column({ type: 'timestamptz' })
  receivedAt: Date;

  /** When reconciliation decided what it paid; null while not yet looked at. */
  @Column({ type: 'timestamptz', nullable: true })
  settledAt: Date | null;

  /** Why it paid no invoice; null when it paid one. */
  @Column({ type: 'text', nullable: true })
  reason: UnmatchedReason | null;

  /** The invoice it paid, or that staff attached it to. */
  @Column({ type: 'uuid', nullable: true })
  invoiceId: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
