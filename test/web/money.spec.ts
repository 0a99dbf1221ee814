import { KNOWN_CURRENCIES, minorDigits } from '../../src/billing/currency-digits';
import { formatMinor } from '../../src/billing/money';
import { landingAfterFailedRefresh } from '../../web/src/api/landing';
import { decimalToMinor, minorToDecimal } from '../../web/src/i18n/money';

describe('the web app’s money and landing rules', () => {
  it('shows minor units as decimals exactly, in each currency’s own digits', () => {
    expect(minorToDecimal('499', 'USD')).toBe('4.99');
    expect(minorToDecimal('40', 'USD')).toBe('0.4');
    expect(minorToDecimal('5', 'EUR')).toBe('0.05');
    expect(minorToDecimal('1500', 'JPY')).toBe('1500');
    expect(minorToDecimal('250', 'XTR')).toBe('250');
    expect(minorToDecimal('1017960000', 'TON')).toBe('1.01796');
    // Past 2^53: still exact, as text.
    expect(minorToDecimal('123456789012345678901', 'USD')).toBe('1234567890123456789.01');
  });

  it('reads typed amounts into minor units, refusing what the currency cannot hold', () => {
    expect(decimalToMinor('4.99', 'USD')).toBe('499');
    expect(decimalToMinor(' 0,4 ', 'USD')).toBe('40');
    expect(decimalToMinor('12', 'USD')).toBe('1200');
    expect(decimalToMinor('1.5', 'TON')).toBe('1500000000');
    expect(decimalToMinor('0.001', 'USD')).toBeNull();
    expect(decimalToMinor('1.5', 'JPY')).toBeNull();
    expect(decimalToMinor('0.00', 'USD')).toBeNull();
    expect(decimalToMinor('-1', 'USD')).toBeNull();
    expect(decimalToMinor('1e3', 'USD')).toBeNull();
    expect(decimalToMinor('', 'USD')).toBeNull();
  });

  it('counts every currency the service knows in the service’s digits, both ways', () => {
    // The browser's Intl disagrees for some (HUF, IDR, COP, PKR: 0 digits, IQD: 0, not 3):
    // a price typed in those would be stored 100 or 1000 times too small.
    const disagreements = KNOWN_CURRENCIES.flatMap((currency) => {
      const one = `1${'0'.repeat(minorDigits(currency))}`;
      const shown = minorToDecimal('123456789', currency);
      const agree =
        shown === formatMinor(123456789n, currency) &&
        decimalToMinor(shown, currency) === '123456789' &&
        decimalToMinor('1', currency) === one &&
        minorToDecimal(one, currency) === '1';
      return agree ? [] : [currency];
    });
    expect(disagreements).toEqual([]);
  });

  it('sends a visitor whose session cannot be renewed to the sign-in page of the area', () => {
    expect(landingAfterFailedRefresh('/account', '/')).toBe('/');
    expect(landingAfterFailedRefresh('/support/123', '/')).toBe('/');
    expect(landingAfterFailedRefresh('/staff', '/')).toBe('/staff');
    expect(landingAfterFailedRefresh('/staff/users', '/')).toBe('/staff');
    expect(landingAfterFailedRefresh('/', '/')).toBeNull();
    expect(landingAfterFailedRefresh('/plans', '/')).toBeNull();
    expect(landingAfterFailedRefresh('/staffing', '/')).toBe('/');
  });
});
