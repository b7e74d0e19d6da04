"""The client: configuration, TLS trust, and one attribute per API resource."""

import ssl
from typing import Any, Mapping, Optional, Union

from ._http import Transport
from .resources import AdSpend, Analytics, Clicks, Conversions, Stores, Track

DEFAULT_BASE_URL = "https://localhost:8443/v1"


def _ssl_context(ca_file: Optional[str], ca_data: Optional[Union[str, bytes]]) -> ssl.SSLContext:
    """The system's trusted roots, plus the given certificate(s) (e.g. a server's self-signed one).

    Verification is never switched off: a development server is trusted by naming its
    certificate, not by trusting everything.
    """
    context = ssl.create_default_context()
    if ca_file is not None:
        context.load_verify_locations(cafile=ca_file)
    if ca_data is not None:
        if isinstance(ca_data, bytes) and ca_data.lstrip().startswith(b"-----BEGIN"):
            # load_verify_locations reads bytes as DER and str as PEM: PEM bytes become text.
            ca_data = ca_data.decode("ascii")
        context.load_verify_locations(cadata=ca_data)
    return context


class Waytrack:
    """A Waytrack API client.

    >>> wt = Waytrack(api_key="wt_live_...", base_url="https://track.example.com/v1")
    >>> wt.track.click(fbclid="IwAR...", store_id="st_...", landing_page="https://shop.example.com/?fbclid=IwAR...")

    ``ca_file`` (a PEM path) or ``ca_data`` (PEM text or bytes, or DER bytes) add a certificate
    to trust, for the server's self-signed development certificate. ``timeout`` is in seconds,
    per connect and per read. Network errors, timeouts, 429 and 5xx are retried up to
    ``max_retries`` times with exponential backoff and full jitter starting at
    ``initial_backoff`` seconds and capped at ``max_backoff``, never shorter than the
    server's ``Retry-After``.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        ca_file: Optional[str] = None,
        timeout: float = 10,
        max_retries: int = 2,
        *,
        ca_data: Optional[Union[str, bytes]] = None,
        initial_backoff: float = 0.5,
        max_backoff: float = 8.0,
    ) -> None:
        if not isinstance(api_key, str) or not api_key:
            raise ValueError("api_key is required (wt_live_… or wt_test_…)")
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValueError("max_retries must be an integer ≥ 0")
        if timeout <= 0:
            raise ValueError("timeout must be > 0 seconds")
        if initial_backoff < 0 or max_backoff < 0:
            raise ValueError("initial_backoff and max_backoff must be ≥ 0 seconds")
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self._transport = Transport(
            api_key=api_key,
            base_url=base_url,
            ssl_context=_ssl_context(ca_file, ca_data),
            timeout=timeout,
            max_retries=max_retries,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
        )
        self.track = Track(self._transport)
        self.stores = Stores(self._transport)
        self.conversions = Conversions(self._transport)
        self.clicks = Clicks(self._transport)
        self.analytics = Analytics(self._transport)
        self.ad_spend = AdSpend(self._transport)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Optional[Mapping[str, Any]] = None,
    ) -> Any:
        """Any other endpoint (e.g. ``POST /conversions/{id}/reattribute``), with the same
        authentication, retries and errors. ``path`` is relative to the base URL; ``query`` and
        ``body`` use the API's names as given. Returns the envelope's ``data``."""
        given = {name: value for name, value in (query or {}).items() if value is not None}
        return self._transport.request(method.upper(), path, query=given, body=body)

    def __repr__(self) -> str:
        return f"<Waytrack base_url={self.base_url!r}>"
