<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Waytrack\Resource\Paginator;

final class PaginatorTest extends TestCase
{
    /** @var list<array<string, mixed>> */
    private array $queries = [];

    /** Three pages of items 1–5, linked by cursors. */
    private function pages(): \Closure
    {
        $pages = [
            '' => ['clicks' => [['n' => 1], ['n' => 2]], 'hasMore' => true, 'nextCursor' => 'c2'],
            'c2' => ['clicks' => [['n' => 3], ['n' => 4]], 'hasMore' => true, 'nextCursor' => 'c3'],
            'c3' => ['clicks' => [['n' => 5]], 'hasMore' => false, 'nextCursor' => null],
        ];
        return function (array $query) use ($pages): array {
            $this->queries[] = $query;
            return Paginator::page($pages[$query['cursor'] ?? ''], 'clicks');
        };
    }

    public function testWalksEveryPageKeepingTheFilters(): void
    {
        $items = iterator_to_array(Paginator::each($this->pages(), ['storeId' => 'st_1', 'limit' => 2]));

        self::assertSame([1, 2, 3, 4, 5], array_column($items, 'n'));
        self::assertSame([
            ['storeId' => 'st_1', 'limit' => 2],
            ['storeId' => 'st_1', 'limit' => 2, 'cursor' => 'c2'],
            ['storeId' => 'st_1', 'limit' => 2, 'cursor' => 'c3'],
        ], $this->queries);
    }

    public function testPagesAreFetchedOnlyWhenNeeded(): void
    {
        foreach (Paginator::each($this->pages(), []) as $item) {
            self::assertSame(1, $item['n']);
            break;
        }
        self::assertCount(1, $this->queries);
    }

    public function testAnEmptyListYieldsNothing(): void
    {
        $empty = static fn (array $query): array => Paginator::page(['stores' => [], 'hasMore' => false, 'nextCursor' => null], 'stores');
        self::assertSame([], iterator_to_array(Paginator::each($empty, [])));
    }

    public function testAPageNamesItsListItemsToo(): void
    {
        $page = Paginator::page(['stores' => [['id' => 'st_1']], 'hasMore' => false, 'nextCursor' => null], 'stores');
        self::assertSame([['id' => 'st_1']], $page['items']);
        self::assertSame($page['stores'], $page['items']);
    }
}
