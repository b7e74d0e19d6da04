// The shapes the dashboard reads. The /v1 objects are the client's types, generated from the
// server's OpenAPI document (packages/client/src/generated/openapi.ts, `npm run generate -w
// packages/client`): type-only imports, so nothing of the client is bundled and the pages cannot
// drift from the API. Only the dashboard's own endpoints (/dashboard/api/session and /keys, not
// part of /v1 nor of its OpenAPI document) are described here.
import type {
  Conversion,
  ConversionDetail,
  ConversionList,
  Destination,
  DestinationHealth,
  DestinationKind,
  DestinationList,
  DestinationTestResult,
  Metrics,
  Operations,
  Store,
  Timeseries,
} from '@waytrack/client';

export type { Conversion, Destination, DestinationHealth, DestinationKind, DestinationTestResult, Metrics, Store, Timeseries };
/** A destination as GET /v1/stores/:id/destinations lists it: with its health (api.md §12). */
export type ListedDestination = DestinationList['destinations'][number];

/** GET /v1/conversions/:id: a conversion with the explanation of its attribution. */
export type ExplainedConversion = ConversionDetail;
/** The page fields of every list (api.md §1 "Pagination"). */
export type Page = Pick<ConversionList, 'hasMore' | 'nextCursor'>;
export type Bucket = Timeseries['buckets'][number];
export type CapiStatus = Conversion['capi']['status'];
export type ForwardingEntry = NonNullable<Conversion['forwarding']['meta']>;
export type Signal = ConversionDetail['attribution']['touchpoints'][number]['signal'];
/** GET /v1/webhooks: a page of the account's webhook endpoints (api.md §9, webhooks out). */
export type WebhookList = Operations['GET /v1/webhooks']['response'];
export type Webhook = WebhookList['webhooks'][number];
/** POST /v1/webhooks: the endpoint with its signing secret, shown only in this answer. */
export type CreatedWebhook = Operations['POST /v1/webhooks']['response'];
export type WebhookEventType = Operations['POST /v1/webhooks']['body']['events'][number];
/** GET /v1/webhooks/:id/deliveries: a page of attempts, newest first. */
export type DeliveryList = Operations['GET /v1/webhooks/{id}/deliveries']['response'];
export type Delivery = DeliveryList['deliveries'][number];

export interface SessionInfo {
  signedIn: true;
  accountId: string;
  email: string;
  csrfToken: string;
}

export interface ApiKey {
  keyId: string;
  name: string;
  mode: 'live' | 'test';
  kind: 'secret' | 'publishable';
  scopes: string[];
  hint: string;
  storeId: string | null;
  origins: string[];
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface CreatedKey {
  keyId: string;
  key: string;
  mode: 'live' | 'test';
  scopes: string[];
}
