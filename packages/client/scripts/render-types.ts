/**
 * OpenAPI document → TypeScript: one `Operations` interface whose keys are `'METHOD /v1/path'`
 * and whose members are the operation's `params` (path), `query`, `body` and `response` (the
 * envelope's `data`). Hand-written and small on purpose: it covers exactly the JSON Schema the
 * server's TypeBox schemas produce, and throws on anything else rather than guess.
 */

export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  description?: string;
  [keyword: string]: unknown;
}

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema: JsonSchema;
}

interface Operation {
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

/** Keywords that shape a type; every other keyword (minLength, pattern, examples…) only validates or documents. */
const STRUCTURAL = ['allOf', 'not', 'if', '$ref', 'patternProperties', 'prefixItems', 'tuple'];
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const literal = (value: unknown) => (typeof value === 'string' ? quote(value) : JSON.stringify(value));
const propertyName = (name: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : quote(name));
const pad = (depth: number) => '  '.repeat(depth);

function doc(text: string | undefined, depth: number): string[] {
  if (!text) return [];
  return [`${pad(depth)}/** ${text.replace(/\*\//g, '*\\/').replace(/\s*\n\s*/g, ' ')} */`];
}

/** A property's description, or (for a nullable `anyOf: [T, null]`) the one of its alternatives. */
function descriptionOf(schema: JsonSchema): string | undefined {
  return schema.description ?? (schema.anyOf ?? schema.oneOf)?.find((s) => s.description)?.description;
}

function union(members: string[]): string {
  const unique = [...new Set(members)];
  return unique.join(' | ');
}

function objectType(schema: JsonSchema, depth: number, where: string): string {
  const properties = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties;
  if (properties.length === 0 && typeof extra === 'object') return `Record<string, ${render(extra, depth, `${where}.*`)}>`;
  if (properties.length === 0) return extra === false ? 'Record<string, never>' : 'Record<string, unknown>';
  const required = new Set(schema.required ?? []);
  const lines = ['{'];
  for (const [name, property] of properties) {
    lines.push(...doc(descriptionOf(property), depth + 1));
    const optional = required.has(name) ? '' : '?';
    lines.push(`${pad(depth + 1)}${propertyName(name)}${optional}: ${render(property, depth + 1, `${where}.${name}`)};`);
  }
  if (extra === true) lines.push(`${pad(depth + 1)}[key: string]: unknown;`);
  else if (typeof extra === 'object') lines.push(`${pad(depth + 1)}[key: string]: ${render(extra, depth + 1, `${where}.*`)};`);
  lines.push(`${pad(depth)}}`);
  return lines.join('\n');
}

function byType(type: string, schema: JsonSchema, depth: number, where: string): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = schema.items ? render(schema.items, depth, `${where}[]`) : 'unknown';
      return /^[A-Za-z]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case 'object':
      return objectType(schema, depth, where);
    default:
      throw new Error(`render-types: unsupported type "${type}" at ${where}`);
  }
}

/** A schema as a TypeScript type; `depth` is the indentation of the line it starts on. */
export function render(schema: JsonSchema, depth: number, where: string): string {
  const unsupported = STRUCTURAL.find((keyword) => keyword in schema);
  if (unsupported) throw new Error(`render-types: unsupported keyword "${unsupported}" at ${where}`);
  if ('const' in schema) return literal(schema.const);
  if (schema.enum) return union(schema.enum.map(literal));
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return union(alternatives.map((s, i) => render(s, depth, `${where}|${i}`)));
  if (Array.isArray(schema.type)) return union(schema.type.map((t) => byType(t, schema, depth, where)));
  if (schema.type) return byType(schema.type, schema, depth, where);
  if (schema.properties) return objectType(schema, depth, where);
  return 'unknown';
}

function parametersType(parameters: Parameter[], depth: number, where: string): string {
  const schema: JsonSchema = { type: 'object', properties: {}, required: [] };
  for (const p of parameters) {
    (schema.properties as Record<string, JsonSchema>)[p.name] = {
      ...p.schema,
      description: p.description ?? p.schema.description,
    };
    if (p.required) schema.required?.push(p.name);
  }
  return objectType(schema, depth, where);
}

function jsonSchemaOf(content: Record<string, { schema: JsonSchema }> | undefined, where: string): JsonSchema {
  const schema = content?.['application/json']?.schema;
  if (!schema) throw new Error(`render-types: no application/json schema at ${where}`);
  return schema;
}

/** The success response's `data` (the envelope itself is the client's business, not the caller's). */
function responseData(operation: Operation, where: string): JsonSchema {
  const status = Object.keys(operation.responses ?? {}).find((code) => /^2\d\d$/.test(code));
  if (!status) throw new Error(`render-types: no 2xx response at ${where}`);
  const envelope = jsonSchemaOf(operation.responses?.[status]?.content, `${where} ${status}`);
  const data = envelope.properties?.data;
  if (!data) throw new Error(`render-types: the ${status} response at ${where} is not an envelope with data`);
  return data;
}

function operationType(path: string, method: string, operation: Operation): string[] {
  const key = `${method.toUpperCase()} ${path}`;
  const lines = [...doc(operation.summary, 1), `  ${quote(key)}: {`];
  const parameters = operation.parameters ?? [];
  const inPath = parameters.filter((p) => p.in === 'path');
  const inQuery = parameters.filter((p) => p.in === 'query');
  if (inPath.length > 0) lines.push(`    params: ${parametersType(inPath, 2, `${key} params`)};`);
  if (inQuery.length > 0) lines.push(`    query: ${parametersType(inQuery, 2, `${key} query`)};`);
  if (operation.requestBody) {
    lines.push(`    body: ${render(jsonSchemaOf(operation.requestBody.content, `${key} body`), 2, `${key} body`)};`);
  }
  lines.push(`    response: ${render(responseData(operation, key), 2, `${key} response`)};`);
  lines.push('  };');
  return lines;
}

/** The whole generated module for the document's `/v1` operations, in a stable (path, method) order. */
export function renderTypes(document: OpenApiDocument): string {
  const lines = [
    "// Generated by packages/client/scripts/generate-types.ts from the server's OpenAPI document",
    '// (GET /v1/openapi.json). Do not edit: run `npm run generate -w packages/client`.',
    '// server/test/sdks/client-types.test.ts fails when this file and the server disagree.',
    '',
    "/** Every /v1 operation: path parameters, query, body and the response envelope's `data`. */",
    'export interface Operations {',
  ];
  const paths = Object.keys(document.paths)
    .filter((path) => path.startsWith('/v1/'))
    .sort();
  for (const path of paths) {
    const operations = document.paths[path] ?? {};
    for (const method of METHODS) {
      const operation = operations[method];
      if (operation) lines.push(...operationType(path, method, operation));
    }
  }
  lines.push('}', '');
  return lines.join('\n');
}
