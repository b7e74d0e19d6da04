<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** `$wt->clicks`: read recorded clicks (of the key's mode). */
final class Clicks extends Resource
{
    /**
     * GET /v1/clicks — one page, newest first.
     *
     * @param array<string, mixed> $params storeId?, limit?, cursor?
     * @return array<string, mixed> clicks, hasMore, nextCursor
     */
    public function list(array $params = []): array
    {
        return Paginator::page($this->requester->request('GET', '/clicks', $params), 'clicks');
    }

    /**
     * Every matching click, page after page (`limit` sets the page size).
     *
     * @param array<string, mixed> $params storeId?, limit?
     * @return \Generator<int, array<string, mixed>>
     */
    public function listAll(array $params = []): \Generator
    {
        return Paginator::each(fn (array $query): array => $this->list($query), $params);
    }

    /**
     * GET /v1/clicks/:id
     *
     * @return array<string, mixed> the click
     */
    public function retrieve(string $id): array
    {
        return $this->requester->request('GET', '/clicks/' . self::segment($id));
    }
}
