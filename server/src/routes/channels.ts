import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { computeChannels } from '../analytics/channels.js';
import { computeTrackingHealth } from '../analytics/tracking-health.js';
import { MODELS } from '../attribution/models.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { DATE_RANGE_ERRORS, describeResponses, EXAMPLE, STORE_NOT_FOUND } from '../http/openapi.js';
import { bearer, DateQuery, Query, type RouteDeps } from './common.js';
import { Channels } from './schemas/channels.js';
import { TrackingHealth } from './schemas/tracking-health.js';

const STORE_ID = Type.String({ minLength: 1, maxLength: 64, description: 'The store', examples: [EXAMPLE.storeId] });

const MISSING_STORE_ID = {
  summary: 'storeId absent or empty',
  code: 'missing_required_field',
  message: 'storeId is required',
  details: { field: 'storeId', reason: 'required_field_missing' },
} as const;

const RULES =
  'Dates are calendar days of the store’s time zone, both inclusive; by default the 30 days ending today; at most 731 days. Only the key’s mode counts.';

export const channelRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database }) => {
  // GET /v1/analytics/channels — spend beside credited revenue per channel and campaign (api.md §11)
  app.get(
    '/analytics/channels',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Analytics'],
        operationId: 'getChannels',
        summary: 'Spend, credited conversions, net revenue, ROAS and CPA per ad channel and campaign',
        description: `Per channel of the credited click (meta, google_ads, tiktok, microsoft, pinterest, snapchat, reddit, linkedin) and per its campaign_id, the ad spend (converted to the store currency at each day’s rate) beside the clicks, conversions, revenue and refunds an attribution model credits it with (last_click by default), and the customers it brought first; unattributed holds what no click is credited with. The channels add up to GET /v1/analytics/metrics of the same range. ${RULES}`,
        security: bearer,
        querystring: Query({
          storeId: STORE_ID,
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
          model: Type.Optional(
            Type.Enum([...MODELS], { default: 'last_click', description: 'How a conversion is credited to its touchpoints' }),
          ),
        }),
        response: describeResponses(Channels, {
          description: 'The channels and their campaigns',
          examples: {
            lastClick: {
              summary: 'Meta and unattributed, last click',
              data: {
                storeId: EXAMPLE.storeId,
                startDate: '2026-11-01',
                endDate: '2026-11-22',
                timezone: 'Europe/Berlin',
                currency: 'EUR',
                model: 'last_click',
                livemode: true,
                channels: [
                  {
                    channel: 'meta',
                    spend: 900,
                    clicks: 1320,
                    conversions: 48,
                    revenue: 2480.6,
                    refunds: 120,
                    netRevenue: 2360.6,
                    roas: 2.62,
                    cpa: 18.75,
                    newCustomers: 31,
                    campaigns: [
                      {
                        campaignId: '120210000123456789',
                        campaignName: 'Summer Sale',
                        spend: 900,
                        clicks: 1320,
                        conversions: 48,
                        revenue: 2480.6,
                        refunds: 120,
                        netRevenue: 2360.6,
                        roas: 2.62,
                        cpa: 18.75,
                        newCustomers: 31,
                      },
                    ],
                  },
                  {
                    channel: 'unattributed',
                    spend: 0,
                    clicks: 0,
                    conversions: 20,
                    revenue: 1100,
                    refunds: 0,
                    netRevenue: 1100,
                    roas: null,
                    cpa: null,
                    newCustomers: 12,
                    campaigns: [],
                  },
                ],
                totals: { spend: 900, netRevenue: 3460.6, mer: 3.85 },
                warnings: [],
              },
            },
          },
          invalid: {
            missingStoreId: MISSING_STORE_ID,
            unknownModel: {
              summary: 'model is not an attribution model',
              code: 'invalid_request',
              message: `model must be one of: ${MODELS.join(', ')}`,
              details: { field: 'model', reason: 'unknown_value' },
            },
            ...DATE_RANGE_ERRORS,
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await computeChannels(database, tenantOf(request), request.query)),
  );

  // GET /v1/analytics/tracking-health — what would make the channel report wrong (api.md §11)
  app.get(
    '/analytics/tracking-health',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Analytics'],
        operationId: 'getTrackingHealth',
        summary: 'What would make the channel report wrong, each with a sentence to act on',
        description: `Campaigns with spend in range and no tracked click (spend_without_clicks), each platform’s clicks without a campaign id with the URL parameters to add (untagged_clicks), failing destinations (destination_failing) and spend sources (spend_source_failing), and conversions waiting more than an hour for a destination (conversions_pending). ${RULES}`,
        security: bearer,
        querystring: Query({
          storeId: STORE_ID,
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
        }),
        response: describeResponses(TrackingHealth, {
          description: 'The items, most pressing kinds first',
          examples: {
            untagged: {
              summary: 'A Meta campaign without clicks and untagged Google clicks',
              data: {
                storeId: EXAMPLE.storeId,
                startDate: '2026-11-01',
                endDate: '2026-11-22',
                livemode: true,
                items: [
                  {
                    type: 'spend_without_clicks',
                    message:
                      'Meta campaign Summer Sale (120212000000000001) spent €50.00 from 2026-11-01 to 2026-11-22 with no tracked click: add the Waytrack tag to its landing page or check its URL parameters (campaign_id={{campaign.id}}&adset_id={{adset.id}}&ad_id={{ad.id}}).',
                    channel: 'meta',
                    campaignId: '120212000000000001',
                    campaignName: 'Summer Sale',
                    spend: 50,
                    currency: 'EUR',
                  },
                  {
                    type: 'untagged_clicks',
                    message:
                      '40 of 200 Google Ads clicks (20%) carry no campaign id, so their conversions cannot be matched to a campaign’s spend: add campaign_id={campaignid}&adgroup_id={adgroupid} to the URL parameters of your Google Ads ads.',
                    channel: 'google_ads',
                    clicks: 200,
                    untagged: 40,
                    share: 20,
                    parameters: 'campaign_id={campaignid}&adgroup_id={adgroupid}',
                  },
                ],
              },
            },
          },
          invalid: { missingStoreId: MISSING_STORE_ID, ...DATE_RANGE_ERRORS },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await computeTrackingHealth(database, tenantOf(request), request.query)),
  );
};
