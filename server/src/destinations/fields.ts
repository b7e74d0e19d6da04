import { ApiError, fieldError } from '../http/errors.js';

/** Field checks for the destinations' PUT bodies (each adapter's config schema uses them). */
export function text(
  body: Record<string, unknown>,
  field: string,
  options: { pattern?: RegExp; max?: number; required: boolean; path?: string; hint?: string; previous?: string },
): string | undefined {
  const path = options.path ?? field;
  const value = body[field];
  if (value === undefined || value === null || value === '') {
    if (options.previous !== undefined) return options.previous;
    if (!options.required) return undefined;
    throw new ApiError('missing_required_field', `${path} is required`, { field: path, reason: 'required_field_missing' });
  }
  if (typeof value !== 'string') throw fieldError('invalid_request', path, 'invalid_type', `${path} must be a string`);
  if (value.length > (options.max ?? 500)) {
    throw fieldError('invalid_request', path, 'out_of_range', `${path} must be at most ${options.max ?? 500} characters`);
  }
  if (options.pattern && !options.pattern.test(value)) {
    throw fieldError(
      'invalid_request',
      path,
      'invalid_format',
      `${path} has an invalid format${options.hint ? `: ${options.hint}` : ''}`,
    );
  }
  return value;
}

export function object(body: Record<string, unknown>, field: string, required: boolean): Record<string, unknown> | undefined {
  const value = body[field];
  if (value === undefined || value === null) {
    if (!required) return undefined;
    throw new ApiError('missing_required_field', `${field} is required`, { field, reason: 'required_field_missing' });
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw fieldError('invalid_request', field, 'invalid_type', `${field} must be an object`);
  }
  return value as Record<string, unknown>;
}

/** Refuses fields the destination does not have (a typo must not silently drop a setting). */
export function onlyFields(body: Record<string, unknown>, allowed: string[], path = ''): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      const field = path ? `${path}.${key}` : key;
      throw fieldError(
        'invalid_request',
        field,
        'unknown_field',
        `Unknown field ${field}; this destination takes ${allowed.join(', ')}`,
      );
    }
  }
}

/** A refund event's name (`refundEvent` of meta and tiktok, api.md §9): an event name, custom or standard. */
export const REFUND_EVENT = {
  pattern: /^[A-Za-z][A-Za-z0-9_]{0,49}$/,
  max: 50,
  hint: 'an event name: a letter, then letters, digits or _ (at most 50)',
};
