// The one JSON reader of request bodies (server/src/http/json-reader.ts), shared by the API and the
// shop webhooks, and the one decimal parser of money (server/src/money.ts).
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { exactNumber, readJson } from '../../src/http/json-reader.js';
import { parseDecimal, toMinorUnits } from '../../src/money.js';

const read = (text: string | Buffer) => readJson(Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'));

function reasonOf(body: Buffer | string): string | undefined {
  try {
    read(body);
    return undefined;
  } catch (error) {
    return error instanceof ApiError ? String(error.details?.reason) : 'not an ApiError';
  }
}

describe('readJson', () => {
  it('keeps the exact text of a number a double cannot hold, and only of those', () => {
    const value = read('{"id": 820982911946154508, "items": [9007199254740993, 2], "v": 1.00049999999999999999, "n": 19.99}') as {
      id: number;
      items: number[];
      v: number;
      n: number;
    };
    expect(exactNumber(value, 'id')).toBe('820982911946154508');
    expect(exactNumber(value.items, 0)).toBe('9007199254740993');
    expect(exactNumber(value.items, 1)).toBeUndefined();
    expect(exactNumber(value, 'v')).toBe('1.00049999999999999999');
    expect(exactNumber(value, 'n')).toBeUndefined();
    // Numbers stay numbers (what the schemas validate).
    expect(typeof value.id).toBe('number');
    // A value changed since it was read is not vouched for.
    value.v = 2;
    expect(exactNumber(value, 'v')).toBeUndefined();
  });

  it('reads like JSON.parse otherwise: duplicate keys (the last wins), strings that look like numbers', () => {
    expect(read('{"a": 12345678901234567890, "a": 1}')).toEqual({ a: 1 });
    expect(read('{"note": "x,12345678901234567890"}')).toEqual({ note: 'x,12345678901234567890' });
    expect(read('[1e400]')).toEqual([Number.POSITIVE_INFINITY]);
  });

  it('skips a byte order mark; refuses what is not UTF-8, not JSON, or too deep', () => {
    expect(read(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]))).toEqual({ a: 1 });
    expect(reasonOf(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xf6, 0x22, 0x7d]))).toBe('invalid_unicode');
    expect(reasonOf('{"a":')).toBe('malformed_json');
    expect(reasonOf('{"a": 12345678901234567890,')).toBe('malformed_json');
    expect(reasonOf('')).toBe('malformed_json');
    expect(reasonOf(`${'['.repeat(65)}${']'.repeat(65)}`)).toBe('too_deep');
    expect(reasonOf(`${'['.repeat(20_000)}12345678901234567890${']'.repeat(20_000)}`)).toBe('too_deep');
  });
});

describe('the decimal parser of money', () => {
  it('reads decimals as written and rounds half away from zero in the currency’s minor units', () => {
    expect(parseDecimal('-10.50')).toEqual({ negative: true, digits: 1050n, scale: 2 });
    expect(parseDecimal('1e3')).toEqual({ negative: false, digits: 1n, scale: -3 });
    expect(parseDecimal('12,50')).toBeNull();
    expect(toMinorUnits('999999999.99949999', 'KWD')).toBe(999_999_999_999);
    expect(toMinorUnits(Number('999999999.99949999'), 'KWD')).toBe(1_000_000_000_000); // the double is …9995
    expect(toMinorUnits('1.005', 'USD')).toBe(101);
    expect(toMinorUnits(19.99, 'USD')).toBe(1999);
    expect(toMinorUnits('0.5', 'JPY')).toBe(1);
    expect(() => toMinorUnits('-1', 'USD')).toThrow(RangeError);
  });
});
