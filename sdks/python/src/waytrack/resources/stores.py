"""/v1/stores: create, list, retrieve, update (deactivate and reactivate with ``status``)."""

from typing import Any, Iterator, Mapping, Optional

from .._params import UNSET, api_fields, path_segment
from ..objects import ApiObject, Page
from ._base import Resource, walk


class Destinations(Resource):
    """A store's ad platforms (``meta``, ``google_ads``, ``tiktok``): ``wt.stores.destinations``."""

    def list(self, store_id: str) -> ApiObject:
        """Every platform with ``configured`` and its settings (secrets never returned): ``destinations``."""
        return self._get(f"/stores/{path_segment(store_id, 'store_id')}/destinations")

    def put(self, store_id: str, kind: str, settings: Mapping[str, Any]) -> ApiObject:
        """Configures one platform; ``settings`` as the API names them (``{"pixelCode": ..., "accessToken": ...}``,
        ``{"customerId": ..., "conversionAction": ..., "oauth": {...}}`` for Google through the Data Manager API,
        ``{"api": "google_ads_api", ..., "developerToken": ...}`` for the Google Ads API). A secret left out keeps
        the stored one."""
        path = f"/stores/{path_segment(store_id, 'store_id')}/destinations/{path_segment(kind, 'kind')}"
        return self._put(path, dict(settings))

    def delete(self, store_id: str, kind: str) -> ApiObject:
        """Stops forwarding to one platform."""
        return self._delete(f"/stores/{path_segment(store_id, 'store_id')}/destinations/{path_segment(kind, 'kind')}")


class SpendSources(Resource):
    """A store's spend sources (``meta``, ``google_ads``, ``tiktok``; api.md §11): ``wt.stores.spend_sources``."""

    def list(self, store_id: str) -> ApiObject:
        """Every platform's source with ``configured``, ``accounts``, ``status`` (never, ok, failing),
        ``lastSyncedAt``, ``syncedThrough``, ``lastError`` and its settings (secrets never returned): ``spendSources``."""
        return self._get(f"/stores/{path_segment(store_id, 'store_id')}/spend-sources")

    def put(self, store_id: str, kind: str, settings: Mapping[str, Any]) -> ApiObject:
        """Connects one platform's ad accounts; ``settings`` as the API names them
        (``{"adAccountIds": ["act_..."], "accessToken": ...}``, ``{"customerIds": [...], "developerToken": ...,
        "oauth": {...}}``, ``{"advertiserIds": [...]}``, and ``backfillDays``). A secret left out keeps the stored one,
        or else the store's destination of that kind is used. The backfill runs in the background."""
        path = f"/stores/{path_segment(store_id, 'store_id')}/spend-sources/{path_segment(kind, 'kind')}"
        return self._put(path, dict(settings))

    def delete(self, store_id: str, kind: str) -> ApiObject:
        """Stops syncing one platform's spend (the spend already synced stays)."""
        return self._delete(f"/stores/{path_segment(store_id, 'store_id')}/spend-sources/{path_segment(kind, 'kind')}")

    def sync(self, store_id: str, kind: str) -> ApiObject:
        """Runs the sync now (202: it runs in the background; read ``list`` for its status)."""
        path = f"/stores/{path_segment(store_id, 'store_id')}/spend-sources/{path_segment(kind, 'kind')}/sync"
        return self._post(path, {})


class Stores(Resource):
    def __init__(self, transport: Any) -> None:
        super().__init__(transport)
        self.destinations = Destinations(transport)
        self.spend_sources = SpendSources(transport)

    def create(
        self,
        *,
        name: str,
        domain: str,
        platform: str,
        pixel_id: Optional[str] = UNSET,
        capi_access_token: Optional[str] = UNSET,
        capi_test_event_code: Optional[str] = UNSET,
        currency: Optional[str] = UNSET,
        timezone: Optional[str] = UNSET,
        attribution_window_days: Optional[int] = UNSET,
        min_confidence: Optional[int] = UNSET,
        default_consent: Optional[Mapping[str, str]] = UNSET,
    ) -> ApiObject:
        """Creates a store and returns it. ``platform`` is one of shopify, woocommerce,
        bigcommerce, magento, wix, squarespace, custom."""
        body = api_fields(
            {
                "name": name,
                "domain": domain,
                "platform": platform,
                "pixel_id": pixel_id,
                "capi_access_token": capi_access_token,
                "capi_test_event_code": capi_test_event_code,
                "currency": currency,
                "timezone": timezone,
                "attribution_window_days": attribution_window_days,
                "min_confidence": min_confidence,
                "default_consent": default_consent,
            }
        )
        return self._post("/stores", body)

    def retrieve(self, store_id: str) -> ApiObject:
        return self._get(f"/stores/{path_segment(store_id, 'store_id')}")

    def update(
        self,
        store_id: str,
        *,
        name: str = UNSET,
        domain: str = UNSET,
        platform: str = UNSET,
        pixel_id: Optional[str] = UNSET,
        capi_access_token: Optional[str] = UNSET,
        capi_test_event_code: Optional[str] = UNSET,
        currency: str = UNSET,
        timezone: str = UNSET,
        attribution_window_days: int = UNSET,
        min_confidence: int = UNSET,
        status: str = UNSET,
        default_consent: Optional[Mapping[str, str]] = UNSET,
    ) -> ApiObject:
        """Changes the given fields only. ``None`` clears ``pixel_id``, ``capi_access_token`` or
        ``capi_test_event_code``, and sets ``default_consent`` back to all granted; ``status="inactive"`` deactivates, ``"active"`` reactivates."""
        body = api_fields(
            {
                "name": name,
                "domain": domain,
                "platform": platform,
                "pixel_id": pixel_id,
                "capi_access_token": capi_access_token,
                "capi_test_event_code": capi_test_event_code,
                "currency": currency,
                "timezone": timezone,
                "attribution_window_days": attribution_window_days,
                "min_confidence": min_confidence,
                "status": status,
                "default_consent": default_consent,
            },
            keep_none=True,
        )
        return self._patch(f"/stores/{path_segment(store_id, 'store_id')}", body)

    def list(
        self,
        *,
        status: Optional[str] = UNSET,
        limit: Optional[int] = UNSET,
        cursor: Optional[str] = UNSET,
    ) -> Page:
        """One page of stores, newest first (``items`` are stores; the response's ``stores``)."""
        return self._page("/stores", "stores", {"status": status, "limit": limit, "cursor": cursor})

    def list_all(self, *, status: Optional[str] = UNSET, limit: Optional[int] = UNSET) -> Iterator[ApiObject]:
        """Every store, page after page (``limit`` is the page size)."""
        return walk(self.list, {"status": status, "limit": limit})
