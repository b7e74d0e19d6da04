import type { Adapter } from './adapter.js';
import { googleAds } from './google-ads.js';
import { tiktok } from './tiktok.js';

/**
 * The destinations a store can forward to (api.md §8). Meta is the store's own fields
 * (`pixelId`, `capiAccessToken`, `capiTestEventCode`) and its own outbox (capi/); every other
 * platform is an adapter here, served by the shared outbox (dispatcher.ts). A new platform is
 * its adapter file and one line below.
 */
export const ADAPTERS = {
  google_ads: googleAds,
  tiktok,
} as const;

export type AdapterKind = keyof typeof ADAPTERS;
export const DESTINATION_KINDS = ['meta', ...(Object.keys(ADAPTERS) as AdapterKind[])] as const;
export type DestinationKind = 'meta' | AdapterKind;

export function adapterOf(kind: string): Adapter | undefined {
  return (ADAPTERS as Record<string, unknown>)[kind] as Adapter | undefined;
}
