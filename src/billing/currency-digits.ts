/**
 * How many digits each currency's minor unit has: the one table the service and the web app both
 * read (web/src/i18n/money.ts imports this file), so an amount typed in the browser means the same
 * number of minor units the service stores. No imports: the web app's bundle takes it as it is.
 */

/** Digits after the decimal point per ISO 4217 currency; `TON` counts nanotons. */
const MINOR_DIGITS: Readonly<Record<string, number>> = {
  // zero-decimal currencies
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  // three-decimal currencies
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  // two-decimal currencies
  AED: 2,
  AMD: 2,
  ARS: 2,
  AUD: 2,
  AZN: 2,
  BDT: 2,
  BGN: 2,
  BRL: 2,
  BYN: 2,
  CAD: 2,
  CHF: 2,
  CNY: 2,
  COP: 2,
  CZK: 2,
  DKK: 2,
  EGP: 2,
  EUR: 2,
  GBP: 2,
  GEL: 2,
  HKD: 2,
  HUF: 2,
  IDR: 2,
  ILS: 2,
  INR: 2,
  KGS: 2,
  KZT: 2,
  MDL: 2,
  MXN: 2,
  MYR: 2,
  NGN: 2,
  NOK: 2,
  NZD: 2,
  PHP: 2,
  PKR: 2,
  PLN: 2,
  RON: 2,
  RSD: 2,
  RUB: 2,
  SAR: 2,
  SEK: 2,
  SGD: 2,
  THB: 2,
  TJS: 2,
  TRY: 2,
  TWD: 2,
  UAH: 2,
  USD: 2,
  UZS: 2,
  ZAR: 2,
  // on-chain
  TON: 9,
  // Telegram Stars: whole Stars, paid only through Telegram
  XTR: 0,
};

export const TON_CURRENCY = 'TON';
export const STARS_CURRENCY = 'XTR';

/** Every currency the service knows, in the table's order. */
export const KNOWN_CURRENCIES: readonly string[] = Object.keys(MINOR_DIGITS);

export function isKnownCurrency(code: string): boolean {
  return Object.prototype.hasOwnProperty.call(MINOR_DIGITS, code);
}

export function minorDigits(code: string): number {
  const digits = MINOR_DIGITS[code];
  if (digits === undefined) throw new Error(`unknown currency ${code}`);
  return digits;
}
