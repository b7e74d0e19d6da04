import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Schema } from './arbitraries.js';

/** One operation of the OpenAPI document, with what the fuzzer needs to drive and judge it. */
export interface Operation {
  /** `POST /v1/track/click` */
  name: string;
  method: string;
  /** The path template, `/v1/stores/{id}`. */
  path: string;
  parameters: Array<{ name: string; in: 'path' | 'query' | 'header'; required: boolean; schema: Schema }>;
  body?: { schema: Schema; required: boolean; validate: ValidateFunction };
  secured: boolean;
  /** Declared responses by key (`200`, `4XX`, `default`): the JSON body's validator, or null when no JSON body is declared. */
  responses: Map<string, ValidateFunction | null>;
  /** The closed list of error codes the document declares for this operation's errors. */
  errorCodes: Set<string>;
}

const DOC_ID = 'https://waytrack.test/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function newAjv(): Ajv2020 {
  // strict off: the document carries annotations (examples, x-error-code, writeOnly) Ajv does not know.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addKeyword({ keyword: 'x-error-code', schemaType: 'string' });
  return ajv;
}

function resolveRef(doc: Schema, value: Schema | undefined): Schema | undefined {
  let current = value;
  for (let i = 0; current && typeof current.$ref === 'string' && i < 10; i++) {
    const ref: string = current.$ref;
    if (!ref.startsWith('#/')) throw new Error(`fuzz: external $ref ${ref} is not supported`);
    current = ref
      .slice(2)
      .split('/')
      .reduce<Schema | undefined>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return current;
}

/** Every operation of the document, with compiled response validators. Re-read on every run: the document is the source. */
export function operationsOf(doc: Schema): Operation[] {
  const ajv = newAjv();
  // Schemas may refer to components: make them resolvable under the document's own pointers.
  ajv.addSchema({ ...doc, $id: DOC_ID } as object);
  const compile = (schema: Schema): ValidateFunction => ajv.compile(rewriteRefs(schema));
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined;
      if (!op) continue;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Schema) => {
        const resolved = resolveRef(doc, p) as Schema;
        return {
          name: resolved.name as string,
          in: resolved.in,
          required: resolved.required === true,
          schema: resolveRef(doc, resolved.schema) ?? {},
        };
      });
      const requestBody = resolveRef(doc, op.requestBody);
      const bodySchema = requestBody?.content?.['application/json']?.schema as Schema | undefined;
      const responses = new Map<string, ValidateFunction | null>();
      const errorCodes = new Set<string>();
      for (const [status, response] of Object.entries<Schema>(op.responses ?? {})) {
        const resolved = resolveRef(doc, response);
        const schema = resolveRef(doc, resolved?.content?.['application/json']?.schema);
        responses.set(status.toUpperCase(), schema ? compile(schema) : null);
        const codes = resolveRef(doc, schema?.properties?.error)?.properties?.code?.enum;
        if (Array.isArray(codes)) for (const code of codes) errorCodes.add(String(code));
      }
      const security = op.security ?? doc.security ?? [];
      operations.push({
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters,
        body: bodySchema
          ? { schema: resolveRef(doc, bodySchema) ?? {}, required: requestBody?.required === true, validate: compile(bodySchema) }
          : undefined,
        secured: Array.isArray(security) && security.some((s: Schema) => Object.keys(s).length > 0),
        responses,
        errorCodes,
      });
    }
  }
  return operations;
}

/** `#/components/...` inside the document → `${DOC_ID}#/components/...`, so Ajv resolves it against the added document. */
function rewriteRefs(schema: Schema): Schema {
  return JSON.parse(JSON.stringify(schema), (key, value) =>
    key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `${DOC_ID}${value}` : value,
  );
}

/** The declared response for a status: the exact code, else its range (`4XX`), else `default`. */
export function declaredResponse(op: Operation, status: number): ValidateFunction | null | undefined {
  for (const key of [String(status), `${String(status)[0]}XX`, 'DEFAULT']) {
    if (op.responses.has(key)) return op.responses.get(key);
  }
  return undefined;
}
