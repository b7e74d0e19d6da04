import type { Adapter, Sender } from './adapter.js';
import { googleAds } from './google_ads/index.js';
import { linkedin } from './linkedin/index.js';
import { metaSender } from './meta/index.js';
import { microsoft } from './microsoft/index.js';
import { pinterest } from './pinterest/index.js';
import { reddit } from './reddit/index.js';
import { snapchat } from './snapchat/index.js';
import { tiktok } from './tiktok/index.js';

/**
 * The destinations a store can forward to (api.md §8). Meta's settings are the store's own
 * fields (`pixelId`, `capiAccessToken`, `capiTestEventCode`; meta/); every other platform is
 * an adapter here. All of them, Meta included, are served by the shared outbox (dispatcher.ts).
 * A new platform is its folder (`<kind>/index.ts` exporting its adapter) and one line below.
 */
export const ADAPTERS = {
  google_ads: googleAds,
  tiktok,
  microsoft,
  reddit,
  linkedin,
  pinterest,
  snapchat,
} as const;

export type AdapterKind = keyof typeof ADAPTERS;
export const DESTINATION_KINDS = ['meta', ...(Object.keys(ADAPTERS) as AdapterKind[])] as const;
export type DestinationKind = 'meta' | AdapterKind;

export function adapterOf(kind: string): Adapter | undefined {
  return (ADAPTERS as Record<string, unknown>)[kind] as Adapter | undefined;
}

/** How the shared outbox sends a destination's jobs (Meta's sender, or the adapter). */
export function senderOf(kind: string): Sender | undefined {
  return kind === 'meta' ? (metaSender as unknown as Sender) : adapterOf(kind);
}
