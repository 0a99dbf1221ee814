import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { User } from '../../users/entities/user.entity';

export const TICKET_STATUSES = ['open', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

export const AUTHOR_ROLES = ['user', 'staff'] as const;
export type AuthorRole = (typeof AUTHOR_ROLES)[number];

/**
 * A user's support ticket. `lastMessageAt` and `lastAuthorRole` repeat the newest message so the
 * staff queue needs no per-row subquery; they change in the same transaction as the message insert.
 */
@Entity('tickets')
@Check('CHK_tickets_status', "status IN ('open', 'closed')")
@Check('CHK_tickets_last_author_role', "last_author_role IN ('user', 'staff')")
@Check('CHK_tickets_closed_at', "(status = 'closed') = (closed_at IS NOT NULL)")
@Index('IDX_tickets_user', ['userId', 'createdAt'])
@Index('IDX_tickets_open_queue', ['createdAt', 'id'], { where: "status = 'open'" })
@Index('IDX_tickets_closed_queue', ['closedAt', 'id'], { where: "status = 'closed'" })
export class Ticket {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  @Column({ type: 'text' })
  subject: string;

  @Column({ type: 'text', default: 'open' })
  status: TicketStatus;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  closedAt: Date | null;

  /** The staff member who closed it. */
  @Column({ type: 'uuid', nullable: true })
  closedBy: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'closed_by' })
  closedByUser?: User;

  @Column({ type: 'timestamptz' })
  lastMessageAt: Date;

  @Column({ type: 'text' })
  lastAuthorRole: AuthorRole;
}
