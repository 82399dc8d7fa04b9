"""Plain models the adapters hand back, so the pure core never sees an HTTP answer.

Frozen, slotted dataclasses built by keyword (the adapters check what they read before building
one; adapters/store.py checks a file's front matter with `issue_from_data`): importing them
costs nothing, and an agent's `resume` or a hook never loads pydantic for them (issue 14).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime
from typing import Any, Literal

from ai_context.core.fields import FieldError, want_text


def _utc(value: datetime | None) -> datetime | None:
    # Front matter written by hand may carry no offset: times here are UTC.
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


@dataclass(frozen=True, slots=True, kw_only=True)
class Issue:
    """An issue as every job sees it, whether it came from GitHub or from a directory."""

    number: int
    title: str
    body: str = ""
    state: Literal["open", "closed"] = "open"
    state_reason: str | None = None
    labels: tuple[str, ...] = ()
    assignees: tuple[str, ...] = ()
    author: str | None = None
    # GitHub's `author_association` of the author (OWNER, MEMBER, COLLABORATOR, NONE, ...)
    author_association: str | None = None
    comments: int | None = None  # the count GitHub lists with the issue; None: unknown
    updated_at: datetime | None = None
    closed_at: datetime | None = None
    html_url: str = ""
    repository: str = ""
    is_pull_request: bool = False

    def __post_init__(self) -> None:
        put = object.__setattr__
        if type(self.labels) is not tuple:
            put(self, "labels", tuple(self.labels))
        if type(self.assignees) is not tuple:
            put(self, "assignees", tuple(self.assignees))
        put(self, "updated_at", _utc(self.updated_at))
        put(self, "closed_at", _utc(self.closed_at))


ISSUE_FIELDS = {f.name: f for f in fields(Issue)}


class IssueDataError(FieldError):
    """A mapping that cannot be an Issue."""


def _int(loc: str, value: object) -> int:
    # YAML reads `number: 7` as an int; `number: "7"` is accepted too, as it always was.
    if type(value) is int:
        return value
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        return int(value)
    raise IssueDataError(loc, "Input should be a valid integer")


def _check_text(loc: str, value: object, *, optional: bool = False) -> None:
    if value is not None or not optional:
        want_text(loc, value, IssueDataError)


def _names(loc: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise IssueDataError(loc, "Input should be a valid list")
    for i, item in enumerate(value):
        _check_text(f"{loc}.{i}", item)
    return tuple(value)


def _when(loc: str, value: object) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, date):  # YAML reads `2026-05-26` as a date: its midnight, UTC
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
    raise IssueDataError(loc, "Input should be a valid datetime")


def issue_from_data(data: Mapping[str, Any]) -> Issue:
    """An Issue from a mapping written by a person (a file's front matter): unknown keys are
    ignored; a value of the wrong kind is an IssueDataError naming its field."""
    values = {name: data[name] for name in ISSUE_FIELDS if name in data}
    for name in ("number", "title"):
        if name not in values:
            raise IssueDataError(name, "Field required")
    values["number"] = _int("number", values["number"])
    if values.get("comments") is not None:
        values["comments"] = _int("comments", values["comments"])
    _check_texts(values)
    for name in ("labels", "assignees"):
        if name in values:
            values[name] = _names(name, values[name])
    for name in ("updated_at", "closed_at"):
        if name in values:
            values[name] = _when(name, values[name])
    return Issue(**values)


def _check_texts(values: Mapping[str, Any]) -> None:
    for name in ("title", "body", "html_url", "repository"):
        if name in values:
            _check_text(name, values[name])
    for name in ("state_reason", "author", "author_association"):
        _check_text(name, values.get(name), optional=True)
    if values.get("state", "open") not in ("open", "closed"):
        raise IssueDataError("state", "Input should be 'open' or 'closed'")
    if type(values.get("is_pull_request", False)) is not bool:
        raise IssueDataError("is_pull_request", "Input should be a valid boolean")


@dataclass(frozen=True, slots=True, kw_only=True)
class BodyHistory:
    """An issue's body now and the full texts of its latest recorded revisions, newest first
    (GitHub's `userContentEdits`); a text is None where that revision was deleted from the
    history. COMPLETE: no older revision exists beyond these."""

    body: str
    edits: tuple[str | None, ...] = ()
    complete: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Comment:
    id: int
    body: str
    author: str
    created_at: datetime | None = None
    updated_at: datetime | None = None
    html_url: str = ""
    # The issue it is on, from `issue_url`: a repository-wide listing mixes issues.
    issue_number: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class IssueRef:
    """Which issue, in which repository: enough to address it without fetching it."""

    repository: str
    number: int

    def __post_init__(self) -> None:
        if type(self.number) is not int or self.number <= 0:
            raise ValueError("number: an issue number is a positive integer")


@dataclass(frozen=True, slots=True, kw_only=True)
class GitCommit:
    """A git commit object as the git database API returns it (leases are built on these)."""

    sha: str
    message: str
    tree: str = ""
    parents: tuple[str, ...] = ()
    author_date: datetime | None = None

    def __post_init__(self) -> None:
        if type(self.parents) is not tuple:
            object.__setattr__(self, "parents", tuple(self.parents))
