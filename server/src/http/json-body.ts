import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readJson } from './json-reader.js';

/**
 * The JSON body parser (every route, API and dashboard), in place of Fastify's: the reader the
 * shop webhooks use too (json-reader.ts: UTF-8 only, a BOM skipped, 400 `malformed_json` /
 * `invalid_unicode` / `too_deep`, exact texts of long numbers kept). Keys that could pollute
 * prototypes (`__proto__`, `constructor.prototype`) are refused by name in http/validation.ts
 * prepareInput, not reported as "not valid JSON". Errors keep the connection open
 * (http/error-handler.ts): the body was read whole.
 */
export function parseJsonBody(_request: FastifyRequest, body: Buffer, done: (error: Error | null, body?: unknown) => void) {
  let value: unknown;
  try {
    value = readJson(body);
  } catch (error) {
    done(error as Error);
    return;
  }
  done(null, value);
}

export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody);
}
