"""Verifying webhooks Waytrack sends (Standard Webhooks signatures). Standard library only."""

import base64
import binascii
import hashlib
import hmac
import json
import re
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


def _key_of(secret: str) -> bytes:
    """The key of a ``whsec_`` secret: the base64-decoded part after the prefix (a bare base64 secret too)."""
    encoded = secret[len(SECRET_PREFIX):] if secret.startswith(SECRET_PREFIX) else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise ValueError("the webhook secret is not a whsec_ secret (the one shown when the endpoint was made)")
    return key


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
    A ``secret`` that is not a ``whsec_`` secret raises ``ValueError``: the receiver's
    configuration is at fault, not the request. Integers in the event are exact (``json``).
    """
    key = _key_of(secret)
    body = payload if isinstance(payload, bytes) else payload.encode("utf-8")
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    # Digits only: int() would also take "+1", " 1" and "1_000", none of them a Standard Webhooks timestamp.
    if not re.fullmatch(r"[0-9]{1,15}", timestamp):
        raise WebhookVerificationError("webhook-timestamp is not a number of seconds")
    sent_at = int(timestamp)
    current = time.time() if now is None else now
    if current - sent_at > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too old")
    if sent_at - current > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too new")
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
