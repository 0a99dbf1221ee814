import type { Response } from 'supertest';
import { type BillingWorld, startBillingWorld } from './billing';
import type { BotApiCall } from './telegram-bot-api';

export const WEBHOOK_SECRET = 'test-webhook-secret-0123456789';
export const APP_URL = 'https://app.example.test';

/** A Telegram user as updates carry it. */
export interface TgUser {
  id: number;
  is_bot: false;
  first_name: string;
  username?: string;
  language_code?: string;
}

export interface InlineButton {
  text: string;
  url?: string;
  callback_data?: string;
}

export interface BotWorld extends BillingWorld {
  /** Posts an update to the webhook with the right secret. */
  send(update: object): Promise<Response>;
  /** A new Telegram user (fresh id). */
  user(languageCode?: string): TgUser;
  start(from: TgUser, payload?: string): Promise<Response>;
  /** Presses an inline button of a message the bot sent. */
  press(from: TgUser, data: string, messageId?: number): Promise<Response>;
  /** The bot's calls that write to this chat (sendMessage, editMessageText, sendInvoice). */
  sentTo(chatId: number, method?: string): BotApiCall[];
  /** The inline buttons of a call, row after row. */
  buttons(call: BotApiCall): InlineButton[];
  nextUpdateId(): number;
}

let tgCounter = 0;

/** The app with the bot in webhook mode, talking to the fake Bot API (and the billing fakes). */
export async function startBotWorld(
  rates: Record<string, string> = { USD: '5' },
  env: Record<string, string> = {},
): Promise<BotWorld> {
  const world = await startBillingWorld(rates, {
    BOT_MODE: 'webhook',
    BOT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    PUBLIC_API_URL: 'https://api.example.test',
    APP_URL,
    ...env,
  });
  let updateId = 5000;
  const nextUpdateId = () => (updateId += 1);
  const send = (update: object) =>
    world.t
      .http()
      .post('/api/v1/bot/webhook')
      .set('X-Telegram-Bot-Api-Secret-Token', WEBHOOK_SECRET)
      .send(update);
  const chat = (from: TgUser) => ({
    id: from.id,
    type: 'private',
    first_name: from.first_name,
  });
  return {
    ...world,
    send,
    nextUpdateId,
    user: (languageCode = 'en') => {
      tgCounter += 1;
      return {
        id: 500_000_000 + process.pid * 1000 + tgCounter,
        is_bot: false,
        first_name: `User${tgCounter}`,
        username: `user_${tgCounter}`,
        language_code: languageCode,
      };
    },
    start: (from, payload) => {
      const text = payload === undefined ? '/start' : `/start ${payload}`;
      return send({
        update_id: nextUpdateId(),
        message: {
          message_id: nextUpdateId(),
          date: Math.floor(Date.now() / 1000),
          chat: chat(from),
          from,
          text,
          entities: [{ type: 'bot_command', offset: 0, length: 6 }],
        },
      });
    },
    press: (from, data, messageId = 1) =>
      send({
        update_id: nextUpdateId(),
        callback_query: {
          id: `cb${nextUpdateId()}`,
          from,
          chat_instance: `ci${from.id}`,
          data,
          message: {
            message_id: messageId,
            date: Math.floor(Date.now() / 1000),
            chat: chat(from),
            from: { id: 7_000_000_001, is_bot: true, first_name: 'Shop' },
            text: 'menu',
          },
        },
      }),
    sentTo: (chatId, method) =>
      world.botApi.calls.filter(
        (call) =>
          ['sendMessage', 'editMessageText', 'sendInvoice'].includes(call.method) &&
          (method === undefined || call.method === method) &&
          Number((call.body as { chat_id?: unknown }).chat_id) === chatId,
      ),
    buttons: (call) => {
      const markup = (call.body as { reply_markup?: { inline_keyboard?: InlineButton[][] } })
        .reply_markup;
      return (markup?.inline_keyboard ?? []).flat();
    },
  };
}
