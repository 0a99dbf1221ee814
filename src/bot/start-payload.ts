/** What a `/start` deep link asks for; a module of its own, free of the bot's services. */
export type StartRequest =
  | { kind: 'partner'; code: string }
  | { kind: 'referral'; referrerTgId: string }
  | { kind: 'login'; code: string }
  | { kind: 'plain' };

/**
 * The `/start` payload: `p_<partner_code>` first (so `p_123` is a partner code), then a referrer's
 * numeric Telegram id, then `login_<code>`; anything else is a plain start.
 */
export function parseStartPayload(payload: string): StartRequest {
  const text = payload.trim();
  const partner = /^p_([A-Za-z0-9_-]{1,62})$/.exec(text);
  if (partner) return { kind: 'partner', code: partner[1] };
  if (/^[1-9]\d{0,15}$/.test(text)) return { kind: 'referral', referrerTgId: text };
  const login = /^login_([A-Za-z0-9_-]{10,58})$/.exec(text);
  if (login) return { kind: 'login', code: login[1] };
  return { kind: 'plain' };
}
