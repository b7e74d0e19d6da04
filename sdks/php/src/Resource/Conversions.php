<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** `$wt->conversions`: read recorded conversions (of the key's mode). */
final class Conversions extends Resource
{
    /**
     * GET /v1/conversions — one page, newest event first.
     *
     * @param array<string, mixed> $params storeId?, eventType?, attributed? (bool), capiStatus?, startDate?, endDate?, limit?, cursor?
     * @return array<string, mixed> conversions, hasMore, nextCursor
     */
    public function list(array $params = []): array
    {
        return Paginator::page($this->requester->request('GET', '/conversions', $params), 'conversions');
    }

    /**
     * Every matching conversion, page after page (`limit` sets the page size).
     *
     * @param array<string, mixed> $params the filters of list()
     * @return \Generator<int, array<string, mixed>>
     */
    public function listAll(array $params = []): \Generator
    {
        return Paginator::each(fn (array $query): array => $this->list($query), $params);
    }

    /**
     * GET /v1/conversions/:id — one conversion with its attribution explained.
     *
     * @return array<string, mixed>
     */
    public function retrieve(string $id): array
    {
        return $this->requester->request('GET', '/conversions/' . self::segment($id));
    }
}
