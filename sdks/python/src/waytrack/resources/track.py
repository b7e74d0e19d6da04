"""POST /v1/track/click, POST /v1/track/conversion, POST /v1/track/identify and POST /v1/track/batch."""

import datetime
from typing import Any, Iterable, List, Mapping, Optional, Union

from .._params import UNSET, api_fields, to_camel
from ..objects import ApiObject
from ._base import Resource

Time = Union[str, datetime.datetime]


def _platform_ids(epik: Any, sc_cid: Any, rdt_cid: Any, li_fat_id: Any) -> Mapping[str, Any]:
    """Pinterest's, Snapchat's, Reddit's and LinkedIn's click ids under the platforms' own names (not camelCased)."""
    ids = {"epik": epik, "ScCid": sc_cid, "rdt_cid": rdt_cid, "li_fat_id": li_fat_id}
    return {name: value for name, value in ids.items() if value is not UNSET and value is not None}


class Track(Resource):
    def click(
        self,
        *,
        store_id: str,
        landing_page: str,
        fbclid: Optional[str] = UNSET,
        gclid: Optional[str] = UNSET,
        gbraid: Optional[str] = UNSET,
        wbraid: Optional[str] = UNSET,
        ttclid: Optional[str] = UNSET,
        msclkid: Optional[str] = UNSET,
        epik: Optional[str] = UNSET,
        sc_cid: Optional[str] = UNSET,
        rdt_cid: Optional[str] = UNSET,
        li_fat_id: Optional[str] = UNSET,
        ttp: Optional[str] = UNSET,
        referrer: Optional[str] = UNSET,
        ip_address: Optional[str] = UNSET,
        user_agent: Optional[str] = UNSET,
        timestamp: Optional[Time] = UNSET,
        fingerprint: Optional[str] = UNSET,
        fbp: Optional[str] = UNSET,
        visitor_id: Optional[str] = UNSET,
        consent: Optional[Mapping[str, str]] = UNSET,
        limited_data_use: Optional[Union[bool, Mapping[str, str]]] = UNSET,
    ) -> ApiObject:
        """Records an ad click. Returns ``clickId``, each click id given, ``tracked``, ``timestamp``, ``duplicate``.

        At least one click id (``fbclid``, ``gclid``, ``gbraid``, ``wbraid``, ``ttclid``,
        ``msclkid``, ``epik``, ``sc_cid`` (sent as ``ScCid``), ``rdt_cid``, ``li_fat_id``) is
        needed, here or in ``landing_page``'s query. Re-sending an id already
        recorded for the store returns the original click with ``duplicate: True``.
        ``consent`` (``{"adStorage": "denied", ...}``) and ``limited_data_use`` (``True`` or
        ``{"country": "US", "state": "CA"}``) are sent as given (docs/consent.md).
        """
        body = api_fields(
            {
                "fbclid": fbclid,
                "gclid": gclid,
                "gbraid": gbraid,
                "wbraid": wbraid,
                "ttclid": ttclid,
                "msclkid": msclkid,
                "ttp": ttp,
                "store_id": store_id,
                "landing_page": landing_page,
                "referrer": referrer,
                "ip_address": ip_address,
                "user_agent": user_agent,
                "timestamp": timestamp,
                "fingerprint": fingerprint,
                "fbp": fbp,
                "visitor_id": visitor_id,
                "consent": consent,
                "limited_data_use": limited_data_use,
            }
        )
        body.update(_platform_ids(epik, sc_cid, rdt_cid, li_fat_id))
        return self._post("/track/click", body)

    def conversion(
        self,
        *,
        store_id: str,
        event_type: str,
        order_id: str,
        event_value: Union[int, float, Any],
        currency: str,
        customer_data: Optional[Mapping[str, Any]] = UNSET,
        fingerprint: Optional[str] = UNSET,
        products: Optional[List[Mapping[str, Any]]] = UNSET,
        click_id: Optional[str] = UNSET,
        fbclid: Optional[str] = UNSET,
        fbc: Optional[str] = UNSET,
        fbp: Optional[str] = UNSET,
        gclid: Optional[str] = UNSET,
        gbraid: Optional[str] = UNSET,
        wbraid: Optional[str] = UNSET,
        ttclid: Optional[str] = UNSET,
        msclkid: Optional[str] = UNSET,
        epik: Optional[str] = UNSET,
        sc_cid: Optional[str] = UNSET,
        rdt_cid: Optional[str] = UNSET,
        li_fat_id: Optional[str] = UNSET,
        ttp: Optional[str] = UNSET,
        scid: Optional[str] = UNSET,
        rdt_uuid: Optional[str] = UNSET,
        visitor_id: Optional[str] = UNSET,
        ip_address: Optional[str] = UNSET,
        user_agent: Optional[str] = UNSET,
        event_source_url: Optional[str] = UNSET,
        event_id: Optional[str] = UNSET,
        timestamp: Optional[Time] = UNSET,
        consent: Optional[Mapping[str, str]] = UNSET,
        limited_data_use: Optional[Union[bool, Mapping[str, str]]] = UNSET,
    ) -> ApiObject:
        """Records a conversion and attributes it to the click that caused it.

        ``customer_data`` and ``products`` are sent as given, with the API's names inside
        (``{"email": ..., "firstName": ...}``, ``[{"productId": ..., "quantity": 2}]``), and so
        are ``consent`` (``{"adUserData": "denied"}``) and ``limited_data_use`` (docs/consent.md).
        ``event_value`` may be an int, float or ``decimal.Decimal``. Returns ``conversionId``,
        ``eventType``, ``attributed``, ``attributedTo`` (when attributed), ``capiSent``,
        ``timestamp``, ``duplicate``; the same (store, eventType, orderId) again returns the
        original result with ``duplicate: True``.
        """
        body = api_fields(
            {
                "store_id": store_id,
                "event_type": event_type,
                "order_id": order_id,
                "event_value": event_value,
                "currency": currency,
                "customer_data": customer_data,
                "fingerprint": fingerprint,
                "products": products,
                "click_id": click_id,
                "fbclid": fbclid,
                "fbc": fbc,
                "fbp": fbp,
                "gclid": gclid,
                "gbraid": gbraid,
                "wbraid": wbraid,
                "ttclid": ttclid,
                "msclkid": msclkid,
                "ttp": ttp,
                "scid": scid,
                "rdt_uuid": rdt_uuid,
                "visitor_id": visitor_id,
                "ip_address": ip_address,
                "user_agent": user_agent,
                "event_source_url": event_source_url,
                "event_id": event_id,
                "timestamp": timestamp,
                "consent": consent,
                "limited_data_use": limited_data_use,
            }
        )
        body.update(_platform_ids(epik, sc_cid, rdt_cid, li_fat_id))
        return self._post("/track/conversion", body)

    def identify(
        self,
        *,
        store_id: str,
        visitor_id: Optional[str] = UNSET,
        fbp: Optional[str] = UNSET,
        ttp: Optional[str] = UNSET,
        email: Optional[str] = UNSET,
        phone: Optional[str] = UNSET,
    ) -> ApiObject:
        """Links a browser (``visitor_id``, ``fbp``, ``ttp``) to a person's ``email`` or ``phone``.

        The server normalizes and hashes them (a SHA-256 hex value is taken as it is); a later
        conversion with that email or phone, from any device, has identity evidence for that
        browser's clicks. At least one browser id and one of email and phone. Returns
        ``storeId``, ``identified``, ``links``, ``duplicate`` (the same link again), ``timestamp``.
        """
        body = api_fields(
            {"store_id": store_id, "visitor_id": visitor_id, "fbp": fbp, "ttp": ttp, "email": email, "phone": phone}
        )
        return self._post("/track/identify", body)

    def batch(self, events: Iterable[Mapping[str, Any]]) -> ApiObject:
        """Records 1–500 clicks and conversions in one request, in order.

        Each event is a dict: ``{"type": "click", ...}`` or ``{"type": "conversion", ...}`` with
        the fields of ``click`` or ``conversion``, named as the API names them (``storeId``) or in
        snake_case (``store_id``); nested values (``customerData``, ``products``) are sent as
        given. Returns ``received``, ``failed`` and ``results``: per event, in order, ``index``,
        ``status`` and ``data`` (what ``click``/``conversion`` would return) or ``error``
        (``code``, ``message``, ``details``). Raises only when the request itself fails (not a
        list of 1–500 events, a key without a tracking scope, the network).
        """
        body = {"events": [{to_camel(name): value for name, value in event.items()} for event in events]}
        return self._post("/track/batch", body)
