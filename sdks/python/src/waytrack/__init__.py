"""Waytrack: Python client for the Waytrack conversion-tracking and attribution API.

Standard library only. See README.md for the quick start.
"""

from ._version import __version__
from .client import DEFAULT_BASE_URL, Waytrack
from .errors import WaytrackConnectionError, WaytrackError
from .objects import ApiObject, Page
from .webhooks import WebhookVerificationError
from .webhooks import verify as verify_webhook

__all__ = [
    "DEFAULT_BASE_URL",
    "ApiObject",
    "Page",
    "Waytrack",
    "WaytrackConnectionError",
    "WaytrackError",
    "WebhookVerificationError",
    "__version__",
    "verify_webhook",
]
