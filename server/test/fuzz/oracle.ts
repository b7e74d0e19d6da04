import type { LightMyRequestResponse } from 'fastify';
import { ERROR_STATUS } from '../../src/http/errors.js';
import { declaredResponse, type Operation } from './operations.js';
import type { FuzzCase } from './requests.js';

/**
 * A known, reported gap between the document and the server: a schema-valid request the server
 * refuses because of a rule the schema does not state. Each one is a finding in the fuzzing
 * report (owner: the route schemas); the oracle tolerates exactly these and nothing broader.
 */
export interface KnownGap {
  operation: string;
  field: string | undefined;
  code: string;
  reason: string | undefined;
  why: string;
}

/** A status an operation answers that its document entry does not declare (a reported finding). */
export interface UndeclaredStatus {
  operation: string;
  status: number;
  why: string;
}

/** `entries[3].date` → `entries[].date`: a gap is about a field, whichever item it is in. */
const generic = (field: unknown) => (typeof field === 'string' ? field.replace(/\[\d+\]/g, '[]') : field);

/** Reasons that name one field at fault: the contract requires `details.field` with them. */
const FIELD_REASONS = new Set([
  'required_field_missing',
  'invalid_format',
  'out_of_range',
  'invalid_url',
  'expired',
  'unknown_value',
  'unknown_field',
]);
const FIELD_CODES = new Set(['missing_required_field', 'invalid_fbclid', 'invalid_currency']);

// biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON
type Json = any;

export interface Verdict {
  failure?: string;
  gap?: KnownGap;
  body?: Json;
}

/** Judges one response against the contract and the document. Returns the failure, if any. */
export function judge(
  op: Operation,
  c: FuzzCase,
  res: LightMyRequestResponse,
  gaps: readonly KnownGap[],
  undeclared: readonly UndeclaredStatus[],
): Verdict {
  const status = res.statusCode;
  if (status >= 500) return { failure: `${status}: a 5xx (no outage was injected)` };
  const requestId = res.headers['request-id'];
  if (typeof requestId !== 'string' || !requestId) return { failure: `${status}: no Request-Id header` };

  const validate = declaredResponse(op, status);
  if (validate === undefined) {
    const gap = undeclared.find((g) => g.operation === op.name && g.status === status);
    if (!gap) return { failure: `${status}: status not declared for ${op.name} in the document` };
  }
  let body: Json;
  if (validate !== null || status >= 400 || /json/.test(String(res.headers['content-type']))) {
    try {
      body = JSON.parse(res.body);
    } catch {
      return { failure: `${status}: body is not JSON: ${res.body.slice(0, 200)}` };
    }
  }
  if (validate && !validate(body)) {
    return { failure: `${status}: body does not match the declared schema: ${JSON.stringify(validate.errors).slice(0, 1500)}` };
  }
  if (body && typeof body === 'object' && 'meta' in body && body.meta?.requestId !== requestId) {
    return { failure: `${status}: meta.requestId ${body.meta?.requestId} is not the Request-Id header ${requestId}` };
  }

  if (status >= 400) {
    if (body?.success !== false || typeof body.error?.code !== 'string')
      return { failure: `${status}: not the error envelope`, body };
    const code: string = body.error.code;
    if (op.errorCodes.size && !op.errorCodes.has(code))
      return { failure: `${status}: code ${code} is not in the document's enum`, body };
    const expected = (ERROR_STATUS as Record<string, number>)[code];
    // 405 is the one status outside the code table: `not_found` for a method the path does not answer (docs/api.md).
    const methodNotAllowed = status === 405 && code === 'not_found' && typeof res.headers.allow === 'string';
    if (expected !== status && !methodNotAllowed) return { failure: `${status}: code ${code} belongs to HTTP ${expected}`, body };
    const details = body.error.details;
    if (
      status === 400 &&
      (FIELD_CODES.has(code) || FIELD_REASONS.has(details?.reason)) &&
      !(typeof details?.field === 'string')
    ) {
      return { failure: `400 ${code}/${details?.reason}: details.field missing`, body };
    }
    // The request had a problem the fuzzer put there on purpose: what a good client must get instead.
    if (op.secured && ['none', 'revoked', 'garbage', 'basic', 'noScheme', 'huge'].includes(c.auth) && status !== 401) {
      // Checked before authentication (api.md order of checks): the route itself — a path that no longer
      // matches one, an id longer than any, bad percent-encoding — and the transport (Content-Encoding).
      const routeFirst = c.mutations.some((m) => m.startsWith('path:')) && (code === 'not_found' || details?.field === 'path');
      const transportFirst = c.mutations.includes('headers:contentEncoding') && details?.field === 'Content-Encoding';
      if (!routeFirst && !transportFirst)
        return { failure: `${status} ${code}: a request without a valid key must be 401`, body };
    }
    if (c.expectNotFound && status === 404) return { body };
    if (c.expectAccepted || c.expectNotFound) {
      const gap = gaps.find(
        (g) => g.operation === op.name && g.code === code && g.field === generic(details?.field) && g.reason === details?.reason,
      );
      if (gap) return { gap, body };
      if (process.env.FUZZ_COLLECT) {
        const field = generic(details?.field) as string | undefined;
        return { gap: { operation: op.name, field, code, reason: details?.reason, why: 'UNKNOWN (FUZZ_COLLECT)' }, body };
      }
      return {
        failure: c.expectNotFound
          ? `${status} ${code}: an id of nothing must be 404: ${JSON.stringify(body.error)}`
          : `${status} ${code}: a request valid by the document was refused (schema looser than the server): ${JSON.stringify(body.error)}`,
        body,
      };
    }
  } else {
    if (c.expectNotFound) return { failure: `${status}: an id of nothing was served`, body };
    if (op.secured && !['live', 'test', 'narrow', 'otherAccount', 'lowercaseScheme'].includes(c.auth)) {
      return { failure: `${status}: accepted without a valid key (${c.auth})`, body };
    }
    if (c.foreignId) return { failure: `${status}: another account's store or object was served`, body };
    if (body && typeof body === 'object' && 'success' in body && body.success !== true)
      return { failure: `${status}: success is not true` };
  }
  return { body };
}
