"""/v1/stores/:id/ad-spend: record daily ad spend (for ROAS) and list it."""

import datetime
from typing import Any, Iterator, List, Mapping, Optional, Union

from .._params import UNSET, path_segment
from ..objects import ApiObject, Page
from ._base import Resource, walk

Day = Union[str, datetime.date]


class AdSpend(Resource):
    def upsert(self, store_id: str, entries: List[Mapping[str, Any]]) -> ApiObject:
        """Records spend entries, sent as given: ``{"date", "amount", "currency", "platform"
        (default "meta"), "campaignId", "campaignName"}``. An entry replaces the recorded one with
        the same date, platform and campaignId. Returns ``entries`` as stored."""
        return self._post(f"/stores/{path_segment(store_id, 'store_id')}/ad-spend", {"entries": list(entries)})

    def list(
        self,
        store_id: str,
        *,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
        limit: Optional[int] = UNSET,
        cursor: Optional[str] = UNSET,
    ) -> Page:
        """One page of recorded spend, newest day first (``items``; the response's ``entries``)."""
        query = {"start_date": start_date, "end_date": end_date, "limit": limit, "cursor": cursor}
        return self._page(f"/stores/{path_segment(store_id, 'store_id')}/ad-spend", "entries", query)

    def list_all(
        self,
        store_id: str,
        *,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
        limit: Optional[int] = UNSET,
    ) -> Iterator[ApiObject]:
        """Every recorded entry in the range, page after page (``limit`` is the page size)."""
        query = {"store_id": store_id, "start_date": start_date, "end_date": end_date, "limit": limit}
        return walk(self.list, query)
