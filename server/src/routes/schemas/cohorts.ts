import { Type } from 'typebox';
import { COHORT_BY } from '../../analytics/cohorts.js';
import { EXAMPLE } from '../../http/openapi.js';

/** Schemas of GET /v1/analytics/cohorts (api.md §11 "Customers"; docs/api.md "Customers and cohorts"). */

const money = (description: string, example: number) => Type.Number({ description, examples: [example] });

const PerCustomer = Type.Object(
  Object.fromEntries(
    [0, 30, 60, 90, 180, 365].map((n) => [
      `d${n}`,
      Type.Optional(
        money(
          `Purchase value minus refunds per customer within ${n === 0 ? 'the first 24 hours' : `${n + 1} days (offsets 0–${n})`} of each customer’s first conversion, cumulative`,
          42.5,
        ),
      ),
    ]),
  ),
  {
    description:
      'Cumulative net revenue per customer, rounded half away from zero to the minor unit. dN appears once every customer of the cohort has had N + 1 full days (24 h each) since the first conversion: N + 1 days after the cohort’s last day ended. Empty without customers.',
  },
);

export const Cohort = Type.Object({
  cohort: Type.String({
    description: 'The month of the first conversions, YYYY-MM, in the store time zone',
    examples: ['2026-09'],
  }),
  channel: Type.Optional(
    Type.String({
      description:
        'by=channel: the channel the customers’ first conversion is credited to (meta, google_ads, tiktok, microsoft, pinterest, snapchat, reddit, linkedin), or unattributed',
      examples: ['meta'],
    }),
  ),
  customers: Type.Integer({ description: 'Customers whose first conversion is in this cohort (and channel)', examples: [120] }),
  spend: Type.Optional(
    money(
      'Ad spend in the store currency dated in the cohort’s month within the range (by=channel: of that platform); absent when none is recorded',
      3000,
    ),
  ),
  cac: Type.Optional(money('spend ÷ customers, rounded to the minor unit; absent without spend or customers', 25)),
  netRevenuePerCustomer: PerCustomer,
  paybackDays: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 365,
      description:
        'The first day offset (daily granularity) at which cumulative net revenue per customer ≥ cac, among the offsets the whole cohort has lived through; absent when not reached yet or without spend',
      examples: [45],
    }),
  ),
});

export const Cohorts = Type.Object({
  storeId: Type.String({ examples: [EXAMPLE.storeId] }),
  by: Type.Enum([...COHORT_BY]),
  startDate: Type.String({ description: 'First day of the first cohort (inclusive)', examples: ['2026-06-01'] }),
  endDate: Type.String({ description: 'Last day of the last cohort (inclusive)', examples: ['2026-11-22'] }),
  timezone: Type.String({ examples: ['Europe/Berlin'] }),
  currency: Type.String({ description: 'The store currency every amount is in', examples: ['EUR'] }),
  livemode: Type.Boolean(),
  asOf: Type.String({
    description: 'The instant the cohorts’ ages are measured to (now)',
    examples: ['2026-11-22T10:00:00.000Z'],
  }),
  cohorts: Type.Array(Cohort, {
    description:
      'by=month: every month of the range, oldest first; by=channel: each month and channel with customers or spend, oldest first, then by channel',
  }),
  warnings: Type.Array(
    Type.Object({
      // A string, not an enum: the OpenAPI document's one `code` enum is the error envelope's (hardening.test.ts).
      code: Type.String({ description: 'What is wrong; so far only `spend_not_converted`', examples: ['spend_not_converted'] }),
      currency: Type.String({ examples: ['USD'] }),
      message: Type.String(),
    }),
  ),
});
