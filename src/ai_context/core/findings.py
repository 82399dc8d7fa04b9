"""Findings: the one currency every rule, parser and job reports problems in.

A plain frozen dataclass, not a pydantic model: every command imports it, and pydantic's import
alone cost `validate` most of its start-up. Pydantic models elsewhere may still hold
a Finding as a field (pydantic validates and serialises stdlib dataclasses).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Literal, cast, get_args

Severity = Literal["error", "warning", "info"]
SEVERITIES: frozenset[str] = frozenset(get_args(Severity))


class Rank(IntEnum):
    info = 0
    warning = 1
    error = 2


class FindingError(ValueError):
    """A Finding built from bad values (an unknown severity, a line that is not a number)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem with a stable code, so users can filter on it and tools can read it."""

    code: str
    severity: Severity
    message: str
    line: int | None = None
    hint: str = ""

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise FindingError(f"severity: {self.severity!r} is not one of error, warning, info")
        if not (
            isinstance(self.code, str)
            and isinstance(self.message, str)
            and isinstance(self.hint, str)
        ):
            name = next(
                n for n in ("code", "message", "hint") if not isinstance(getattr(self, n), str)
            )
            raise FindingError(f"{name}: must be text")
        if self.line is not None and (type(self.line) is not int):
            raise FindingError("line: must be a whole number or None")

    @property
    def rank(self) -> Rank:
        return Rank[self.severity]


def make_finding(code: str, severity: str, message: str, line: int | None, hint: str) -> Finding:
    """A Finding whose severity is only known at run time (checked: a FindingError if unknown)."""
    return Finding(code, cast("Severity", severity), message, line, hint)


def worst(findings: list[Finding]) -> Severity | None:
    """The most severe level present, or None when there is nothing to report."""
    if not findings:
        return None
    return max(findings, key=lambda f: f.rank).severity


def count(findings: list[Finding], severity: Severity) -> int:
    return sum(1 for f in findings if f.severity == severity)
