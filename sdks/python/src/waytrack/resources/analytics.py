"""/v1/analytics: metrics, timeseries and breakdown of one store."""

import datetime
from typing import Iterator, Optional, Union

from .._params import UNSET
from ..objects import ApiObject, Page
from ._base import Resource, walk

Day = Union[str, datetime.date]


class Analytics(Resource):
    def metrics(
        self,
        *,
        store_id: str,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
    ) -> ApiObject:
        """Headline metrics over an inclusive date range in the store's time zone (default: the
        last 30 days): ``totalClicks``, ``totalConversions``, ``totalRevenue``,
        ``attributedConversions``, ``attributedRevenue``, ``conversionRate``,
        ``averageOrderValue``, ``roas``, ``adSpend``, ``revenueByCurrency``…"""
        return self._get("/analytics/metrics", {"store_id": store_id, "start_date": start_date, "end_date": end_date})

    def timeseries(
        self,
        *,
        store_id: str,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
        interval: Optional[str] = UNSET,
    ) -> ApiObject:
        """The metrics per local ``"day"`` (default) or ``"hour"``: ``buckets``, every one present."""
        query = {"store_id": store_id, "start_date": start_date, "end_date": end_date, "interval": interval}
        return self._get("/analytics/timeseries", query)

    def breakdown(
        self,
        *,
        store_id: str,
        by: str,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
        model: Optional[str] = UNSET,
        limit: Optional[int] = UNSET,
        cursor: Optional[str] = UNSET,
    ) -> Page:
        """One page of groups by a click dimension (``by``: utm_source, utm_medium, utm_campaign,
        utm_content, campaign_id, adset_id, ad_id, landing_page), credited by ``model``
        (last_click, first_click, linear, time_decay, position_based).

        ``items`` are the groups; the range, model and currency are read from the page
        (``page.currency``, ``page["model"]``).
        """
        query = {
            "store_id": store_id,
            "by": by,
            "start_date": start_date,
            "end_date": end_date,
            "model": model,
            "limit": limit,
            "cursor": cursor,
        }
        return self._page("/analytics/breakdown", "groups", query)

    def breakdown_all(
        self,
        *,
        store_id: str,
        by: str,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
        model: Optional[str] = UNSET,
        limit: Optional[int] = UNSET,
    ) -> Iterator[ApiObject]:
        """Every group of the breakdown, page after page (``limit`` is the page size)."""
        query = {
            "store_id": store_id,
            "by": by,
            "start_date": start_date,
            "end_date": end_date,
            "model": model,
            "limit": limit,
        }
        return walk(self.breakdown, query)

    def channels(
        self,
        *,
        store_id: str,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
        model: Optional[str] = UNSET,
    ) -> ApiObject:
        """Spend against attributed revenue per channel and campaign (api.md §11): ``channels`` (each with
        ``campaigns``), ``totals`` (``spend``, ``netRevenue``, ``mer``) and ``warnings``; ``model`` one of the
        breakdown's (default last_click)."""
        query = {"store_id": store_id, "start_date": start_date, "end_date": end_date, "model": model}
        return self._get("/analytics/channels", query)

    def tracking_health(
        self,
        *,
        store_id: str,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
    ) -> ApiObject:
        """What would make the figures wrong, each item with its ``type`` and a ``message`` to act on: ``items``."""
        return self._get("/analytics/tracking-health", {"store_id": store_id, "start_date": start_date, "end_date": end_date})

    def cohorts(
        self,
        *,
        store_id: str,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
        by: Optional[str] = UNSET,
    ) -> ApiObject:
        """First-purchase cohorts by ``"month"`` (default) or ``"channel"``: ``cohorts``, each with ``customers``,
        ``spend``, ``cac``, ``netRevenuePerCustomer`` (``d0`` … ``d365``, present once the cohort is that old) and
        ``paybackDays``."""
        query = {"store_id": store_id, "start_date": start_date, "end_date": end_date, "by": by}
        return self._get("/analytics/cohorts", query)
