import fc from 'fast-check';
import { formatAmount, parseAmount } from '../../src/domain/money';

const parses = (text: string) => {
  try {
    parseAmount(text);
    return true;
  } catch {
    return false;
  }
};

describe('money', () => {
  it.each([
    ['0', 0],
    ['0.1', 10],
    ['0.10', 10],
    ['90', 9000],
    ['90.00', 9000],
    ['900.5', 90050],
    ['0012.34', 1234],
    ['9999999999.99', 999999999999],
  ])('parses %p as %i minor units', (text, minor) => {
    expect(parseAmount(text)).toBe(minor);
  });

  it.each(['', '.5', '5.', '1.234', '-1', '+1', '1e2', '1,00', ' 1', '1 ', '12345678901', '٣', '0x10', 'NaN', 'Infinity'])(
    'rejects %p',
    (text) => {
      expect(() => parseAmount(text)).toThrow(RangeError);
    },
  );

  it.each([
    [0, '0.00'],
    [5, '0.05'],
    [90000, '900.00'],
    [999999999999, '9999999999.99'],
  ])('formats %i as %p', (minor, text) => {
    expect(formatAmount(minor)).toBe(text);
  });

  it.each([-1, 0.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1])('refuses to format %p', (minor) => {
    expect(() => formatAmount(minor)).toThrow(RangeError);
  });

  const minorUnits = fc.integer({ min: 0, max: 999_999_999_999 });

  it('property: formatting then parsing gives back the same minor units', () => {
    fc.assert(fc.property(minorUnits, (minor) => parseAmount(formatAmount(minor)) === minor));
  });

  it('property: any 1-10 digit amount with 0-2 decimals parses to the value its digits say', () => {
    const amountText = fc
      .tuple(fc.stringMatching(/^\d{1,10}$/), fc.stringMatching(/^\d{0,2}$/))
      .map(([whole, decimals]) => ({ text: decimals ? `${whole}.${decimals}` : whole, whole, decimals }));
    fc.assert(
      fc.property(amountText, ({ text, whole, decimals }) => {
        const expected = BigInt(whole) * 100n + BigInt(decimals.padEnd(2, '0') || '0');
        return BigInt(parseAmount(text)) === expected && formatAmount(parseAmount(text)) === formatAmount(Number(expected));
      }),
    );
  });

  it('property: subtracting amounts in minor units is exact where floating point is not', () => {
    fc.assert(
      fc.property(minorUnits, minorUnits, (a, b) => {
        const [high, low] = a >= b ? [a, b] : [b, a];
        return parseAmount(formatAmount(high - low)) + low === high;
      }),
    );
  });

  it('property: any string that is not a plain decimal amount is rejected', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        fc.pre(!/^\d{1,10}(\.\d{1,2})?$/.test(text));
        return !parses(text);
      }),
    );
  });
});
