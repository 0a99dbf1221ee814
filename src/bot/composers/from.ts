import type { User } from 'grammy/types';
import type { BotUser } from '../bot-accounts.service';

/** The Telegram user of an update, as the bot's services take it. */
export function botUser(from: User): BotUser {
  return { tgId: from.id, username: from.username ?? null };
}
