/**
 * Inline-button data, short (Telegram allows 64 bytes) and versioned, so that buttons of an older
 * release are recognised as stale instead of being misread.
 */
export const CALLBACK = {
  plans: 'v1:plans',
  connect: 'v1:connect',
  /** The plan list again, in place of the method screen. */
  plansBack: 'v1:plans:back',
  plan: (plan: string) => `v1:plan:${plan}`,
  buy: (plan: string, method: string) => `v1:buy:${plan}:${method}`,
  paid: (invoiceId: string) => `v1:paid:${invoiceId}`,
  loginConfirm: (code: string) => `v1:login:ok:${code}`,
  loginCancel: (code: string) => `v1:login:no:${code}`,
  /** Warnings and reminders off, or on again. */
  warnings: (on: boolean) => `v1:warnings:${on ? 'on' : 'off'}`,
} as const;

const PLAN = '[a-z0-9_-]{1,32}';
const CURRENCY = '[A-Z]{3}';

/** What each handler listens to; the capture groups are its arguments. */
export const CALLBACK_PATTERN = {
  plans: /^v1:plans(:back)?$/,
  connect: /^v1:connect$/,
  plan: new RegExp(`^v1:plan:(${PLAN})$`),
  buy: new RegExp(`^v1:buy:(${PLAN}):(ton-${CURRENCY}|card-${CURRENCY}|stars)$`),
  paid: /^v1:paid:([0-9a-f-]{36})$/,
  login: /^v1:login:(ok|no):([A-Za-z0-9_-]{10,64})$/,
  warnings: /^v1:warnings:(on|off)$/,
} as const;

/** A payment method on the choice screen: TON or card priced in a currency, or Stars. */
export type PaymentMethod =
  { kind: 'ton'; currency: string } | { kind: 'card'; currency: string } | { kind: 'stars' };

export function encodeMethod(method: PaymentMethod): string {
  return method.kind === 'stars' ? 'stars' : `${method.kind}-${method.currency}`;
}

export function decodeMethod(text: string): PaymentMethod {
  if (text === 'stars') return { kind: 'stars' };
  const [kind, currency] = text.split('-');
  return { kind: kind === 'ton' ? 'ton' : 'card', currency };
}
