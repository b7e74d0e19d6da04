import { describe, expect, it } from 'vitest';
import { convertMinor, crossRate, divideHalfEven, FxFileError, parseRatesCsv } from '../../src/fx/rates.js';

function problems(csv: string): string[] {
  try {
    parseRatesCsv(csv);
  } catch (error) {
    if (error instanceof FxFileError) return error.problems;
    throw error;
  }
  throw new Error('expected the file to be refused');
}

describe('rates file', () => {
  it('reads a header in any column order, skips blank lines, upper-cases codes and keeps rates exact', () => {
    const rates = parseRatesCsv('\uFEFFcurrency,rate,date,base\r\nusd,1.0843,2026-11-20,eur\r\n\r\nJPY,163.10,2026-11-20,EUR\n');
    expect(rates).toEqual([
      { date: '2026-11-20', base: 'EUR', currency: 'USD', rate: '1.0843' },
      { date: '2026-11-20', base: 'EUR', currency: 'JPY', rate: '163.1' },
    ]);
  });

  it('checks every line and names each problem with its line number', () => {
    const found = problems(
      [
        'date,base,currency,rate',
        '2026-02-30,EUR,USD,1.1',
        '2026-11-20,EUR,XXQ,1.1',
        '2026-11-20,EUR,USD,-1',
        '2026-11-20,EUR,USD,0',
        '2026-11-20,EUR,EUR,1',
        '2026-11-20,USD,GBP,0.8', // line 7
        '2026-11-20,EUR,GBP',
        '2026-11-21,EUR,USD,1.1',
        '2026-11-21,EUR,USD,1.2',
        '2026-11-21,EUR,USD,1.10',
      ].join('\n'),
    );
    expect(found).toEqual([
      'line 2: date "2026-02-30" is not a calendar date YYYY-MM-DD',
      'line 3: currency "XXQ" is not an ISO 4217 currency code',
      expect.stringMatching(/^line 4: rate "-1" must be a positive decimal/),
      expect.stringMatching(/^line 5: rate "0" must be a positive decimal/),
      'line 6: currency EUR is the base itself (its rate is 1)',
      'line 7: base USD differs from EUR on the lines before',
      'line 8: expected 4 comma-separated values, got 3',
      'line 10: USD on 2026-11-21 is 1.2 here but 1.1 on line 9',
    ]);
  });

  it('refuses a missing or wrong header and an empty file', () => {
    expect(problems('')[0]).toContain('empty');
    expect(problems('day,base,currency,rate\n2026-11-20,EUR,USD,1')[0]).toMatch(/^line 1: the header must name/);
    expect(problems('date,base,currency,rate\n')[0]).toContain('no rates');
  });
});

describe('exact conversion', () => {
  it('rounds half to even', () => {
    expect(divideHalfEven(5n, 2n)).toBe(2n);
    expect(divideHalfEven(7n, 2n)).toBe(4n);
    expect(divideHalfEven(11n, 4n)).toBe(3n);
  });

  it('converts through the base with integers only', () => {
    // 100.00 USD at EUR→USD 1.25: 80.00 EUR
    expect(convertMinor(10_000, 'USD', '1.25', 'EUR', '1')).toBe(8_000);
    // 0.10 EUR → USD at 1.25 = 0.125 → 0.12 (half to even)
    expect(convertMinor(10, 'EUR', '1', 'USD', '1.25')).toBe(12);
    // 0.30 EUR → 0.375 → 0.38
    expect(convertMinor(30, 'EUR', '1', 'USD', '1.25')).toBe(38);
    // JPY has no minor digits, KWD three: 1000 JPY at 160 JPY/EUR and 0.33 KWD/EUR = 2.0625 KWD → 2.062
    expect(convertMinor(1000, 'JPY', '160', 'KWD', '0.33')).toBe(2062);
    // cross rate between two non-base currencies: 10.00 GBP (0.8/EUR) → USD (1.1/EUR) = 13.75
    expect(convertMinor(1000, 'GBP', '0.8', 'USD', '1.1')).toBe(1375);
  });

  it('shows the cross rate to at most 10 decimals', () => {
    expect(crossRate('1.0843', '1')).toBe('0.9222539887');
    expect(crossRate('0.8', '1.1')).toBe('1.375');
  });
});
