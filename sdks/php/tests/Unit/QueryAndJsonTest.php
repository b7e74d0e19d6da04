<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Waytrack\Http\Json;
use Waytrack\Http\Query;

final class QueryAndJsonTest extends TestCase
{
    public function testBooleansAreWrittenAsWordsAndNullsLeftOut(): void
    {
        self::assertSame('?attributed=false&limit=5', Query::build(['attributed' => false, 'storeId' => null, 'limit' => 5]));
        self::assertSame('?attributed=true', Query::build(['attributed' => true]));
    }

    public function testValuesAreEncoded(): void
    {
        self::assertSame('?cursor=a%2Bb%2F%3D%3D&q=a%20b%26c', Query::build(['cursor' => 'a+b/==', 'q' => 'a b&c']));
    }

    public function testNoParametersMeansNoQuestionMark(): void
    {
        self::assertSame('', Query::build([]));
        self::assertSame('', Query::build(['storeId' => null]));
    }

    public function testArraysCannotBeQueryValues(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Query::build(['storeId' => ['a', 'b']]);
    }

    public function testAnEmptyBodyIsAnObject(): void
    {
        self::assertSame('{}', Json::encodeBody([]));
    }

    public function testNullsAreSentBecauseTheyClearFields(): void
    {
        self::assertSame('{"pixelId":null,"name":"Acme/Outdoor"}', Json::encodeBody(['pixelId' => null, 'name' => 'Acme/Outdoor']));
    }

    public function testMoneyKeepsItsDecimals(): void
    {
        self::assertSame('{"eventValue":49.99,"amount":10.0}', Json::encodeBody(['eventValue' => 49.99, 'amount' => 10.0]));
    }

    public function testAListIsNotABody(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Json::encodeBody([['date' => '2026-01-01']]);
    }

    public function testDecodeGivesArraysOrNull(): void
    {
        self::assertSame(['data' => ['a' => 1]], Json::decode('{"data":{"a":1}}'));
        self::assertNull(Json::decode('<html>Bad gateway</html>'));
        self::assertNull(Json::decode(''));
    }
}
