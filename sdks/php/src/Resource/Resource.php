<?php

declare(strict_types=1);

namespace Waytrack\Resource;

use Waytrack\Http\Requester;

/** What every resource shares: the requester, and safe paths built from caller-given ids. */
abstract class Resource
{
    public function __construct(protected readonly Requester $requester)
    {
    }

    /**
     * An id as one path segment. An empty id is refused here: `/stores/` would otherwise quietly
     * become the list endpoint.
     */
    protected static function segment(string $id): string
    {
        if ($id === '') {
            throw new \InvalidArgumentException('an id is required');
        }
        return rawurlencode($id);
    }
}
