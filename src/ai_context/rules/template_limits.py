"""The bounds of a template render: MAX_OUTPUT characters and MAX_SECONDS, checked as output is
produced and as `range` loops turn; `*`, `**`, `%` and width specs refuse results past
MAX_OUTPUT before computing them (Jinja's SecurityError). What no check here sees coming is
stopped by the process a user's templates render in (adapters/templates.py)."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any

from jinja2.exceptions import SecurityError
from jinja2.sandbox import safe_range

MAX_OUTPUT = 2_000_000  # characters of one render (a 1,000-task digest is ~0.5 MB)
MAX_SECONDS = 10.0  # of one render
# The widths and precisions of `%` specs (`%-99s`, `%.5f`) and of `{...:spec}` fields.
_PERCENT_SPEC_RE = re.compile(r"%[-#0 +]*(\d*)(?:\.(\d*))?")
_BRACE_SPEC_RE = re.compile(r"\{[^{}]*?:([^{}]*)\}")
_DIGITS_RE = re.compile(r"\d+")
_DEADLINE: ContextVar[float | None] = ContextVar("template_deadline", default=None)


def too_big(what: str) -> SecurityError:
    return SecurityError(f"{what} would exceed the template output limit ({MAX_OUTPUT} chars)")


def tick() -> None:
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise SecurityError(f"the template ran longer than {MAX_SECONDS:g} s")


class BoundedRange:
    """Jinja's sandboxed range, checking the render's time every 1,000 items, so loops that
    print nothing (`{% for i in range(n) %}{% for j in range(n) %}`) still stop."""

    def __init__(self, *args: int) -> None:
        try:
            self._range = safe_range(*args)
        except OverflowError as exc:  # Jinja's MAX_RANGE guard
            raise SecurityError(str(exc)) from None

    def __len__(self) -> int:
        return len(self._range)

    def __getitem__(self, index: Any) -> Any:
        return self._range[index]

    def __iter__(self) -> Iterator[int]:
        for i, value in enumerate(self._range):
            if i % 1000 == 999:
                tick()
            yield value


def bounded_concat(chunks: Iterable[str]) -> str:
    """The environment's join of a render's output: stops past MAX_OUTPUT or MAX_SECONDS.
    A macro's output comes as a list already made: its size is checked at once."""
    if type(chunks) is list:
        text = "".join(chunks)  # no larger than the list it joins, which is already made
        if len(text) > MAX_OUTPUT:
            raise too_big("the rendered text")
        tick()
        return text
    own = _DEADLINE.get() is None
    token = _DEADLINE.set(time.monotonic() + MAX_SECONDS) if own else None
    try:
        parts, size = [], 0
        for i, chunk in enumerate(chunks):
            size += len(chunk)
            if size > MAX_OUTPUT:
                raise too_big("the rendered text")
            parts.append(chunk)
            if i % 256 == 255:
                tick()
        return "".join(parts)
    finally:
        if token is not None:
            _DEADLINE.reset(token)


def _sized(value: Any) -> int | None:
    return len(value) if isinstance(value, str | bytes | list | tuple) else None


def checked_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse `*`, `**` and `%` whose result would be huge, before computing it."""
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            size = _sized(seq)
            if size is not None and isinstance(times, int) and size * times > MAX_OUTPUT:
                raise too_big(f"repeating {size} items {times} times")
    elif operator == "**" and isinstance(left, int) and isinstance(right, int | float):
        if right > 0 and abs(left) > 1 and math.log2(abs(left)) * right > 64 * 1024:
            raise too_big(f"{left} ** {right}")
    elif operator == "%" and isinstance(left, str) and huge_width(left):
        raise too_big("a %-format width")


def huge_width(text: str) -> bool:
    """Whether a format string asks for a width or precision past MAX_OUTPUT."""
    numbers = [n for spec in _PERCENT_SPEC_RE.findall(text) for n in spec if n]
    numbers += [n for spec in _BRACE_SPEC_RE.findall(text) for n in _DIGITS_RE.findall(spec)]
    return any(past_limit(n) for n in numbers)


def past_limit(number: str | int) -> bool:
    text = str(number).strip()
    if not (text.isascii() and text.isdigit()):
        return False
    return len(text) > len(str(MAX_OUTPUT)) or int(text) > MAX_OUTPUT


def guarded_format(jinja_filter: Callable[..., Any]) -> Callable[..., Any]:
    def format_(value: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(value, str) and huge_width(value):
            raise too_big("a %-format width")
        return jinja_filter(value, *args, **kwargs)

    return format_


def guarded_center(jinja_filter: Callable[..., Any]) -> Callable[..., Any]:
    def center(value: Any, width: Any = 80) -> Any:
        if isinstance(width, int | str) and past_limit(width):
            raise too_big("centering")
        return jinja_filter(value, width)

    return center
