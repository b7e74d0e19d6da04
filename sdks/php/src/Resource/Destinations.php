<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** `$wt->stores->destinations`: a store's ad platforms (`meta`, `google_ads`, `tiktok`). */
final class Destinations extends Resource
{
    /**
     * GET /v1/stores/:id/destinations — every platform with `configured` and its settings (never a secret).
     *
     * @return array<string, mixed> destinations
     */
    public function list(string $storeId): array
    {
        return $this->requester->request('GET', '/stores/' . self::segment($storeId) . '/destinations');
    }

    /**
     * PUT /v1/stores/:id/destinations/:kind — configure one platform; a secret left out keeps the stored one.
     *
     * @param array<string, mixed> $settings as the API names them, e.g. ['pixelCode' => …, 'accessToken' => …]
     * @return array<string, mixed> the destination
     */
    public function put(string $storeId, string $kind, array $settings): array
    {
        return $this->requester->request('PUT', '/stores/' . self::segment($storeId) . '/destinations/' . self::segment($kind), [], $settings);
    }

    /**
     * DELETE /v1/stores/:id/destinations/:kind — stop forwarding to one platform.
     *
     * @return array<string, mixed> the destination, no longer configured
     */
    public function delete(string $storeId, string $kind): array
    {
        return $this->requester->request('DELETE', '/stores/' . self::segment($storeId) . '/destinations/' . self::segment($kind));
    }
}
