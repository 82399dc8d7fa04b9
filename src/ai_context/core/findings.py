"""Findings: the one currency every rule, parser and job reports problems in. A frozen
dataclass checked by the field kit, so `validate` never imports pydantic (whose models may
still hold one as a field)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast, get_args

from ai_context.core.fields import FieldError, as_text

Severity = Literal["error", "warning", "info"]
SEVERITIES: frozenset[str] = frozenset(get_args(Severity))


class FindingError(FieldError):
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
            raise FindingError("severity", f"{self.severity!r} is not one of error, warning, info")
        for name in ("code", "message", "hint"):
            as_text(name, getattr(self, name), FindingError)
        if self.line is not None and type(self.line) is not int:
            raise FindingError("line", "must be a whole number or None")


def make_finding(code: str, severity: str, message: str, line: int | None, hint: str) -> Finding:
    """A Finding whose severity is only known at run time (checked: a FindingError if unknown)."""
    return Finding(code, cast("Severity", severity), message, line, hint)
