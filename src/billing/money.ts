/**
 * Exact money arithmetic: prices are bigints of minor units, exchange rates are rationals parsed
 * from their decimal text. No floating point touches an amount.
 */
import { minorDigits } from './currency-digits';

export { isKnownCurrency, minorDigits, STARS_CURRENCY, TON_CURRENCY } from './currency-digits';

/** The on-chain price buffer against rate movement between invoice and payment: 2%. */
const BUFFER_PERCENT = 102n;

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
