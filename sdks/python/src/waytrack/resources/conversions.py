"""/v1/conversions: list and retrieve recorded conversions."""

import datetime
from typing import Iterator, Optional, Union

from .._params import UNSET, path_segment
from ..objects import ApiObject, Page
from ._base import Resource, walk

Day = Union[str, datetime.date]


class Conversions(Resource):
    def retrieve(self, conversion_id: str) -> ApiObject:
        """One conversion, with ``attribution`` (winning signal, score and every touchpoint)."""
        return self._get(f"/conversions/{path_segment(conversion_id, 'conversion_id')}")

    def list(
        self,
        *,
        store_id: Optional[str] = UNSET,
        event_type: Optional[str] = UNSET,
        attributed: Optional[bool] = UNSET,
        capi_status: Optional[str] = UNSET,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
        limit: Optional[int] = UNSET,
        cursor: Optional[str] = UNSET,
    ) -> Page:
        """One page of conversions, newest event first (``items``; the response's ``conversions``).

        Dates are ``YYYY-MM-DD`` strings or ``datetime.date``, inclusive, in the store's time zone.
        """
        query = {
            "store_id": store_id,
            "event_type": event_type,
            "attributed": attributed,
            "capi_status": capi_status,
            "start_date": start_date,
            "end_date": end_date,
            "limit": limit,
            "cursor": cursor,
        }
        return self._page("/conversions", "conversions", query)

    def list_all(
        self,
        *,
        store_id: Optional[str] = UNSET,
        event_type: Optional[str] = UNSET,
        attributed: Optional[bool] = UNSET,
        capi_status: Optional[str] = UNSET,
        start_date: Optional[Day] = UNSET,
        end_date: Optional[Day] = UNSET,
        limit: Optional[int] = UNSET,
    ) -> Iterator[ApiObject]:
        """Every matching conversion, page after page (``limit`` is the page size)."""
        query = {
            "store_id": store_id,
            "event_type": event_type,
            "attributed": attributed,
            "capi_status": capi_status,
            "start_date": start_date,
            "end_date": end_date,
            "limit": limit,
        }
        return walk(self.list, query)
