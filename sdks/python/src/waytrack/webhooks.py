"""Verifying webhooks Waytrack sends (Standard Webhooks signatures). Standard library only."""

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union

SECRET_PREFIX = "whsec_"
TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(Exception):
    """The request is not a webhook Waytrack signed with this secret (or it is too old or too new)."""


def _header(headers: Mapping[str, Any], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            if isinstance(value, (list, tuple)):
                return " ".join(str(v) for v in value)
            return str(value)
    raise WebhookVerificationError(f"missing {name} header")


def verify(
    payload: Union[bytes, str],
    headers: Mapping[str, Any],
    secret: str,
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> Any:
    """Check a webhook request and return its event (the parsed JSON body).

    ``payload`` is the body exactly as received; ``headers`` any mapping of the request's
    headers (case-insensitive); ``secret`` the endpoint's ``whsec_...`` secret. Raises
    ``WebhookVerificationError`` unless ``webhook-signature`` holds a ``v1`` HMAC-SHA256 of
    ``"<webhook-id>.<webhook-timestamp>.<body>"`` and the timestamp is within ``tolerance``
    seconds of now. A message may arrive more than once: deduplicate by ``webhook-id``.
    """
    body = payload if isinstance(payload, bytes) else payload.encode("utf-8")
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not a number") from None
    current = time.time() if now is None else now
    if abs(current - sent_at) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too old or too new")
    encoded = secret[len(SECRET_PREFIX):] if secret.startswith(SECRET_PREFIX) else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except ValueError:
        raise WebhookVerificationError("the secret is not a whsec_ secret") from None
    signed = msg_id.encode("utf-8") + b"." + timestamp.encode("utf-8") + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
    for candidate in signatures.split(" "):
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature.encode("ascii", "replace"), expected.encode("ascii")):
            try:
                return json.loads(body.decode("utf-8"))
            except ValueError:
                raise WebhookVerificationError("the body is not JSON") from None
    raise WebhookVerificationError("no matching signature")
