<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** Walks a paginated list page by page, following `nextCursor` until `hasMore` is false. */
final class Paginator
{
    /**
     * One page as the API sends it, plus `items`: its list under one name whatever the resource
     * (the same array the API names `stores`, `conversions`, `clicks`, `entries` or `groups`).
     *
     * @param array<string, mixed> $data the envelope's `data`
     * @return array<string, mixed>
     */
    public static function page(array $data, string $itemsKey): array
    {
        $data['items'] = $data[$itemsKey] ?? [];
        return $data;
    }

    /**
     * @param \Closure(array<string, mixed>): array<string, mixed> $fetchPage gets the query, returns one page (with `items`)
     * @param array<string, mixed> $params the caller's filters and `limit` (the page size)
     * @return \Generator<int, array<string, mixed>>
     */
    public static function each(\Closure $fetchPage, array $params): \Generator
    {
        // Pages are fetched lazily: breaking out of a foreach stops the walk without further calls.
        $query = $params;
        while (true) {
            $page = $fetchPage($query);
            foreach ($page['items'] ?? [] as $item) {
                yield $item;
            }
            $cursor = $page['nextCursor'] ?? null;
            if (($page['hasMore'] ?? false) !== true || !is_string($cursor) || $cursor === '') {
                return;
            }
            $query['cursor'] = $cursor;
        }
    }
}
