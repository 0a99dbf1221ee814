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

/**
 * A magic-link login for desktop and mobile apps: the app shows the deep link, the user confirms it
 * in the bot, and the app polls with its secret until it receives a bootstrap token (once).
 */
@Entity('login_codes')
@Index('IDX_login_codes_expires', ['expiresAt'])
export class LoginCode {
  /** SHA-256 of the code in the deep link. */
  @PrimaryColumn({ type: 'bytea' })
  codeHash: Buffer;

  @Column({ type: 'bytea' })
  pollSecretHash: Buffer;

  /**
   * The Telegram account that opened the link in the bot, first one wins. Only that account can
   * then confirm or cancel the code, so a link sent to someone else cannot be confirmed by them for
   * an account the sender chose.
   */
  @Column({ type: 'uuid', nullable: true })
  openedByUserId: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'opened_by_user_id' })
  openedByUser?: User;

  /** Set when that account pressed Cancel: the code ends and polling answers `expired`. */
  @Column({ type: 'timestamptz', nullable: true })
  cancelledAt: Date | null;

  /** Set when the bot confirms the code for a Telegram account. */
  @Column({ type: 'uuid', nullable: true })
  userId: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  confirmedAt: Date | null;

  /** When the poll handed out the bootstrap token; it is handed out once. */
  @Column({ type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;
}
