import {
  Index,
  JoinColumn,
  ManyToOne,
  Column,
  CreateDateColumn,
  Entity,
  PrimaryColumn,
} from 'typeorm';
import { User } from '../../users/entities/user.entity';

/** A short-lived, single-use token exchanged for a session (`POST /auth/exchange`). */
@Entity('bootstrap_tokens')
@Index('IDX_bootstrap_tokens_expires', ['expiresAt'])
export class BootstrapToken {
  /** SHA-256 of the token. */
  @PrimaryColumn({ type: 'bytea' })
  tokenHash: Buffer;

  @Column({ type: 'uuid' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  usedAt: Date | null;
}
