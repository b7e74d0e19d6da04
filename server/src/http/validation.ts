import { Ajv, type ErrorObject } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError, type ErrorCode, type ErrorReason } from './errors.js';

/**
 * Two Ajv instances: bodies are JSON and never coerced ("10" is not a number); query strings
 * and path parameters are text by nature and are parsed into their declared types.
 * `x-error-code` on a schema names the error code its violations get (e.g. invalid_fbclid).
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
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema) as ReturnType<FastifySchemaCompiler<object>>;

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

/** The one place where schema violations become API errors. */
export function fromSchemaErrors(errors: ErrorObject[], part: string | undefined): ApiError {
  const error = errors[0] as ErrorObject;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    const field = fieldPath(error.instancePath, String(params.missingProperty));
    return new ApiError('missing_required_field', `${field} is required`, { field, reason: 'required_field_missing' });
  }
  if (error.keyword === 'additionalProperties') {
    const field = fieldPath(error.instancePath, String(params.additionalProperty));
    return new ApiError('invalid_request', `${field} is not a known ${part === 'body' ? 'field' : 'parameter'}`, {
      field,
      reason: 'unknown_field',
    });
  }
  const field = fieldPath(error.instancePath);
  if (!field && error.keyword === 'type') {
    return new ApiError('invalid_request', 'The request body must be a JSON object', { reason: 'invalid_type' });
  }
  if (error.keyword === 'minLength' && error.data === '') {
    return new ApiError('missing_required_field', `${field} must not be empty`, { field, reason: 'required_field_missing' });
  }
  const code = ((error.parentSchema as Record<string, unknown> | undefined)?.['x-error-code'] as ErrorCode) ?? 'invalid_request';
  return new ApiError(code, describe(error, field), { field, reason: REASONS[error.keyword] ?? 'invalid_format' });
}

/**
 * Drops object properties that are null or the empty string before validation, so a required
 * field sent as null or "" is reported missing and an optional one is simply absent.
 */
export function dropEmptyValues(value: unknown): unknown {
  if (Array.isArray(value)) {
    for (const item of value) dropEmptyValues(item);
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const v = record[key];
      if (v === null || v === '') delete record[key];
      else dropEmptyValues(v);
    }
  }
  return value;
}
