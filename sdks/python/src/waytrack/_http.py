"""One API call over HTTPS: headers, the retry loop, and the envelope turned into data or an error."""

import http.client
import json
import ssl
import sys
import time
import uuid
from typing import Any, Dict, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from ._params import json_body, query_string
from ._retry import MAX_RETRY_AFTER, is_retryable_status, parse_retry_after, retry_delay
from ._version import __version__
from .errors import WaytrackConnectionError, WaytrackError
from .objects import wrap

USER_AGENT = f"waytrack-python/{__version__} python/{sys.version_info[0]}.{sys.version_info[1]}"

# Failures of the connection itself. ssl.SSLError and socket.timeout are OSErrors;
# HTTPException covers a server that hung up mid-answer (RemoteDisconnected, IncompleteRead).
_NETWORK_ERRORS = (OSError, http.client.HTTPException)


class _Response:
    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class Transport:
    """Sends requests to one base URL with one key; retries what may succeed on a second try."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        ssl_context: ssl.SSLContext,
        timeout: float,
        max_retries: int,
        initial_backoff: float,
        max_backoff: float,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError(f"base_url must be an absolute https URL, got {base_url!r}")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._base_path = parts.path.rstrip("/")
        self._api_key = api_key
        self._ssl_context = ssl_context
        self._timeout = timeout
        self._max_retries = max_retries
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Optional[Mapping[str, Any]] = None,
    ) -> Any:
        """Performs the call and returns the envelope's ``data``; raises WaytrackError otherwise."""
        target = self._base_path + path + query_string(query)
        headers = {
            "Authorization": f"Bearer {self._api_key}",
            "User-Agent": USER_AGENT,
            "Accept": "application/json",
        }
        payload = None
        if body is not None:
            payload = json_body(body)
            headers["Content-Type"] = "application/json"
        if method == "POST":
            # One key per call, the same on every retry: a POST whose answer was lost is
            # replayed by the server instead of being recorded twice.
            headers["Idempotency-Key"] = str(uuid.uuid4())

        retries = 0
        while True:
            try:
                response = self._send(method, target, headers, payload)
            except ssl.SSLCertVerificationError as error:
                raise WaytrackConnectionError(
                    f"TLS certificate of {self._host} was not trusted ({error.verify_message}); "
                    "for a self-signed development server pass ca_file= or ca_data="
                ) from error
            except _NETWORK_ERRORS as error:
                if retries < self._max_retries:
                    time.sleep(retry_delay(retries, None, self._initial_backoff, self._max_backoff))
                    retries += 1
                    continue
                raise WaytrackConnectionError(
                    f"could not reach {self._scheme}://{self._host}{_port_text(self._port)} "
                    f"after {retries + 1} attempt(s): {_describe(error)}"
                ) from error

            if is_retryable_status(response.status) and retries < self._max_retries:
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                if retry_after is None or retry_after <= MAX_RETRY_AFTER:
                    time.sleep(retry_delay(retries, retry_after, self._initial_backoff, self._max_backoff))
                    retries += 1
                    continue
            return _result(response)

    def _send(self, method: str, target: str, headers: Dict[str, str], payload: Optional[bytes]) -> _Response:
        connection: http.client.HTTPConnection
        if self._scheme == "https":
            connection = http.client.HTTPSConnection(
                self._host, self._port, timeout=self._timeout, context=self._ssl_context
            )
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        try:
            connection.request(method, target, body=payload, headers=headers)
            answer = connection.getresponse()
            return _Response(answer.status, answer.headers, answer.read())
        finally:
            connection.close()


def _port_text(port: Optional[int]) -> str:
    return f":{port}" if port else ""


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _envelope(response: _Response) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """The parsed body if it is a JSON object, and the request id (header first, then meta)."""
    request_id = response.headers.get("Request-Id")
    try:
        parsed = json.loads(response.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, request_id
    if not isinstance(parsed, dict):
        return None, request_id
    meta = parsed.get("meta")
    if request_id is None and isinstance(meta, dict):
        request_id = meta.get("requestId")
    return parsed, request_id


def _result(response: _Response) -> Any:
    envelope, request_id = _envelope(response)
    if envelope is not None and 200 <= response.status < 300 and envelope.get("success") is True:
        return wrap(envelope.get("data"))
    error = envelope.get("error") if envelope is not None else None
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        raise WaytrackError(
            str(error.get("message") or error["code"]),
            code=error["code"],
            status=response.status,
            request_id=request_id,
            details=wrap(error.get("details")),
        )
    # Not the API's envelope: a proxy's error page, a truncated body, another service.
    snippet = response.body[:200].decode("utf-8", "replace").strip()
    raise WaytrackError(
        f"unexpected response (HTTP {response.status}): {snippet or 'empty body'}",
        code="invalid_response",
        status=response.status,
        request_id=request_id,
    )
