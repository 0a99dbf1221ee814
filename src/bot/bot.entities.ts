import { BotChat } from './entities/bot-chat.entity';
import { BotReminder } from './entities/bot-reminder.entity';

/** The entities of bot/: BotModule registers them, src/entities.ts joins them for the CLI. */
export const BOT_ENTITIES = [BotChat, BotReminder];
