// The dashboard's CSV of a table (dashboard/src/csv.ts; api.md §11 "Every table downloads as CSV").
import { describe, expect, it } from 'vitest';
import { toCsv } from '../../../dashboard/src/csv.js';

describe('dashboard CSV', () => {
  const columns = [
    { label: 'Campaign', value: (r: { name: string | null; spend: number }) => r.name },
    { label: 'Spend', value: (r: { name: string | null; spend: number }) => r.spend },
  ];

  it('writes a header and one CRLF line per row, numbers as given', () => {
    expect(toCsv(columns, [{ name: 'Summer', spend: 1234.5 }])).toBe('Campaign,Spend\r\nSummer,1234.5\r\n');
    expect(toCsv(columns, [])).toBe('Campaign,Spend\r\n');
  });

  it('quotes commas, quotes and line breaks (RFC 4180); null is an empty cell', () => {
    const csv = toCsv(columns, [
      { name: 'Sale, "big"', spend: 1 },
      { name: 'two\nlines', spend: 2 },
      { name: null, spend: 0 },
    ]);
    expect(csv).toBe('Campaign,Spend\r\n"Sale, ""big""",1\r\n"two\nlines",2\r\n,0\r\n');
  });

  it('neutralizes a text cell a spreadsheet would run as a formula', () => {
    for (const attack of ['=HYPERLINK("http://x")', '+1+1', '-2+3', '@SUM(A1)', '\tx']) {
      const line = toCsv(columns, [{ name: attack, spend: -5 }]).split('\r\n')[1] as string;
      expect(line.startsWith("'") || line.startsWith(`"'`)).toBe(true);
      // A negative number stays a number.
      expect(line.endsWith(',-5')).toBe(true);
    }
  });
});
