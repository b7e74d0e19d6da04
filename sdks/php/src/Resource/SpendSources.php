<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** `$wt->stores->spendSources`: a store's spend sources (`meta`, `google_ads`, `tiktok`; api.md §11). */
final class SpendSources extends Resource
{
    /**
     * GET /v1/stores/:id/spend-sources — every platform's source with `configured`, `accounts`, `status`
     * (never|ok|failing), `lastSyncedAt`, `syncedThrough`, `lastError` and its settings (never a secret).
     *
     * @return array<string, mixed> spendSources
     */
    public function list(string $storeId): array
    {
        return $this->requester->request('GET', '/stores/' . self::segment($storeId) . '/spend-sources');
    }

    /**
     * PUT /v1/stores/:id/spend-sources/:kind — connect one platform's ad accounts; a secret left out keeps the
     * stored one, or else the store's destination of that kind is used. The backfill runs in the background.
     *
     * @param array<string, mixed> $settings as the API names them, e.g. ['adAccountIds' => ['act_…'], 'backfillDays' => 30]
     * @return array<string, mixed> the source
     */
    public function put(string $storeId, string $kind, array $settings): array
    {
        return $this->requester->request('PUT', '/stores/' . self::segment($storeId) . '/spend-sources/' . self::segment($kind), [], $settings);
    }

    /**
     * DELETE /v1/stores/:id/spend-sources/:kind — stop syncing one platform's spend (the spend synced stays).
     *
     * @return array<string, mixed> the source, no longer configured
     */
    public function delete(string $storeId, string $kind): array
    {
        return $this->requester->request('DELETE', '/stores/' . self::segment($storeId) . '/spend-sources/' . self::segment($kind));
    }

    /**
     * POST /v1/stores/:id/spend-sources/:kind/sync — run the sync now (202; read list() for its status).
     *
     * @return array<string, mixed>
     */
    public function sync(string $storeId, string $kind): array
    {
        return $this->requester->request('POST', '/stores/' . self::segment($storeId) . '/spend-sources/' . self::segment($kind) . '/sync', [], []);
    }
}
