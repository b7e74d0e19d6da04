<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** `$wt->analytics`: a store's figures over a date range in its time zone. */
final class Analytics extends Resource
{
    /**
     * GET /v1/analytics/metrics
     *
     * @param array<string, mixed> $params storeId, startDate? (YYYY-MM-DD), endDate?
     * @return array<string, mixed> totalClicks, totalConversions, totalRevenue, attributedConversions, attributedRevenue, conversionRate, averageOrderValue, roas, adSpend, currency, …
     */
    public function metrics(array $params): array
    {
        return $this->requester->request('GET', '/analytics/metrics', $params);
    }

    /**
     * GET /v1/analytics/timeseries
     *
     * @param array<string, mixed> $params storeId, startDate?, endDate?, interval? (day|hour)
     * @return array<string, mixed> …, buckets
     */
    public function timeseries(array $params): array
    {
        return $this->requester->request('GET', '/analytics/timeseries', $params);
    }

    /**
     * GET /v1/analytics/breakdown — one page of groups.
     *
     * @param array<string, mixed> $params storeId, by, model?, startDate?, endDate?, limit?, cursor?
     * @return array<string, mixed> …, groups, hasMore, nextCursor
     */
    public function breakdown(array $params): array
    {
        return Paginator::page($this->requester->request('GET', '/analytics/breakdown', $params), 'groups');
    }

    /**
     * Every group of a breakdown, page after page.
     *
     * @param array<string, mixed> $params the parameters of breakdown()
     * @return \Generator<int, array<string, mixed>>
     */
    public function breakdownAll(array $params): \Generator
    {
        return Paginator::each(fn (array $query): array => $this->breakdown($query), $params);
    }

    /**
     * GET /v1/analytics/channels — spend against attributed revenue per channel and campaign (api.md §11).
     *
     * @param array<string, mixed> $params storeId, startDate?, endDate?, model? (last_click, first_click, linear, time_decay, position_based)
     * @return array<string, mixed> …, channels (each with campaigns), totals (spend, netRevenue, mer), warnings
     */
    public function channels(array $params): array
    {
        return $this->requester->request('GET', '/analytics/channels', $params);
    }

    /**
     * GET /v1/analytics/tracking-health — what would make the figures wrong, each item with its type and a message.
     *
     * @param array<string, mixed> $params storeId, startDate?, endDate?
     * @return array<string, mixed> …, items
     */
    public function trackingHealth(array $params): array
    {
        return $this->requester->request('GET', '/analytics/tracking-health', $params);
    }

    /**
     * GET /v1/analytics/cohorts — first-purchase cohorts by month or channel.
     *
     * @param array<string, mixed> $params storeId, startDate?, endDate?, by? (month|channel)
     * @return array<string, mixed> …, cohorts (customers, spend, cac, netRevenuePerCustomer d0…d365, paybackDays), warnings
     */
    public function cohorts(array $params): array
    {
        return $this->requester->request('GET', '/analytics/cohorts', $params);
    }
}
