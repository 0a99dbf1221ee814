import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { User } from '../../users/entities/user.entity';

/**
 * One staff action that changed access, limits or money: who, what, on which target, the values
 * before and after, and when. Written in the same transaction as the change; never updated.
 */
@Entity('audit_log')
@Index('IDX_audit_log_created_at', ['createdAt', 'id'])
@Index('IDX_audit_log_target', ['targetType', 'targetId'])
export class AuditLogEntry {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The staff member who acted; null for actions of the system itself (e.g. the CLI). */
  @Column({ type: 'uuid', nullable: true })
  actorId: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'actor_id' })
  actor?: User;

  /** What was done, e.g. `user.traffic_limit_changed`. */
  @Column({ type: 'text' })
  action: string;

  /** The kind of thing changed, e.g. `user` or `setting`. */
  @Column({ type: 'text' })
  targetType: string;

  /** Its id: a UUID for rows, a key for settings. */
  @Column({ type: 'text', nullable: true })
  targetId: string | null;

  @Column({ type: 'jsonb', nullable: true })
  before: unknown;

  @Column({ type: 'jsonb', nullable: true })
  after: unknown;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
