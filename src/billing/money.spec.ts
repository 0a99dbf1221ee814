import { commissionMinor, isKnownCurrency, nanotonsFor, parseDecimal } from './money';

describe('money', () => {
  it('parses decimals exactly and refuses the rest', () => {
    expect(parseDecimal('3.1234')).toEqual({ num: 31234n, den: 10000n });
    expect(parseDecimal('95')).toEqual({ num: 95n, den: 1n });
    expect(parseDecimal('1.5e-7')).toEqual({ num: 15n, den: 100000000n });
    expect(parseDecimal('2E+2')).toEqual({ num: 200n, den: 1n });
    for (const bad of ['', '0', '0.000', '-1', 'NaN', 'Infinity', '0x10', '1.', '.5', '1e999999'])
      expect(parseDecimal(bad)).toBeNull();
  });

  it('converts to nanotons rounding up, with the 2% buffer, where floats would be off by one', () => {
    // 1.01 USD at 1.02 USD/TON = 0.990196… TON; × 1.02 = exactly 1.01 TON. Floats give …001.
    expect(nanotonsFor(101n, 'USD', parseDecimal('1.02')!)).toBe(1_010_000_000n);
    expect(nanotonsFor(499n, 'USD', parseDecimal('2.5')!)).toBe(2_035_920_000n);
    // 1/3 TON per yen-less unit: ⌈100 / 3 × 1.02 × 10^9⌉
    expect(nanotonsFor(100n, 'JPY', parseDecimal('3')!)).toBe(34_000_000_000n);
    expect(nanotonsFor(1n, 'USD', parseDecimal('3')!)).toBe(3_400_000n);
    expect(nanotonsFor(1n, 'KWD', parseDecimal('7')!)).toBe(145_715n);
  });

  it('rounds commissions down to a whole minor unit', () => {
    expect(commissionMinor(499n, '10.00')).toBe(49n);
    expect(commissionMinor(499n, '12.5')).toBe(62n);
    expect(commissionMinor(999n, '33.33')).toBe(332n);
    expect(commissionMinor(100n, '100.00')).toBe(100n);
    expect(commissionMinor(12345n, '0.00')).toBe(0n);
    expect(commissionMinor(9_000_000_000_000_000n, '99.99')).toBe(8_999_100_000_000_000n);
  });

  it('knows the currencies of its table only', () => {
    expect(isKnownCurrency('USD')).toBe(true);
    expect(isKnownCurrency('TON')).toBe(true);
    expect(isKnownCurrency('ZZZ')).toBe(false);
    expect(isKnownCurrency('constructor')).toBe(false);
  });
});
