/**
 * Exact money arithmetic: prices are bigints of minor units, exchange rates are rationals parsed
 * from their decimal text. No floating point touches an amount.
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

/** The on-chain price buffer against rate movement between invoice and payment: 2%. */
const BUFFER_PERCENT = 102n;

export function isKnownCurrency(code: string): boolean {
  return Object.prototype.hasOwnProperty.call(MINOR_DIGITS, code);
}

export function minorDigits(code: string): number {
  const digits = MINOR_DIGITS[code];
  if (digits === undefined) throw new Error(`unknown currency ${code}`);
  return digits;
}

/** A positive rational number `num / den`. */
export interface Rational {
  num: bigint;
  den: bigint;
}

const DECIMAL = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Parses a positive decimal such as `"3.1234"` or `"1.5e-7"` exactly; null for anything else
 * (negative, zero, empty, NaN, hexadecimal...).
 */
export function parseDecimal(text: string): Rational | null {
  const match = DECIMAL.exec(text.trim());
  if (!match) return null;
  const [, whole, fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText) - fraction.length;
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 400) return null;
  let num = BigInt(whole + fraction);
  let den = 1n;
  if (exponent >= 0) num *= 10n ** BigInt(exponent);
  else den = 10n ** BigInt(-exponent);
  if (num === 0n) return null;
  return { num, den };
}

/** ⌈a / b⌉ for a ≥ 0, b > 0. */
function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/**
 * Nanotons to ask for a price of `priceMinor` minor units of `currency`, when one TON costs `rate`
 * major units of it: ⌈price / 10^digits / rate × 10^9 × 1.02⌉, computed exactly; without the 2%
 * when `buffered` is false (what the price itself is worth now).
 */
export function nanotonsFor(
  priceMinor: bigint,
  currency: string,
  rate: Rational,
  buffered = true,
): bigint {
  const numerator = priceMinor * 10n ** 9n * (buffered ? BUFFER_PERCENT : 100n) * rate.den;
  const denominator = 10n ** BigInt(minorDigits(currency)) * 100n * rate.num;
  return ceilDiv(numerator, denominator);
}

/**
 * A partner's commission: `priceMinor` × `percent` / 100, rounded down to a whole minor unit.
 * `percent` is PostgreSQL's numeric(5,2) text, e.g. `"12.50"`.
 */
export function commissionMinor(priceMinor: bigint, percent: string): bigint {
  const match = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(percent.trim());
  if (!match) throw new Error(`not a commission percent: ${percent}`);
  const hundredths = BigInt(match[1]) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
  return (priceMinor * hundredths) / 10_000n;
}

/** Minor units as the decimal text of the major unit, exactly: `499` USD → `4.99`, nanotons → TON. */
export function formatMinor(amount: bigint | string, currency: string): string {
  const digits = minorDigits(currency);
  const text = BigInt(amount)
    .toString()
    .padStart(digits + 1, '0');
  if (digits === 0) return text;
  const whole = text.slice(0, -digits);
  const fraction = text.slice(-digits).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}
