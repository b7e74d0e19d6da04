"""What every resource shares: calls that must answer with an object, and the walk over a list's pages."""

from typing import Any, Callable, Dict, Iterator, Mapping, Optional

from .._http import Transport
from .._params import api_fields
from ..errors import WaytrackError
from ..objects import ApiObject, Page


def _object(data: Any, what: str) -> ApiObject:
    # Every endpoint these resources call answers with a JSON object; anything else is not the API.
    if not isinstance(data, ApiObject):
        raise WaytrackError(f"unexpected response: {what} is not a JSON object", code="invalid_response", status=200)
    return data


class Resource:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def _get(self, path: str, query: Optional[Mapping[str, Any]] = None) -> ApiObject:
        return _object(self._transport.request("GET", path, query=api_fields(query or {})), "data")

    def _post(self, path: str, body: Mapping[str, Any]) -> ApiObject:
        return _object(self._transport.request("POST", path, body=body), "data")

    def _patch(self, path: str, body: Mapping[str, Any]) -> ApiObject:
        return _object(self._transport.request("PATCH", path, body=body), "data")

    def _put(self, path: str, body: Mapping[str, Any]) -> ApiObject:
        return _object(self._transport.request("PUT", path, body=body), "data")

    def _delete(self, path: str) -> ApiObject:
        return _object(self._transport.request("DELETE", path), "data")

    def _page(self, path: str, field: str, query: Mapping[str, Any]) -> Page:
        data = self._get(path, query)
        if not isinstance(data.get(field), list):
            raise WaytrackError(
                f"unexpected response: no {field!r} list in the page", code="invalid_response", status=200
            )
        return Page(data, field)


def walk(fetch: Callable[..., Page], query: Dict[str, Any]) -> Iterator[Any]:
    """Yields every item of every page, fetching the next page only when the previous one is used up.

    ``fetch`` is the resource's own ``list`` (called with ``cursor=``), so the walk sends the same
    filters as one page would; the server binds each cursor to those filters.
    """
    cursor = None
    while True:
        page = fetch(**query, cursor=cursor)
        yield from page.items
        if not page.has_more or not page.next_cursor:
            return
        cursor = page.next_cursor
