import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError, type ErrorCode, type ErrorReason } from './errors.js';

/**
 * Two Ajv instances: bodies are JSON and never coerced ("10" is not a number); query strings
 * and path parameters are text by nature and are parsed into their declared types.
 * `x-error-code` on a schema names the error code its violations get (e.g. invalid_fbclid);
 * `x-error-reason` and `x-error-message` the reason and the words (after the field's name).
 * Formats are asserted (`uri`, `ipv4`, `ipv6`, `hostname`, `date`): the validator compiles the
 * schema the OpenAPI document shows, so the two refuse the same requests. `x-rules` names what
 * the domain checks beyond JSON Schema (http/openapi.ts serverRules); it validates nothing.
 */
function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    verbose: true,
    strict: false,
  });
  ajv.addKeyword({ keyword: 'x-error-code', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-error-reason', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-error-message', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-rules', schemaType: 'array' });
  addFormats.default(ajv, ['uri', 'ipv4', 'ipv6', 'hostname', 'date', 'date-time', 'email']);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

/** A body schema marked `x-raw-body` only documents a body its route reads as bytes (shop webhooks): never validated. */
const acceptRawBody = (() => true) as unknown as ReturnType<FastifySchemaCompiler<object>>;

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  httpPart === 'body' && (schema as { 'x-raw-body'?: boolean })['x-raw-body'] === true
    ? acceptRawBody
    : ((httpPart === 'body' ? bodyAjv : textAjv).compile(schema) as ReturnType<FastifySchemaCompiler<object>>);

/** `/products/2/quantity` + `name` → `products[2].quantity.name` */
function fieldPath(pointer: string, child?: string): string {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) segments.push(child);
  return segments.reduce((path, s) => (/^\d+$/.test(s) ? `${path}[${s}]` : path ? `${path}.${s}` : s), '');
}

const REASONS: Record<string, ErrorReason> = {
  type: 'invalid_type',
  pattern: 'invalid_format',
  format: 'invalid_format',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  minLength: 'out_of_range',
  maxLength: 'out_of_range',
  minItems: 'out_of_range',
  maxItems: 'out_of_range',
  multipleOf: 'invalid_format',
  enum: 'unknown_value',
  const: 'unknown_value',
  anyOf: 'invalid_type',
  oneOf: 'invalid_type',
};

function describe(error: ErrorObject, field: string): string {
  const p = error.params as Record<string, unknown>;
  const subject = field || 'request body';
  switch (error.keyword) {
    case 'type':
      return `${subject} must be ${p.type === 'object' ? 'an object' : p.type === 'array' ? 'an array' : `a ${p.type}`}`;
    case 'pattern':
      // Dates are the one pattern a person writes by hand often enough to need the format spelled out.
      if (String(p.pattern).startsWith(DATE_PATTERN_START)) return `${subject} must be a date in YYYY-MM-DD format`;
      return `${subject} has an invalid format`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${subject} must be ${p.comparison} ${p.limit}`;
    case 'minLength':
      return `${subject} must be at least ${p.limit} characters`;
    case 'maxLength':
      return `${subject} must be at most ${p.limit} characters`;
    case 'minItems':
      return `${subject} must have at least ${p.limit} items`;
    case 'maxItems':
      return `${subject} must have at most ${p.limit} items`;
    case 'enum':
      return `${subject} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    default:
      return `${subject} ${error.message ?? 'is invalid'}`;
  }
}

/** How the date patterns of the schemas begin (DateQuery, an ad spend entry's `date`). */
const DATE_PATTERN_START = '^\\d{4}-';

/** Edit distance (insertions, deletions, substitutions) between two short strings. */
function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * The known property a client most likely meant by an unknown one, or undefined when none is
 * close: the same name in another case or spelled with `_`/`-` (`timeZone`, `attribution_window_days`),
 * else the nearest by edit distance, at most 1 for names up to 5 characters, 2 up to 8, else 3.
 */
export function closestName(unknown: string, known: string[]): string | undefined {
  const squash = (name: string) => name.toLowerCase().replace(/[_-]/g, '');
  const same = known.find((name) => squash(name) === squash(unknown));
  if (same !== undefined) return same;
  const limit = unknown.length <= 5 ? 1 : unknown.length <= 8 ? 2 : 3;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = levenshtein(squash(unknown), squash(name));
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** The one place where schema violations become API errors. */
export function fromSchemaErrors(errors: ErrorObject[], part: string | undefined): ApiError {
  const error = errors[0] as ErrorObject;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    const field = fieldPath(error.instancePath, String(params.missingProperty));
    return new ApiError('missing_required_field', `${field} is required`, { field, reason: 'required_field_missing' });
  }
  if (error.keyword === 'additionalProperties') {
    const unknown = String(params.additionalProperty);
    const field = fieldPath(error.instancePath, unknown);
    const kind = part === 'body' ? 'field' : 'parameter';
    const known = Object.keys(((error.parentSchema as { properties?: object } | undefined)?.properties ?? {}) as object);
    const closest = closestName(unknown, known);
    if (closest === undefined) {
      return new ApiError('invalid_request', `Unknown ${kind} ${field}`, { field, reason: 'unknown_field' });
    }
    const suggestion = fieldPath(error.instancePath, closest);
    return new ApiError('invalid_request', `Unknown ${kind} ${field}: did you mean ${suggestion}?`, {
      field,
      reason: 'unknown_field',
      suggestion,
    });
  }
  const field = fieldPath(error.instancePath);
  if (!field && error.keyword === 'type') {
    return new ApiError('invalid_request', 'The request body must be a JSON object', { reason: 'invalid_type' });
  }
  if (error.keyword === 'minLength' && error.data === '') {
    return new ApiError('missing_required_field', `${field} must not be empty`, { field, reason: 'required_field_missing' });
  }
  const parent = (error.parentSchema ?? {}) as Record<string, unknown>;
  // A format inside an anyOf (ipv4 or ipv6) is reported on the alternative: the words are on the property.
  const owner =
    (error.keyword === 'format' || error.keyword === 'anyOf') && !parent['x-error-message'] ? ownerOf(errors) : parent;
  const code = (parent['x-error-code'] as ErrorCode) ?? 'invalid_request';
  const words = owner?.['x-error-message'] as string | undefined;
  const formatLike = ['pattern', 'format', 'anyOf'].includes(error.keyword);
  const reason = (formatLike && (owner?.['x-error-reason'] as ErrorReason)) || REASONS[error.keyword] || 'invalid_format';
  const message = formatLike && words ? `${field} ${words}` : describe(error, field);
  return new ApiError(code, message, { field, reason });
}

/** The schema of the property an anyOf error is about (Ajv reports the anyOf last, on the property). */
function ownerOf(errors: ErrorObject[]): Record<string, unknown> | undefined {
  const anyOf = errors.find((e) => e.keyword === 'anyOf');
  return anyOf?.parentSchema as Record<string, unknown> | undefined;
}

/** Nesting no request needs (the deepest body, a conversion's products, is 3 levels deep). */
export const MAX_DEPTH = 32;

/**
 * Prepares a parsed body or query for validation, in one walk without recursion (a body nested
 * 10,000 deep must not overflow the stack):
 * - refuses nesting deeper than MAX_DEPTH (400 invalid_request, reason too_deep);
 * - refuses strings that are not well-formed UTF-16 — a lone surrogate (`"\ud800"`) cannot be
 *   stored or sent to Meta as text, and would come back as U+FFFD (reason invalid_unicode,
 *   `details.field` naming it), in keys too;
 * - refuses a NUL character (U+0000) in a string or key: PostgreSQL text cannot hold it (the
 *   insert failed with a 500), and SQLite must answer the same (reason invalid_format);
 * - refuses the keys that pollute prototypes where objects are merged (`__proto__`, and
 *   `prototype` inside `constructor`) by name (reason reserved_key), not as "not valid JSON";
 * - drops object properties that are null or the empty string (unless `keepNulls`, for PATCH,
 *   where null clears a field), so a required field sent as null or "" is reported missing and
 *   an optional one is simply absent — but not a property `schema` does not know where it
 *   refuses unknown ones (`additionalProperties: false`): a typo sent as null is still refused.
 */
export function prepareInput(value: unknown, options: { keepNulls?: boolean; query?: boolean; schema?: unknown } = {}): unknown {
  type Node = { properties?: Record<string, Node>; additionalProperties?: unknown; items?: Node } | undefined;
  const stack: Array<{ value: unknown; path: string; depth: number; schema: Node }> = [
    { value, path: '', depth: 0, schema: options.schema as Node },
  ];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const { value: current, path, depth, schema } = entry;
    if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current)) throw unicodeError(path);
      if (current.includes('\u0000')) throw nulError(path);
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_DEPTH) {
      throw new ApiError('invalid_request', `The request nests objects and arrays deeper than ${MAX_DEPTH} levels`, {
        ...(path && { field: path }),
        reason: 'too_deep',
      });
    }
    if (Array.isArray(current)) {
      current.forEach((item, i) => {
        stack.push({ value: item, path: `${path}[${i}]`, depth: depth + 1, schema: schema?.items });
      });
      continue;
    }
    const record = current as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const at = path ? `${path}.${key}` : key;
      if (LONE_SURROGATE.test(key)) throw unicodeError(at);
      if (key.includes('\u0000')) throw nulError(at);
      const v = record[key];
      if (key === '__proto__' || (key === 'constructor' && v !== null && typeof v === 'object' && 'prototype' in v)) {
        throw reservedKeyError(key === '__proto__' ? at : `${at}.prototype`);
      }
      // Query integers are coerced with Number(), which also reads "0x10" and "1e1": only digits are a count.
      if (options.query && INTEGER_QUERY.has(key) && typeof v === 'string' && !/^\d+$/.test(v)) {
        throw new ApiError('invalid_request', `${key} must be a whole number written in digits`, {
          field: key,
          reason: 'invalid_type',
        });
      }
      const known = schema?.properties?.[key];
      const unknownRefused = schema?.additionalProperties === false && known === undefined;
      if (!options.keepNulls && (v === null || v === '') && !unknownRefused) delete record[key];
      else stack.push({ value: v, path: at, depth: depth + 1, schema: known });
    }
  }
  return value;
}

/** Query parameters that are counts (the only integers a query string carries). */
const INTEGER_QUERY = new Set(['limit']);

/** In a `u` regular expression a surrogate pair is one code point: only a lone surrogate is category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

function nulError(field: string): ApiError {
  return new ApiError('invalid_request', `${field || 'The request'} contains a NUL character (U+0000), which text cannot hold`, {
    ...(field && { field }),
    reason: 'invalid_format',
  });
}

function reservedKeyError(field: string): ApiError {
  const key = field.slice(field.lastIndexOf('.') + 1);
  return new ApiError(
    'invalid_request',
    `${field}: "${key}" cannot be a field name (it would reach object prototypes); no request uses it`,
    { field, reason: 'reserved_key' },
  );
}

function unicodeError(field: string): ApiError {
  return new ApiError('invalid_request', `${field || 'The request'} is not valid Unicode text (a lone UTF-16 surrogate)`, {
    ...(field && { field }),
    reason: 'invalid_unicode',
  });
}

/**
 * A body schema's check for a value that is not a request's whole body (an event of a batch):
 * the same Ajv and the same error mapping as a route's body, so an event gets the error its own
 * endpoint would give. Compiled on first use.
 */
export function bodyCheck(schema: object): (value: unknown) => ApiError | undefined {
  let validate: ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };
  return (value) => {
    validate ??= bodyAjv.compile(schema);
    return validate(value) ? undefined : fromSchemaErrors(validate.errors ?? [], 'body');
  };
}
