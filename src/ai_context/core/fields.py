"""The field checks of the plain models built from outside input without pydantic (a block, a
cache entry, a finding: the agent commands import no pydantic), the one rule for times (UTC),
and the one way a problem reads, `loc: msg` with `loc` a path (`plan.0.text`), pydantic's too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

SHOWN = 5  # problems listed in one message; the rest are counted


class FieldError(ValueError):
    def __init__(self, loc: str, msg: str) -> None:
        super().__init__(f"{loc}: {msg}")
        self.loc, self.msg = loc, msg


def explain(
    exc: ValidationError,
    section: str = "",
    unknown: str = "",
    name: Callable[[str], str] = str,
) -> str:
    """pydantic's problems as `where: message; ...`: `where` is the location joined with dots
    (as NAME shows it) after SECTION, UNKNOWN (when given) says what to do with a key the model
    does not know, and pydantic's "Value error, " is dropped."""
    problems = []
    for error in exc.errors(include_url=False):
        loc = ".".join(map(str, error["loc"]))
        where = ".".join(filter(None, (section, loc and name(loc))))
        message = error["msg"].removeprefix("Value error, ")
        if unknown and error["type"] == "extra_forbidden":
            message = f"unknown key; {unknown}"
        problems.append(f"{where}: {message}" if where else message)
    more = len(problems) - SHOWN
    return "; ".join(problems[:SHOWN]) + (f" (and {more} more)" if more > 0 else "")


def as_text(loc: str, value: object, error: type[FieldError] = FieldError) -> str:
    """VALUE when it is a string; ERROR at LOC otherwise."""
    if not isinstance(value, str):
        raise error(loc, f"must be text, not {_kind(value)}")
    return value


def whole(text: str, max_digits: int = 18) -> int | None:
    """TEXT, ASCII digits only (no sign, no blanks), as an int; None otherwise or past
    MAX_DIGITS digits: no count, id or time read is longer, and int() raises past 4300."""
    if len(text) > max_digits or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def as_whole(loc: str, value: object, error: type[FieldError] = FieldError) -> int:
    """VALUE as an int: an int, a whole float (`12.0`) or digits (`"12"`), as a file edited by
    hand may hold them; never a bool."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    if isinstance(value, str) and (number := whole(value.strip())) is not None:
        return number
    raise error(loc, f"must be a whole number, not {_kind(value)}")


def utc(value: datetime) -> datetime:
    """VALUE in UTC; a time without an offset (typed by a person, read from a file) is UTC.
    ValueError when UTC has no such time (`0001-01-01T00:00:00+01:00`)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value if value.tzinfo is UTC else value.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"out of range in UTC ({value.isoformat()})") from None


def time_after(stamp: datetime, span: timedelta) -> datetime | None:
    """STAMP + SPAN; None past the calendar's end (a stamp in issue text may be year 9999), as
    a time that never comes."""
    try:
        return stamp + span
    except OverflowError:
        return None


def as_time(loc: str, value: object, error: type[FieldError] = FieldError) -> datetime:
    """A datetime, or ISO 8601 text (`2026-05-26T15:00:00Z`), in UTC (see `utc`)."""
    if isinstance(value, str):
        try:
            return utc(datetime.fromisoformat(value))
        except ValueError:
            raise error(loc, f"{value!r} is not an ISO 8601 time") from None
    if not isinstance(value, datetime):
        raise error(loc, f"must be a time, not {_kind(value)}")
    return utc(value)


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__
