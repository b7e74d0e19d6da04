/**
 * The reference documentation's side of the API (GET /v1/openapi.json, /docs), by concern: example
 * values and the rules only the domain checks (formats), the response maps every operation
 * declares (responses), the document's introduction, security schemes and assembly (document),
 * and the look of /docs (docs-ui). Route modules keep their own schemas; these files write once
 * what they all share.
 */
export * from './openapi/docs-ui.js';
export * from './openapi/document.js';
export * from './openapi/formats.js';
export * from './openapi/responses.js';
