import { Check, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from '../../users/entities/user.entity';

export const REMINDER_KINDS = ['3d', '1d', 'ended'] as const;
export type ReminderKind = (typeof REMINDER_KINDS)[number];

/**
 * One reminder sent (or being sent) about one subscription end. The key makes each kind at most
 * once per subscription period: a renewal moves the end, and so starts a new set.
 */
@Entity('bot_reminders')
@Check('CHK_bot_reminders_kind', "kind IN ('3d', '1d', 'ended')")
export class BotReminder {
  @PrimaryColumn({ type: 'uuid' })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  /** The subscription end this reminder is about. */
  @PrimaryColumn({ type: 'timestamptz' })
  expiresAt: Date;

  @PrimaryColumn({ type: 'text' })
  kind: ReminderKind;

  @CreateDateColumn({ type: 'timestamptz' })
  sentAt: Date;
}
