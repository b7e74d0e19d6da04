<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** `$wt->adSpend`: a store's daily ad spend, which metrics use for ROAS. */
final class AdSpend extends Resource
{
    /**
     * POST /v1/stores/:id/ad-spend — record spend; an entry replaces the one with the same date,
     * platform and campaignId.
     *
     * @param array<string, mixed> $params ['entries' => [['date' => 'YYYY-MM-DD', 'amount' => 12.5, 'currency' => 'USD', 'platform'?, 'campaignId'?, 'campaignName'?], …]]
     * @param array{idempotencyKey?: string} $options
     * @return array<string, mixed> entries
     */
    public function upsert(string $storeId, array $params, array $options = []): array
    {
        return $this->requester->request('POST', self::path($storeId), [], $params, $options);
    }

    /**
     * GET /v1/stores/:id/ad-spend — one page, newest day first.
     *
     * @param array<string, mixed> $params startDate?, endDate?, limit?, cursor?
     * @return array<string, mixed> entries, hasMore, nextCursor
     */
    public function list(string $storeId, array $params = []): array
    {
        return Paginator::page($this->requester->request('GET', self::path($storeId), $params), 'entries');
    }

    /**
     * Every entry in the range, page after page.
     *
     * @param array<string, mixed> $params startDate?, endDate?, limit?
     * @return \Generator<int, array<string, mixed>>
     */
    public function listAll(string $storeId, array $params = []): \Generator
    {
        return Paginator::each(fn (array $query): array => $this->list($storeId, $query), $params);
    }

    private static function path(string $storeId): string
    {
        return '/stores/' . self::segment($storeId) . '/ad-spend';
    }
}
