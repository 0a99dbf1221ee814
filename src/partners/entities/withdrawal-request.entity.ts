import {
  Check,
  JoinColumn,
  ManyToOne,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { User } from '../../users/entities/user.entity';

export const WITHDRAWAL_STATES = ['pending', 'approved', 'rejected', 'paid'] as const;
export type WithdrawalState = (typeof WITHDRAWAL_STATES)[number];

/** A partner's request to be paid part of its available balance in one currency. */
@Entity('withdrawal_requests')
@Check('CHK_withdrawal_requests_status', "status IN ('pending', 'approved', 'rejected', 'paid')")
@Check('CHK_withdrawal_requests_amount', 'amount > 0')
@Index('IDX_withdrawal_requests_partner', ['partnerId', 'currency'])
export class WithdrawalRequest {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  partnerId: string;

  @ManyToOne(() => User, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'partner_id' })
  partner?: User;

  @Column({ type: 'bigint' })
  amount: string;

  @Column({ type: 'text' })
  currency: string;

  @Column({ type: 'text' })
  destination: string;

  @Column({ type: 'text', default: 'pending' })
  status: WithdrawalState;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  @Column({ type: 'text', nullable: true })
  txRef: string | null;

  @Column({ type: 'uuid', nullable: true })
  decidedBy: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
