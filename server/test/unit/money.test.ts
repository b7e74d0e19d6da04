import { describe, expect, it } from 'vitest';
import {
  averageMajor,
  currencyExponent,
  fromMinorUnits,
  moneyRatio,
  normalizeCurrency,
  ratio2,
  toMinorUnits,
} from '../../src/money.js';

describe('toMinorUnits', () => {
  it('converts USD amounts to cents exactly', () => {
    expect(toMinorUnits(19.99, 'USD')).toBe(1999);
    expect(toMinorUnits(0, 'USD')).toBe(0);
    expect(toMinorUnits(49.99, 'USD')).toBe(4999);
    expect(toMinorUnits(0.1, 'USD')).toBe(10);
    expect(toMinorUnits(1234567.89, 'USD')).toBe(123456789);
    expect(toMinorUnits(1e12, 'USD')).toBe(100_000_000_000_000);
  });

  it('rounds half-up on the decimal as written, not on its binary approximation', () => {
    // 1.005 is 1.00499999999999989… in binary; Math.round(1.005 * 100) gives 100.
    expect(toMinorUnits(1.005, 'USD')).toBe(101);
    expect(toMinorUnits(1.004, 'USD')).toBe(100);
    expect(toMinorUnits(2.675, 'USD')).toBe(268);
    expect(toMinorUnits(0.125, 'USD')).toBe(13);
    expect(toMinorUnits(0.0049, 'USD')).toBe(0);
    expect(toMinorUnits(0.005, 'USD')).toBe(1);
  });

  it('uses exponent 0 for JPY', () => {
    expect(currencyExponent('JPY')).toBe(0);
    expect(toMinorUnits(1234, 'JPY')).toBe(1234);
    expect(toMinorUnits(1234.5, 'JPY')).toBe(1235);
    expect(toMinorUnits(1234.49, 'JPY')).toBe(1234);
  });

  it('uses exponent 3 for KWD', () => {
    expect(currencyExponent('KWD')).toBe(3);
    expect(toMinorUnits(1.5, 'KWD')).toBe(1500);
    expect(toMinorUnits(12.345, 'KWD')).toBe(12345);
    expect(toMinorUnits(1.2345, 'KWD')).toBe(1235);
  });

  it('reads exponent notation (1e-7, 1e21)', () => {
    expect(String(1e-7)).toBe('1e-7');
    expect(toMinorUnits(1e-7, 'USD')).toBe(0);
    expect(toMinorUnits(5e-3, 'USD')).toBe(1);
    expect(toMinorUnits(1.5e-2, 'USD')).toBe(2);
    expect(toMinorUnits(1e21, 'JPY')).toBe(1e21);
  });

  it('rejects negative and non-finite numbers', () => {
    expect(() => toMinorUnits(-1, 'USD')).toThrow(RangeError);
    expect(() => toMinorUnits(Number.NaN, 'USD')).toThrow(RangeError);
    expect(() => toMinorUnits(Number.POSITIVE_INFINITY, 'USD')).toThrow(RangeError);
  });
});

describe('fromMinorUnits', () => {
  it('produces the exact decimal in major units', () => {
    expect(fromMinorUnits(1999, 'USD')).toBe(19.99);
    expect(fromMinorUnits(101, 'USD')).toBe(1.01);
    expect(fromMinorUnits(1234, 'JPY')).toBe(1234);
    expect(fromMinorUnits(12345, 'KWD')).toBe(12.345);
    expect(fromMinorUnits(0, 'USD')).toBe(0);
  });

  it('sums 0.1 + 0.2 to exactly 0.3 through minor units', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    const sum = toMinorUnits(0.1, 'USD') + toMinorUnits(0.2, 'USD');
    expect(sum).toBe(30);
    expect(fromMinorUnits(sum, 'USD')).toBe(0.3);
  });

  it('sums many small amounts without drift', () => {
    let minor = 0;
    for (let i = 0; i < 1000; i++) minor += toMinorUnits(0.01, 'USD');
    expect(fromMinorUnits(minor, 'USD')).toBe(10);
  });

  it('round-trips every cent value of 0.00–9.99', () => {
    for (let cents = 0; cents < 1000; cents++) {
      const major = fromMinorUnits(cents, 'USD');
      expect(toMinorUnits(major, 'USD')).toBe(cents);
    }
  });
});

describe('ratio2', () => {
  it('divides and rounds half-up to 2 decimals', () => {
    expect(ratio2(1, 3)).toBe(0.33);
    expect(ratio2(2, 3)).toBe(0.67);
    expect(ratio2(1, 8)).toBe(0.13); // 0.125 → 0.13
    expect(ratio2(1, 2)).toBe(0.5);
    expect(ratio2(10, 4)).toBe(2.5);
    expect(ratio2(300, 100)).toBe(3);
  });

  it('is 0 when the denominator is 0', () => {
    expect(ratio2(5, 0)).toBe(0);
    expect(ratio2(0, 0)).toBe(0);
  });

  it('accepts bigints', () => {
    expect(ratio2(1n, 3n)).toBe(0.33);
  });
});

describe('averageMajor', () => {
  it('averages minor units into major units with 2 decimals', () => {
    expect(averageMajor(1000, 3, 'USD')).toBe(3.33); // $10.00 / 3
    expect(averageMajor(30, 2, 'USD')).toBe(0.15); // ($0.10 + $0.20) / 2
    expect(averageMajor(1999, 1, 'USD')).toBe(19.99);
    expect(averageMajor(1000, 3, 'JPY')).toBe(333.33);
    expect(averageMajor(1500, 2, 'KWD')).toBe(0.75);
  });

  it('is 0 when there are no items', () => {
    expect(averageMajor(0, 0, 'USD')).toBe(0);
    expect(averageMajor(1234, 0, 'USD')).toBe(0);
  });
});

describe('moneyRatio', () => {
  it('is null without a denominator and a 2-decimal ratio otherwise', () => {
    expect(moneyRatio(100, 0)).toBeNull();
    expect(moneyRatio(1000, 300)).toBe(3.33);
  });
});

describe('normalizeCurrency', () => {
  it('upper-cases known ISO 4217 codes', () => {
    expect(normalizeCurrency('usd')).toBe('USD');
    expect(normalizeCurrency('Eur')).toBe('EUR');
    expect(normalizeCurrency(' jpy ')).toBe('JPY');
    expect(normalizeCurrency('KWD')).toBe('KWD');
  });

  it('rejects unknown or malformed codes', () => {
    expect(normalizeCurrency('XYZ')).toBeNull();
    expect(normalizeCurrency('ABC')).toBeNull();
    expect(normalizeCurrency('US')).toBeNull();
    expect(normalizeCurrency('USDD')).toBeNull();
    expect(normalizeCurrency('')).toBeNull();
    expect(normalizeCurrency('U$D')).toBeNull();
  });
});
