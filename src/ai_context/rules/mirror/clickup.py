"""ClickUp as the mirror sees it: tasks, their custom fields, and finding the mirror field."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

TEXT_FIELD_TYPES = frozenset({"text", "short_text"})


class CustomField(BaseModel):
    """A custom field on a task (with its value when set) or on a list (no value)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    name: str
    type: str = ""
    value: Any = None


class Task(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    custom_id: str | None = None
    name: str = ""
    url: str = ""
    list_id: str = ""
    team_id: str | None = None
    fields: tuple[CustomField, ...] = ()


class FieldMatch(BaseModel):
    """The mirror field on one list: found (with its id), missing, or ambiguous."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    status: Literal["found", "missing", "duplicate", "wrong_type"]
    field: CustomField | None = None
    candidates: tuple[CustomField, ...] = ()


def _loose(name: str) -> str:
    """A field name as a person would say it: case, spaces, `_` and `-` aside."""
    return "".join(ch for ch in name.casefold() if ch.isalnum())


def resolve_field(fields: Sequence[CustomField], name: str) -> FieldMatch:
    """The field named NAME (exact name; ClickUp names are case-sensitive in its UI). When
    none is, the candidates are the near misses (`AI Context` for `ai_context`)."""
    named = tuple(f for f in fields if f.name == name)
    if not named:
        near = tuple(f for f in fields if _loose(f.name) == _loose(name))
        return FieldMatch(status="missing", candidates=near)
    if len(named) > 1:
        return FieldMatch(status="duplicate", candidates=named)
    if named[0].type and named[0].type not in TEXT_FIELD_TYPES:
        return FieldMatch(status="wrong_type", field=named[0])
    return FieldMatch(status="found", field=named[0])
