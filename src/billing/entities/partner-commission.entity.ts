import {
  Check,
  JoinColumn,
  ManyToOne,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { User } from '../../users/entities/user.entity';

/** A partner's commission on one paid invoice of a buyer attached to that partner. */
@Entity('partner_commissions')
@Check('CHK_partner_commissions_amount', 'amount_minor >= 0')
@Index('IDX_partner_commissions_partner', ['partnerId', 'createdAt'])
export class PartnerCommission {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  partnerId: string;

  @ManyToOne(() => User, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'partner_id' })
  partner?: User;

  @Column({ type: 'uuid' })
  buyerId: string;

  @ManyToOne(() => User, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'buyer_id' })
  buyer?: User;

  /** One commission per invoice, whatever confirms it and however often. */
  @Index('UQ_partner_commissions_invoice', { unique: true })
  @Column({ type: 'uuid' })
  invoiceId: string;

  @Column({ type: 'text' })
  planName: string;

  @Column({ type: 'text' })
  currency: string;

  /** The plan's price in `currency`'s minor units, the base of the commission. */
  @Column({ type: 'bigint' })
  priceMinor: string;

  @Column({ type: 'numeric', precision: 5, scale: 2 })
  percent: string;

  /** price × percent / 100, rounded down to a whole minor unit. */
  @Column({ type: 'bigint' })
  amountMinor: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
