import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * What the bot knows of a Telegram account's private chat with it: the language to write in when
 * nobody asked (reminders), and whether Telegram refused our last message (the user blocked the bot).
 */
@Entity('bot_chats')
export class BotChat {
  /** The Telegram user id, which is also the private chat's id. */
  @PrimaryColumn({ type: 'bigint' })
  tgId: string;

  /** Telegram's `language_code` as last seen. */
  @Column({ type: 'text', nullable: true })
  languageCode: string | null;

  /** Set on a 403 from Telegram; cleared when the user writes again. No reminders while set. */
  @Column({ type: 'timestamptz', nullable: true })
  unreachableAt: Date | null;

  /** The user turned warnings off in the bot: no traffic warnings and no subscription reminders. */
  @Column({ type: 'boolean', default: false })
  warningsOff: boolean;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
