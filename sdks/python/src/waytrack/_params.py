"""Turning Python arguments into the API's request: camelCase names, JSON bodies, query strings."""

import datetime
import decimal
import json
from typing import Any, Dict, List, Mapping, Optional
from urllib.parse import quote, urlencode


class _Unset:
    """The default of an argument the caller did not give: it is left out of the request.

    ``None`` cannot play that role where the API gives ``null`` a meaning (``stores.update``
    clears ``pixelId`` with it), so a distinct marker is used everywhere for one rule.
    """

    _instance = None

    def __new__(cls) -> "_Unset":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Any = _Unset()


def to_camel(name: str) -> str:
    """``store_id`` → ``storeId``; a name without underscores is returned unchanged."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_snake(name: str) -> str:
    """``conversionId`` → ``conversion_id`` (for attribute listings)."""
    out: List[str] = []
    for char in name:
        if char.isupper() and out:
            out.append("_")
        out.append(char.lower())
    return "".join(out)


def api_fields(fields: Mapping[str, Any], keep_none: bool = False) -> Dict[str, Any]:
    """Top-level snake_case names → the API's camelCase; nested values are sent exactly as given.

    Unset arguments are dropped. ``None`` is dropped too unless ``keep_none`` (a PATCH, where
    ``null`` clears a field).
    """
    out: Dict[str, Any] = {}
    for name, value in fields.items():
        if value is UNSET or (value is None and not keep_none):
            continue
        out[to_camel(name)] = value
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            # A naive time has no defined instant; guessing UTC or local time would shift events.
            raise TypeError("datetime values must be timezone-aware (e.g. datetime.now(timezone.utc))")
        return value.isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        # The shortest float repr of a money amount is its decimal text ("49.99"), which the
        # server reads back into exact minor units.
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def json_body(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, default=_json_default, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


def query_string(query: Optional[Mapping[str, Any]]) -> str:
    """``?a=1&b=2`` from already-camelCased parameters ('' when there are none)."""
    if not query:
        return ""
    pairs = [(name, _query_value(value)) for name, value in query.items()]
    return "?" + urlencode(pairs, quote_via=quote)


def path_segment(value: str, what: str) -> str:
    """An id placed in a path, escaped so that it can never name a different route."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string")
    return quote(value, safe="")
