<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** `$wt->stores`: the account's stores (shared by live and test mode). */
final class Stores extends Resource
{
    public readonly Destinations $destinations;

    public readonly SpendSources $spendSources;

    public function __construct(\Waytrack\Http\Requester $requester)
    {
        parent::__construct($requester);
        $this->destinations = new Destinations($requester);
        $this->spendSources = new SpendSources($requester);
    }

    /**
     * GET /v1/stores — one page.
     *
     * @param array<string, mixed> $params status?, limit?, cursor?
     * @return array<string, mixed> stores, hasMore, nextCursor
     */
    public function list(array $params = []): array
    {
        return Paginator::page($this->requester->request('GET', '/stores', $params), 'stores');
    }

    /**
     * Every store, page after page (`limit` sets the page size).
     *
     * @param array<string, mixed> $params status?, limit?
     * @return \Generator<int, array<string, mixed>>
     */
    public function listAll(array $params = []): \Generator
    {
        return Paginator::each(fn (array $query): array => $this->list($query), $params);
    }

    /**
     * POST /v1/stores — create a store.
     *
     * @param array<string, mixed> $params name, domain, platform, pixelId?, capiAccessToken?, capiTestEventCode?, currency?, timezone?, attributionWindowDays?, minConfidence?, defaultConsent?
     * @param array{idempotencyKey?: string} $options
     * @return array<string, mixed> the store
     */
    public function create(array $params, array $options = []): array
    {
        return $this->requester->request('POST', '/stores', [], $params, $options);
    }

    /**
     * GET /v1/stores/:id
     *
     * @return array<string, mixed> the store
     */
    public function retrieve(string $id): array
    {
        return $this->requester->request('GET', '/stores/' . self::segment($id));
    }

    /**
     * PATCH /v1/stores/:id — change any creatable field or `status` (`inactive` deactivates);
     * null clears pixelId, capiAccessToken or capiTestEventCode.
     *
     * @param array<string, mixed> $params
     * @return array<string, mixed> the store
     */
    public function update(string $id, array $params): array
    {
        return $this->requester->request('PATCH', '/stores/' . self::segment($id), [], $params);
    }
}
