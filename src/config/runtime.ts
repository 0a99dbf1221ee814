/**
 * The value the contract says is read from the environment on every request (`GET /config`'s
 * `bot_username`), so an operator can change it without a restart of the settings object.
 */
export function readBotUsername(): string | null {
  const trimmed = process.env.BOT_USERNAME?.trim();
  return trimmed ? trimmed : null;
}
