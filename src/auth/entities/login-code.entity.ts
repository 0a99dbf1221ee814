import { JoinColumn, ManyToOne, Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity';

/**
 * A magic-link login for desktop and mobile apps: the app shows the deep link, the user confirms it
 * in the bot, and the app polls with its secret until it receives a bootstrap token (once).
 */
@Entity('login_codes')
export class LoginCode {
  /** SHA-256 of the code in the deep link. */
  @PrimaryColumn({ type: 'bytea' })
  codeHash: Buffer;

  @Column({ type: 'bytea' })
  pollSecretHash: Buffer;

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
