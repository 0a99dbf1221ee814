/**
 * Money as the service sends it: an integer count of the currency's minor unit, as a string of
 * digits. Converted as text, never through floating point.
 */
import { isKnownCurrency, minorDigits } from '../../../src/billing/currency-digits';

/**
 * Digits of a currency's minor unit, from the service's own table (TON counts nanotons, Stars are
 * whole), never the browser's: Intl gives HUF, IDR, COP, PKR and IQD fewer digits than the service
 * stores. A code the service does not know (it sends none) counts as two.
 */
export function fractionDigits(currency: string): number {
  return isKnownCurrency(currency) ? minorDigits(currency) : 2;
}

/** `"499"` USD → `4.99`, exactly (money is integer minor units as a string of digits). */
export function minorToDecimal(amount: string, currency: string): string {
  const digits = fractionDigits(currency);
  const negative = amount.startsWith('-');
  const bare = (negative ? amount.slice(1) : amount).padStart(digits + 1, '0');
  const whole = bare.slice(0, bare.length - digits);
  const fraction = digits > 0 ? bare.slice(bare.length - digits).replace(/0+$/, '') : '';
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** `"4.99"` USD → `"499"`; null when it is not a positive amount of that currency. */
export function decimalToMinor(text: string, currency: string): string | null {
  const digits = fractionDigits(currency);
  const match = /^(\d+)(?:[.,](\d+))?$/.exec(text.trim());
  if (!match || (match[2] ?? '').length > digits) return null;
  const minor = `${match[1]}${(match[2] ?? '').padEnd(digits, '0')}`.replace(/^0+(?=\d)/, '');
  return minor === '0' ? null : minor;
}
