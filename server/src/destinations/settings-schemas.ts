import { type TSchema, Type } from 'typebox';

/**
 * The pieces every destination's PUT body schema (api.md §8) is made of; each platform's schema
 * is its folder's settings-schema.ts (google_ads/, meta/, tiktok/, …), named by its adapter
 * (`settingsSchema`), and the route documents one operation per kind from them. The
 * adapter's `parse` is what checks a body (with its own messages and `details.field`); the
 * agreement fuzzer (test/fuzz/openapi-agreement.test.ts) holds the two to refusing the same
 * bodies. As everywhere in the API, a field sent as null or "" counts as left out.
 *
 * `x-rules: required-once`: a secret (or, for Google Ads, the `oauth` object) may be left out to
 * keep the stored one, so it is required only while none is stored — no JSON Schema states that.
 */
export const REQUIRED_ONCE = { 'x-rules': ['required-once'] };

/** Optional text of at most `max` characters (the document adds: null or "" is the same as leaving it out). */
export function optional(
  description: string,
  options: { max?: number; pattern?: string; secret?: boolean; once?: boolean } = {},
) {
  return Type.Optional(
    Type.String({
      maxLength: options.max ?? 500,
      ...(options.pattern && { pattern: options.pattern }),
      ...(options.secret && { writeOnly: true }),
      description,
      ...(options.once && REQUIRED_ONCE),
    }),
  );
}

export const refundEvent = () =>
  optional(
    'Opt-in (api.md §9): the name of a custom event sent for each refund with the negative refunded amount (e.g. "Refund"); left out, refunds are not sent to this platform',
    { max: 50, pattern: '^[A-Za-z][A-Za-z0-9_]{0,49}$' },
  );

export const secret = (description: string, max = 500) =>
  optional(`${description}; write-only: left out, the stored one is kept (required while none is stored)`, {
    max,
    secret: true,
    once: true,
  });

export type SettingsSchema = TSchema;
