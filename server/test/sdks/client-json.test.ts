// parseJsonExact (@waytrack/client): JSON.parse that keeps integers beyond 2^53 (Shopify's ids) as
// their exact decimal text. Engine-independent: SQLite pass only.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../../../packages/client/src/index.ts';
import { ENGINE } from '../engine.js';

/** What parseJsonExact must give for JSON.stringify(value): unsafe integers written as integers become their text. */
function expectedOf(value: unknown): unknown {
  if (typeof value === 'number') {
    const text = JSON.stringify(value);
    return /^-?\d+$/.test(text) && !Number.isSafeInteger(value) ? text : JSON.parse(text);
  }
  if (Array.isArray(value)) return value.map(expectedOf);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expectedOf(v)]));
  return value;
}

describe.skipIf(ENGINE === 'postgres')('parseJsonExact', () => {
  it("keeps Shopify's ids exact where JSON.parse rounds them to another order", () => {
    const body = '{"id":820982911946154508,"line_items":[{"id":12345678901234567890,"product_id":7513594,"price":"49.99"}]}';
    expect(String(JSON.parse(body).id)).toBe('820982911946154500'); // the defect: another order's id
    const order = parseJsonExact<{ id: string; line_items: Array<{ id: string; product_id: number; price: string }> }>(body);
    expect(String(order.id)).toBe('820982911946154508');
    expect(order.line_items[0]).toEqual({ id: '12345678901234567890', product_id: 7513594, price: '49.99' });
  });

  it('turns only integers beyond ±(2^53 − 1) into text; every other number stays a number', () => {
    expect(parseJsonExact('[9007199254740991,9007199254740992,-9007199254740991,-9007199254740992,0,-0,7]')).toEqual([
      9007199254740991,
      '9007199254740992',
      -9007199254740991,
      '-9007199254740992',
      0,
      -0,
      7,
    ]);
    // Written with a fraction or an exponent, a number was never meant as an exact integer.
    expect(parseJsonExact('[12345678901234567890.5,1e300,1.5E-7,12345678901234567890e0,49.99]')).toEqual([
      12345678901234567e3, 1e300, 1.5e-7, 12345678901234567e3, 49.99,
    ]);
    expect(parseJsonExact('12345678901234567890')).toBe('12345678901234567890');
    expect(parseJsonExact(' { "a" : -12345678901234567890 } ')).toEqual({ a: '-12345678901234567890' });
  });

  it('leaves strings alone, escapes included', () => {
    const text = String.raw`{"note":"id 12345678901234567890 \"quoted 98765432109876543210\" \\","12345678901234567890":1,"u":"\u0041\n"}`;
    expect(parseJsonExact(text)).toEqual(JSON.parse(text));
  });

  it('throws the SyntaxError JSON.parse throws for invalid JSON, big numbers or not', () => {
    for (const text of [
      '',
      '{',
      '{"id": 012345678901234567890}',
      '[12345678901234567890 1]',
      '{"a": "12345678901234567890}',
      'id: 12345678901234567890',
      '[1,]',
      '"\\q 12345678901234567890"',
    ]) {
      expect(() => parseJsonExact(text), text).toThrow(SyntaxError);
    }
  });

  it('equals JSON.parse on any JSON, except that unsafe integers are exact text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(parseJsonExact(text)).toEqual(expectedOf(JSON.parse(text)));
        expect(parseJsonExact(JSON.stringify(value, null, 2))).toEqual(expectedOf(JSON.parse(text)));
      }),
      { numRuns: 300 },
    );
  });

  it('gives any integer as written: a number when a double holds it exactly, its exact text otherwise', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (n) => {
        const { id } = parseJsonExact<{ id: unknown }>(`{"id":${n}}`);
        expect(String(id)).toBe(String(n));
        expect(typeof id).toBe(
          n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? 'number' : 'string',
        );
      }),
      { numRuns: 300 },
    );
  });

  it('reads a large order payload (a megabyte of line items) exactly', () => {
    const items = Array.from(
      { length: 20_000 },
      (_, i) => `{"id":${12345678901234567890n + BigInt(i)},"title":"Item \\"${i}\\"","price":"9.99"}`,
    );
    const text = `{"id":820982911946154508,"line_items":[${items.join(',')}]}`;
    expect(text.length).toBeGreaterThan(1_000_000);
    const order = parseJsonExact<{ line_items: Array<{ id: string }> }>(text);
    expect(order.line_items.at(-1)?.id).toBe(String(12345678901234567890n + 19_999n));
  });
});
