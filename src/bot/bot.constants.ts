/** Only one instance long-polls Telegram (two would take each other's updates). */
export const POLLING_LOCK_KEY = 7_000_102;

/** The update kinds the bot handles; Telegram sends no others. */
export const ALLOWED_UPDATES = [
  'message',
  'callback_query',
  'pre_checkout_query',
  'my_chat_member',
] as const;

/** Long-polling `timeout` of getUpdates, seconds. */
export const POLL_TIMEOUT_S = 30;
/** How often an instance without the polling lock tries to take it over. */
export const POLL_LOCK_RETRY_MS = 15_000;
/** A webhook update is answered after this at the latest, even while it is still being handled. */
export const WEBHOOK_ANSWER_WITHIN_MS = 5_000;

/** Reminders per run, so one run stays short; the rest wait for the next run. */
export const REMINDERS_BATCH = 200;
/** A traffic warning not sent within this many hours (the bot was off) is not sent any more. */
export const TRAFFIC_WARNING_HOURS = 24;
/** An `ended` reminder is still sent this many days after the end (not for long-gone accounts). */
export const ENDED_REMINDER_DAYS = 7;

/** How long an update waits for the bot's own details (`getMe`) when it does not have them yet. */
export const INIT_WITHIN_MS = 5_000;
