"""What calls return: the API's JSON objects, readable by the API's names and as snake_case attributes."""

from typing import Any, Dict, Iterator, List, Optional, Union

from ._params import to_camel, to_snake


class ApiObject(Dict[str, Any]):
    """A JSON object of the API: a plain ``dict`` keyed by the API's names (``r["conversionId"]``)
    that also answers snake_case attributes (``r.conversion_id``), recursively.

    It stays a real dict so that it can be compared, copied, pickled and passed to
    ``json.dumps`` unchanged. A key that shares its name with a dict method (``items``,
    ``keys``, ``values``, ``get``…) is read with ``r["items"]``.
    """

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails. Dunder names are left alone so that copy,
        # pickle and friends see an ordinary dict.
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self:
            return self[name]
        camel = to_camel(name)
        if camel in self:
            return self[camel]
        raise AttributeError(f"{type(self).__name__} has no field {name!r} (fields: {', '.join(self)})")

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | {to_snake(key) for key in self if isinstance(key, str)})


def wrap(value: Any) -> Any:
    """Parsed JSON → the same data with every object an ``ApiObject``."""
    if isinstance(value, dict):
        return ApiObject((key, wrap(item)) for key, item in value.items())
    if isinstance(value, list):
        return [wrap(item) for item in value]
    return value


class Page:
    """One page of a list: ``items``, ``has_more``, ``next_cursor``, and the whole response ``data``.

    Not a dict, so that ``page.items`` can be the list the contract names. Anything else in the
    response (``page["stores"]``, ``page["hasMore"]``, a breakdown's ``page.store_id``) is
    read through to ``data``. Iterating a page walks its items.
    """

    def __init__(self, data: ApiObject, field: str) -> None:
        self.data = data
        self.field = field
        self.items: List[Any] = list(data[field])
        self.has_more: bool = bool(data.get("hasMore", False))
        self.next_cursor: Optional[str] = data.get("nextCursor")

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, key: Union[int, str]) -> Any:
        if isinstance(key, int):
            return self.items[key]
        if key == "items":
            return self.items
        return self.data[key]

    def __getattr__(self, name: str) -> Any:
        data = self.__dict__.get("data")
        # A half-built page (e.g. during unpickling) has no data yet: no recursion into it.
        if data is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(data, name)

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.data)

    def __repr__(self) -> str:
        return (
            f"<Page {self.field}: {len(self.items)} items, has_more={self.has_more}, next_cursor={self.next_cursor!r}>"
        )
