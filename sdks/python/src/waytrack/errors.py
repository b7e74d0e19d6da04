"""The two exceptions the library raises."""

from typing import Any, Optional


class WaytrackError(Exception):
    """The API answered with an error (or with something that is not the API's envelope).

    Attributes come from the error envelope: ``code`` (e.g. ``"store_not_found"``), ``status``
    (HTTP status), ``message``, ``request_id`` (quote it when reporting a problem) and
    ``details`` (e.g. ``{"field": "customerData.email", "reason": "invalid_format"}``, or None).
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: Optional[int] = None,
        request_id: Optional[str] = None,
        details: Optional[Any] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.details = details

    def __str__(self) -> str:
        where = f" {self.status}" if self.status is not None else ""
        request = f" [{self.request_id}]" if self.request_id else ""
        return f"{self.code}{where}: {self.message}{request}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, status={self.status!r}, "
            f"message={self.message!r}, request_id={self.request_id!r}, details={self.details!r})"
        )


class WaytrackConnectionError(WaytrackError):
    """The API could not be reached: connection refused or reset, timeout, DNS or TLS failure.

    Raised after the retries are spent (a certificate that fails verification is not retried:
    it will not verify on the next try either). ``code`` is ``"connection_error"``, ``status``
    is None, and the underlying exception is chained as ``__cause__``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, code="connection_error")
