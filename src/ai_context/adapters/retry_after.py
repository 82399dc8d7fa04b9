"""The `retry-after` and `Date` headers read the one way every adapter needs them. Its own
module, free of urllib3 and requests, so importing the GitHub adapter for its errors loads no
HTTP library."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from ai_context.core.fields import utc, whole


def http_time(text: str | None) -> datetime | None:
    """An HTTP date (a `Date` or `retry-after` header) in UTC, `-0000` too; None when TEXT is
    none or past the calendar once in UTC."""
    try:
        return utc(parsedate_to_datetime(text)) if text else None
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def retry_after(value: str) -> float | None:
    """Seconds a `retry-after` header asks for: a number of seconds, or an HTTP date (RFC
    9110; a date already past is no wait); None when it is absent or neither."""
    value = value.strip()
    if (seconds := whole(value)) is not None:
        return float(seconds)
    when = http_time(value)
    return None if when is None else max(0.0, (when - datetime.now(UTC)).total_seconds())
