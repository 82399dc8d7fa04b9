"""The `retry-after` header read the one way every adapter needs it. Its own module, free of
urllib3 and requests, so importing the GitHub adapter for its errors loads no HTTP library."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from ai_context.core.fields import utc, whole


def retry_after(value: str) -> float | None:
    """Seconds a `retry-after` header asks for: a number of seconds, or an HTTP date (RFC
    9110; a date already past is no wait); None when it is absent or neither."""
    value = value.strip()
    if (seconds := whole(value)) is not None:
        return float(seconds)
    try:
        when = utc(parsedate_to_datetime(value))
    except (TypeError, ValueError, IndexError, OverflowError):  # Overflow: year 9999, -0100
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
