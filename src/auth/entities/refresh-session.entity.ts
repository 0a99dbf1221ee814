import {
  JoinColumn,
  ManyToOne,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { User } from '../../users/entities/user.entity';

/**
 * One refresh token. Only its SHA-256 hash is stored. Refreshing marks it rotated and issues a new
 * session in the same family; presenting a rotated token revokes every session of the user.
 */
@Entity('refresh_sessions')
@Index('IDX_refresh_sessions_user', ['userId'])
// Logout revokes a family; the clean-up deletes by expiry.
@Index('IDX_refresh_sessions_family', ['familyId'])
@Index('IDX_refresh_sessions_expires', ['expiresAt'])
export class RefreshSession {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  @Column({ type: 'uuid' })
  familyId: string;

  @Index('UQ_refresh_sessions_token_hash', { unique: true })
  @Column({ type: 'bytea' })
  tokenHash: Buffer;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  rotatedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
