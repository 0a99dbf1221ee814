import { createHash, createHmac } from 'node:crypto';
import { secretsEqual } from '../common/secrets';

/** The fields the Telegram login widget sends, as received. */
export type WidgetFields = Record<string, string | number | undefined>;

/**
 * Verifies a login-widget payload as Telegram defines it: the data-check-string is every received
 * field but `hash`, sorted by name, `key=value` joined by newlines; the key is SHA-256 of the bot
 * token; the hash is the HMAC-SHA-256 of the string, in hex.
 */
export function verifyWidget(
  fields: WidgetFields,
  botToken: string,
  maxAgeS: number,
  now = Date.now(),
): boolean {
  const { hash, ...data } = fields;
  if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/i.test(hash)) return false;
  const checkString = Object.keys(data)
    .filter((key) => data[key] !== undefined)
    .sort()
    .map((key) => `${key}=${data[key]}`)
    .join('\n');
  const key = createHash('sha256').update(botToken).digest();
  const expected = createHmac('sha256', key).update(checkString).digest('hex');
  if (!secretsEqual(hash.toLowerCase(), expected)) return false;
  const authDate = Number(data.auth_date);
  const ageS = now / 1000 - authDate;
  return Number.isFinite(authDate) && ageS <= maxAgeS && ageS > -60;
}
