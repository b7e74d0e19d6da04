import fc from 'fast-check';

/**
 * Schema → fast-check arbitrary, for the JSON Schema subset the OpenAPI document uses
 * (object/properties/required/additionalProperties, string with pattern/format/length/enum,
 * number/integer with bounds, array, anyOf/oneOf, const, enum, nullable and type lists), plus
 * the nasty values and mutations the fuzzer throws at every operation.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema is untyped JSON
export type Schema = Record<string, any>;

/** Values that make a valid request by name (ids that exist, ISO codes, URLs): the schema alone allows far more. */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** A string of `length` characters, cheap however long (a random prefix, then one repeated character). */
const stringOfLength = (length: number): fc.Arbitrary<string> =>
  fc
    .tuple(fc.string({ maxLength: Math.min(length, 8), unit: 'grapheme-ascii' }), fc.constantFrom('a', 'é', '0', ' ', '-'))
    .map(([prefix, fill]) => (prefix + fill.repeat(length)).slice(0, length));

const FORMATS: Record<string, fc.Arbitrary<string>> = {
  'date-time': fc
    .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  date: fc
    .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10)),
  uri: fc.webUrl(),
  url: fc.webUrl(),
  email: fc.emailAddress(),
  ipv4: fc.ipV4(),
  ipv6: fc.ipV6(),
  uuid: fc.uuid(),
  hostname: fc.domain(),
};

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const min: number = schema.minLength ?? 0;
  const max: number = schema.maxLength ?? Math.max(min, 40);
  const fits = (s: string) => s.length >= min && s.length <= max;
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format) return format.filter(fits);
  if (typeof schema.pattern === 'string') {
    // The document's patterns are anchored; stringMatching honours the anchors.
    return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter(fits);
  }
  const boundaries = [min, max].filter((n, i, all) => all.indexOf(n) === i && n <= 100_000);
  return fc.oneof(
    { weight: 6, arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, Math.max(min, 24)), unit: 'grapheme' }) },
    { weight: 2, arbitrary: fc.constantFrom(...boundaries).chain(stringOfLength) },
  );
}

function numberArbitrary(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  let min: number = typeof schema.minimum === 'number' ? schema.minimum : -MAX_SAFE;
  let max: number = typeof schema.maximum === 'number' ? schema.maximum : MAX_SAFE;
  if (typeof schema.exclusiveMinimum === 'number') min = schema.exclusiveMinimum + (integer ? 1 : Number.EPSILON);
  if (typeof schema.exclusiveMaximum === 'number') max = schema.exclusiveMaximum - (integer ? 1 : Number.EPSILON);
  const edges = fc.constantFrom(...[min, max, Math.min(max, Math.max(min, 0)), Math.min(max, Math.max(min, 1))]);
  if (integer) {
    return fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: Math.max(min, -MAX_SAFE), max: Math.min(max, MAX_SAFE) }) },
      { weight: 1, arbitrary: edges },
    );
  }
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
    },
    // Money-like values with two decimals, the common case.
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 10_000_000 }).map((n) => Math.min(max, Math.max(min, n / 100))) },
    { weight: 1, arbitrary: edges },
  );
}

function typesOf(schema: Schema): string[] | undefined {
  const types = Array.isArray(schema.type) ? [...schema.type] : typeof schema.type === 'string' ? [schema.type] : undefined;
  if (types && schema.nullable === true) types.push('null');
  return types;
}

/** A value valid against `schema` (hints by property name take precedence most of the time). */
export function arbitraryFor(schema: Schema, hints: Hints = {}, depth = 0): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) {
    const values = schema.nullable === true ? [...schema.enum, null] : schema.enum;
    return fc.constantFrom(...values);
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) {
    // oneOf alternatives of the document are disjoint (a value and null, or literals).
    return fc.oneof(...alternatives.map((s: Schema) => arbitraryFor({ ...s }, hints, depth + 1)));
  }
  const types = typesOf(schema);
  if (types && types.length > 1)
    return fc.oneof(...types.map((type) => arbitraryFor({ ...schema, type, nullable: false }, hints, depth)));
  switch (types?.[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return numberArbitrary(schema, true);
    case 'number':
      return numberArbitrary(schema, false);
    case 'array': {
      const item = arbitraryFor(schema.items ?? {}, hints, depth + 1);
      const minLength: number = schema.minItems ?? 0;
      const maxLength: number = Math.min(schema.maxItems ?? 4, Math.max(minLength, 4));
      return fc.array(item, { minLength, maxLength });
    }
    case 'object':
      return objectArbitrary(schema, hints, depth);
    default:
      return depth > 3 ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  }
}

function objectArbitrary(schema: Schema, hints: Hints, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) {
    const fromSchema = arbitraryFor(property, hints, depth + 1);
    const hint = hints[name];
    model[name] = hint ? fc.oneof({ weight: 5, arbitrary: hint }, { weight: 1, arbitrary: fromSchema }) : fromSchema;
  }
  const required = (schema.required ?? []) as string[];
  for (const key of required) if (!(key in model)) model[key] = fc.jsonValue({ maxDepth: 1 });
  return fc.record(model, { requiredKeys: required });
}

// --- Nasty values ----------------------------------------------------------------------------

export const NASTY_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\udbff\udfff',
  '😀👨‍👩‍👧‍👦',
  '\u202eevil',
  '\ufeff',
  'null',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  '__proto__',
  'constructor',
  'toString',
  "'; DROP TABLE clicks; --",
  '" OR 1=1 --',
  '../../../../etc/passwd',
  '%00',
  '%ZZ',
  '\r\nSet-Cookie: x=1',
  '<script>alert(1)</script>',
  '$' + '{jndi:ldap://x}', // a log4shell probe, spelled so it is not read as a template
  '{{7*7}}',
  'Ω≈ç√∫˜µ≤≥÷',
  'ﾟ･✿ヾ╲(｡◕‿◕｡)╱✿･ﾟ',
  'ĀĂĄ'.repeat(300),
  'st_00000000000000000000000000',
  'clk_00000000000000000000000000',
  'conv_00000000000000000000000000',
  'USD',
  'https://example.com/',
  'javascript:alert(1)',
  '2026-02-30',
  '9999-12-31T23:59:59Z',
  '1970-01-01T00:00:00Z',
];

/** Strings that stress length: the boundaries around every limit the document uses, and far beyond. */
const HUGE_LENGTHS = [64, 65, 101, 256, 257, 501, 1025, 2049, 70_000];

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...HUGE_LENGTHS).chain(stringOfLength) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom('\ud800', '\udfff', 'a', '\u0000', '\\', '"'), maxLength: 12 }) },
);

/** JSON text of `value` wrapped `depth` times in arrays or objects (as text: no recursion). */
export function nestedText(value: unknown, depth: number, asObject: boolean): string {
  return (asObject ? '{"a":' : '[').repeat(depth) + JSON.stringify(value) + (asObject ? '}' : ']').repeat(depth);
}

/** Values just outside a schema's bounds (or of a neighbouring kind), per its keywords. */
export function outOfBounds(schema: Schema): unknown[] {
  const out: unknown[] = [];
  if (typeof schema.maxLength === 'number') out.push('a'.repeat(schema.maxLength + 1));
  if (typeof schema.minLength === 'number' && schema.minLength > 0) out.push('a'.repeat(schema.minLength - 1));
  if (typeof schema.maximum === 'number') out.push(schema.maximum + 1, schema.maximum * 10 + 0.5);
  if (typeof schema.minimum === 'number') out.push(schema.minimum - 1, schema.minimum - 0.001);
  if (schema.type === 'integer') out.push(1.5, 2 ** 63, -0.5);
  if (typeof schema.maxItems === 'number') out.push(Array.from({ length: schema.maxItems + 1 }, () => ({})));
  if (typeof schema.minItems === 'number' && schema.minItems > 0) out.push([]);
  if (Array.isArray(schema.enum)) out.push(`${String(schema.enum[0])}x`, String(schema.enum[0]).toUpperCase(), ' ');
  if (typeof schema.pattern === 'string') out.push('!!', 'a b', '\u00e9');
  out.push(1e308, -1, '', 'x'.repeat(100_000));
  return out;
}

/** Values of a JSON type other than `value`'s. */
export function otherTypes(value: unknown): unknown[] {
  const out: unknown[] = [];
  if (typeof value !== 'string') out.push('10', 'true', 'x');
  if (typeof value !== 'number') out.push(0, -1, 1.5, 1e308, 2 ** 53 + 1);
  if (typeof value !== 'boolean') out.push(true, false);
  if (value !== null) out.push(null);
  if (!Array.isArray(value)) out.push([], [1], ['a', null]);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) out.push({}, { a: 1 });
  return out;
}

// --- Serialization -----------------------------------------------------------------------------

/** Percent-encodes a string, lone surrogates included (as the bytes of their WTF-8 form, which UTF-8 decoders refuse). */
export function percentEncode(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    } else out += encodeURIComponent(ch);
  }
  return out;
}

/** JSON text with the key `key` repeated: first `first`, then the real value (or the other way round). */
export function withDuplicateKey(body: Record<string, unknown>, key: string, first: unknown): string {
  const rest = JSON.stringify(body);
  const lead = `${JSON.stringify(key)}:${JSON.stringify(first)}`;
  return rest === '{}' ? `{${lead}}` : `{${lead},${rest.slice(1)}`;
}

/** Broken JSON texts, derived from a valid one. */
export function brokenJson(valid: string): string[] {
  return [
    valid.slice(0, Math.floor(valid.length / 2)),
    valid.slice(0, -1),
    `${valid}}`,
    `${valid},`,
    `${valid} x`,
    `\ufeff${valid}`,
    valid.replace(/"/g, "'"),
    valid.replace(/}$/, ',}'),
    `${valid}\u0000`,
    `/* c */${valid}`,
    '',
    ' ',
    'null',
    '[]',
    '"string"',
    '42',
    'true',
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"a":NaN}',
    '{"a":Infinity}',
    '{"a":1e999999}',
    '{"a":-}',
    '{"a":"\\u12"}',
    '{"a":"\\ud800"}',
    '{"\\udc00":1}',
    '{"a":"\u0000"}',
    `{"a":${'['.repeat(50_000)}`,
    `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
  ];
}
