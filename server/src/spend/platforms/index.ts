import { googleAdsSpend } from './google-ads.js';
import { metaSpend } from './meta.js';
import { tiktokSpend } from './tiktok.js';
import type { SpendPlatform } from './types.js';

/**
 * The spend report of each platform (api.md §11): the sync job (spend/sync.ts) looks a source's
 * kind up here. One line per platform module.
 */
export const SPEND_PLATFORMS: readonly SpendPlatform[] = [metaSpend, googleAdsSpend, tiktokSpend];

export function spendPlatformOf(kind: string): SpendPlatform | undefined {
  return SPEND_PLATFORMS.find((platform) => platform.kind === kind);
}
