"""Findings: the one currency every rule, parser and job reports problems in."""

from __future__ import annotations

from enum import IntEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

Severity = Literal["error", "warning", "info"]


class Rank(IntEnum):
    info = 0
    warning = 1
    error = 2


class Finding(BaseModel):
    """A problem with a stable code, so users can filter on it and tools can read it."""

    model_config = ConfigDict(frozen=True)

    code: str
    severity: Severity
    message: str
    line: int | None = None
    hint: str = ""

    @property
    def rank(self) -> Rank:
        return Rank[self.severity]


def worst(findings: list[Finding]) -> Severity | None:
    """The most severe level present, or None when there is nothing to report."""
    if not findings:
        return None
    return max(findings, key=lambda f: f.rank).severity


def count(findings: list[Finding], severity: Severity) -> int:
    return sum(1 for f in findings if f.severity == severity)
