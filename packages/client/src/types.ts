// The names the client's methods take and return, each an alias of the generated operation
// types (generated/openapi.ts), so they follow the server's OpenAPI document and cannot drift.
import type { Operations } from './generated/openapi.js';

type Body<K extends keyof Operations> = Operations[K] extends { body: infer B } ? B : never;
type Query<K extends keyof Operations> = Operations[K] extends { query: infer Q } ? Q : never;
type Data<K extends keyof Operations> = Operations[K]['response'];

export type { Operations };

// Tracking
export type ClickParams = Body<'POST /v1/track/click'>;
export type ClickResult = Data<'POST /v1/track/click'>;
export type ConversionParams = Body<'POST /v1/track/conversion'>;
export type ConversionResult = Data<'POST /v1/track/conversion'>;
export type IdentifyParams = Body<'POST /v1/track/identify'>;
export type IdentifyResult = Data<'POST /v1/track/identify'>;
/** One event of a batch: `{ type: 'click', ...ClickParams }` or `{ type: 'conversion', ...ConversionParams }`. */
export type BatchEvent = Body<'POST /v1/track/batch'>['events'][number];
/** `received`, `failed` and one result per event, in order. */
export type BatchResult = Data<'POST /v1/track/batch'>;
/** One event's result: `{ index, status: 200, data }` or `{ index, status, error }`. */
export type BatchResultEntry = BatchResult['results'][number];

// Stores
export type Store = Data<'GET /v1/stores/{id}'>;
export type StoreCreateParams = Body<'POST /v1/stores'>;
export type StoreUpdateParams = Body<'PATCH /v1/stores/{id}'>;
export type StoreListParams = Query<'GET /v1/stores'>;
export type StoreList = Data<'GET /v1/stores'>;
export type Destination = Data<'PUT /v1/stores/{id}/destinations/google_ads'>;
export type DestinationList = Data<'GET /v1/stores/{id}/destinations'>;
export type DestinationKind = Destination['kind'];
/** A destination's health as listed (api.md §12): unverified, ok or failing, with the last error. */
export type DestinationHealth = DestinationList['destinations'][number]['health'];
/** What POST /v1/stores/:id/destinations/:kind/test answers: `{ok, message, platformMessage?}`. */
export type DestinationTestResult = Data<'POST /v1/stores/{id}/destinations/{kind}/test'>;
/** The settings of one platform (api.md §8); secrets may be left out to keep the stored ones. */
export type MetaDestinationParams = Body<'PUT /v1/stores/{id}/destinations/meta'>;
export type GoogleAdsDestinationParams = Body<'PUT /v1/stores/{id}/destinations/google_ads'>;
export type TikTokDestinationParams = Body<'PUT /v1/stores/{id}/destinations/tiktok'>;
export type DestinationParams = MetaDestinationParams | GoogleAdsDestinationParams | TikTokDestinationParams;

// Conversions: `attributed` may also be given as a boolean (the query string carries 'true'/'false').
export type ConversionListParams = Omit<Query<'GET /v1/conversions'>, 'attributed'> & {
  attributed?: boolean | 'true' | 'false';
};
export type ConversionList = Data<'GET /v1/conversions'>;
export type Conversion = ConversionList['conversions'][number];
/** One conversion with the explanation of its attribution (signal, score, touchpoints). */
export type ConversionDetail = Data<'GET /v1/conversions/{id}'>;

// Clicks
export type ClickListParams = Query<'GET /v1/clicks'>;
export type ClickList = Data<'GET /v1/clicks'>;
export type Click = Data<'GET /v1/clicks/{id}'>;

// Analytics
export type MetricsParams = Query<'GET /v1/analytics/metrics'>;
export type Metrics = Data<'GET /v1/analytics/metrics'>;
export type CohortsParams = Query<'GET /v1/analytics/cohorts'>;
export type Cohorts = Data<'GET /v1/analytics/cohorts'>;
export type Cohort = Cohorts['cohorts'][number];
export type ChannelsParams = Query<'GET /v1/analytics/channels'>;
export type Channels = Data<'GET /v1/analytics/channels'>;
export type Channel = Channels['channels'][number];
export type TrackingHealthParams = Query<'GET /v1/analytics/tracking-health'>;
export type TrackingHealth = Data<'GET /v1/analytics/tracking-health'>;
export type TrackingHealthItem = TrackingHealth['items'][number];
export type TimeseriesParams = Query<'GET /v1/analytics/timeseries'>;
export type Timeseries = Data<'GET /v1/analytics/timeseries'>;
export type BreakdownParams = Query<'GET /v1/analytics/breakdown'>;
export type Breakdown = Data<'GET /v1/analytics/breakdown'>;
export type BreakdownGroup = Breakdown['groups'][number];

// Spend sources (api.md §11)
export type SpendSourceList = Data<'GET /v1/stores/{id}/spend-sources'>;
export type SpendSource = Data<'PUT /v1/stores/{id}/spend-sources/meta'>;
export type SpendSourceKind = SpendSource['kind'];
/** The PUT body of each kind (meta: adAccountIds; google_ads: customerIds, …; tiktok: advertiserIds). */
export type SpendSourceParamsOf = {
  meta: Body<'PUT /v1/stores/{id}/spend-sources/meta'>;
  google_ads: Body<'PUT /v1/stores/{id}/spend-sources/google_ads'>;
  tiktok: Body<'PUT /v1/stores/{id}/spend-sources/tiktok'>;
};
export type SpendSourceParams = SpendSourceParamsOf[SpendSourceKind];
export type SpendSourceSync = Data<'POST /v1/stores/{id}/spend-sources/{kind}/sync'>;

// Ad spend
export type AdSpendUpsertParams = Body<'POST /v1/stores/{id}/ad-spend'>;
export type AdSpendUpsertResult = Data<'POST /v1/stores/{id}/ad-spend'>;
export type AdSpendListParams = Query<'GET /v1/stores/{id}/ad-spend'>;
export type AdSpendList = Data<'GET /v1/stores/{id}/ad-spend'>;
export type AdSpendEntry = AdSpendList['entries'][number];
