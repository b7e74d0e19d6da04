"""When to retry and how long to wait: pure functions, so they are tested without a server."""

import datetime
import random
from email.utils import parsedate_to_datetime
from typing import Callable, Optional

# A server asking for a longer pause than this is not waited for: the error is raised at once
# and the caller decides, rather than a call silently hanging for minutes.
MAX_RETRY_AFTER = 60.0


def is_retryable_status(status: int) -> bool:
    """429 and 5xx may succeed later; any other 4xx will fail the same way again."""
    return status == 429 or 500 <= status <= 599


def parse_retry_after(value: Optional[str], now: Optional[datetime.datetime] = None) -> Optional[float]:
    """``Retry-After`` in seconds: delta-seconds (what Waytrack sends) or an HTTP date; None if absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        current = now or datetime.datetime.now(datetime.timezone.utc)
        seconds = (when - current).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def backoff_delay(attempt: int, initial: float, maximum: float, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff with full jitter: uniform in [0, min(maximum, initial × 2^attempt)].

    ``attempt`` counts retries already made (0 before the first retry). Full jitter spreads
    the retries of many clients that failed together instead of having them return in step.
    """
    ceiling = min(maximum, initial * (2.0**attempt))
    return rand() * ceiling


def retry_delay(
    attempt: int,
    retry_after: Optional[float],
    initial: float,
    maximum: float,
    rand: Callable[[], float] = random.random,
) -> float:
    """The pause before the next try: the backoff, but never shorter than the server's ``Retry-After``."""
    delay = backoff_delay(attempt, initial, maximum, rand)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay
