"""/v1/clicks: list and retrieve recorded clicks."""

from typing import Iterator, Optional

from .._params import UNSET, path_segment
from ..objects import ApiObject, Page
from ._base import Resource, walk


class Clicks(Resource):
    def retrieve(self, click_id: str) -> ApiObject:
        return self._get(f"/clicks/{path_segment(click_id, 'click_id')}")

    def list(
        self,
        *,
        store_id: Optional[str] = UNSET,
        limit: Optional[int] = UNSET,
        cursor: Optional[str] = UNSET,
    ) -> Page:
        """One page of clicks, newest first (``items`` are clicks; the response's ``clicks``)."""
        return self._page("/clicks", "clicks", {"store_id": store_id, "limit": limit, "cursor": cursor})

    def list_all(self, *, store_id: Optional[str] = UNSET, limit: Optional[int] = UNSET) -> Iterator[ApiObject]:
        """Every click, page after page (``limit`` is the page size)."""
        return walk(self.list, {"store_id": store_id, "limit": limit})
