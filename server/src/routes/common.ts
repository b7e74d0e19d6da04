import type { FastifyRequest } from 'fastify';
import { type TProperties, type TSchema, Type } from 'typebox';
import type { Database } from '../db/database.js';
import type { Dispatcher } from '../destinations/dispatcher.js';
import { Envelope, ErrorEnvelope } from '../http/envelope.js';
import { DATE_TIME } from '../http/openapi.js';
import type { CursorCodec } from '../http/pagination.js';
import type { SecretBox } from '../secrets.js';
import type { SpendSyncer } from '../spend/sync.js';
import { fillClickStore } from '../tracking/publishable-click.js';

/** What route modules are given: the database, the shared HTTP helpers and the Meta forwarding. No globals. */
export interface RouteDeps {
  database: Database;
  cursors: CursorCodec;
  /** Seals store access tokens at rest. */
  secrets: SecretBox;
  /** The outbox dispatcher: requests wait on it for `capiSent`. */
  forwarding: Dispatcher;
  /** The spend sync (spend/sync.ts): told when a spend source falls due here. */
  spendSync?: SpendSyncer;
}

const { $id: _omit, ...errorSchema } = ErrorEnvelope as typeof ErrorEnvelope & { $id?: string };

/** Response schemas of a route: its success envelope plus the shared error envelope. */
export function responses(status: 200 | 201, data: TSchema) {
  return { [status]: Envelope(data), '4xx': errorSchema, '5xx': errorSchema };
}

export const bearer = [{ bearerAuth: [] }];

export const Timestamp = (description: string) => Type.String({ description, examples: ['2026-11-22T10:00:00.000Z'] });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An ISO 8601 date-time given by a client (checked precisely in the domain: tracking/input.ts parseEventTime). */
export const ClientTime = (description: string, example: string, ...rules: string[]) =>
  Type.Optional(
    Type.String({
      maxLength: 64,
      ...DATE_TIME,
      ...(rules.length > 0 && { 'x-rules': [...(DATE_TIME['x-rules'] as string[]), ...rules] }),
      description,
      examples: [example],
    }),
  );

export const DateQuery = (description: string) =>
  // A real month and day (the domain checks the rest, e.g. 2026-02-30).
  Type.Optional(
    Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$', description, examples: ['2026-11-01'] }),
  );

/** A query string schema: unknown parameters are refused (`unknown_field`), so a typo is never silently ignored. */
export const Query = <T extends TProperties>(properties: T) => Type.Object(properties, { additionalProperties: false });

/** A conversion's forwarding state to Meta, as every response shows it (destinations/meta/forwarding.ts presentForwarding). */
export const ForwardingState = {
  capiSent: Type.Boolean({ description: 'true once Meta acknowledged the event' }),
  capi: Type.Object({
    status: Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed'), Type.Literal('skipped')]),
    attempts: Type.Integer({ description: 'Conversions API requests that carried this event, over its whole life' }),
    lastError: Type.Optional(Type.String()),
    sentAt: Type.Optional(Type.String()),
    reason: Type.Optional(
      Type.Union([Type.Literal('not_configured'), Type.Literal('test_event_code_missing'), Type.Literal('expired')], {
        description: 'Only when skipped: why the conversion was not forwarded when it was recorded',
      }),
    ),
    message: Type.Optional(Type.String({ description: 'Only when skipped: the reason in a sentence' })),
  }),
};

/** preValidation of the tag's endpoints: a publishable key's request may leave `storeId` out (the key's store). */
export async function fillKeyStore(request: FastifyRequest): Promise<void> {
  const store = request.auth?.publishable?.storeId;
  if (store) fillClickStore(request.body, store);
}

/** The 403 example of the endpoints a publishable key may call from its store's pages. */
export const ORIGIN_NOT_ALLOWED = {
  summary: 'A publishable key used from another site',
  code: 'forbidden' as const,
  message: "This publishable key is accepted only from pages on its store's domain (or its extra origins), over https",
  details: { reason: 'origin_not_allowed' as const },
};
