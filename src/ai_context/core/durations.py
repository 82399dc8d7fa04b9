"""Human durations such as `90m`, `24h`, `3d`, one rule in every source: a bare number means
hours, whether YAML read it as a number or as text."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Any

from ai_context.core.fields import whole

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION_RE = re.compile(r"(\d{1,6})\s*([smhdw])")
_DURATIONS_RE = re.compile(r"(?:\d{1,6}\s*[smhdw] *)+")


def parse_duration(text: str) -> timedelta:
    """`90m`, `24h`, `3d`, `1d12h`; a bare number is hours. Raises ValueError saying why."""
    raw = text.strip().lower()
    if (hours := whole(raw)) is not None:
        if hours > MAX_HOURS:
            raise ValueError(
                f"cannot read duration {text!r}: a bare number is hours, at most {MAX_HOURS}"
            )
        return timedelta(hours=hours)
    if not _DURATIONS_RE.fullmatch(raw):
        raise ValueError(f"cannot read duration {text!r}: write it like 90m, 24h or 3d")
    seconds = sum(int(number) * _UNITS[unit] for number, unit in _DURATION_RE.findall(raw))
    if seconds <= 0:
        raise ValueError(f"cannot read duration {text!r}: write it like 90m, 24h or 3d")
    if seconds > MAX_SECONDS:
        raise ValueError(f"cannot read duration {text!r}: longer than a thousand years")
    return timedelta(seconds=seconds)


def duration_value(value: Any) -> timedelta:
    """A duration setting from any source: text as parse_duration reads it, a bare number as
    hours (never pydantic's seconds), a timedelta as it is. Raises ValueError saying why."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, str):
        parsed = parse_duration(value)
        if parsed <= timedelta(0):
            raise ValueError(f"{value!r} is not a duration longer than zero")
        return parsed
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a duration: write it like 90m, 24h or 3d")
    if not math.isfinite(value) or value <= 0 or value > MAX_HOURS:
        raise ValueError(
            f"{value!r} is not a duration: a bare number is hours, from 1 to {MAX_HOURS}; "
            "or write it like 90m, 24h or 3d"
        )
    return timedelta(hours=value)


MAX_HOURS = 24 * 366 * 10  # ten years: beyond it a number is a typo, not a duration
MAX_SECONDS = 1000 * 366 * 86400  # far beyond any setting's own limit, far below overflow


def format_duration(delta: timedelta) -> str:
    """The largest units first, two at most: `3d 4h`, `45m`, `0m`."""
    total = int(delta.total_seconds())
    sign = "-" if total < 0 else ""
    total = abs(total)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if total >= size:
            parts.append(f"{total // size}{unit}")
            total %= size
    return sign + (" ".join(parts[:2]) or "0m")
