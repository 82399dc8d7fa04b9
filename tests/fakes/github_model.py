"""The loopback GitHub's state (issues, comments, repositories) and the time helpers its
routes share (tests/fakes/github.py serves them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

DOCS = "https://docs.github.com/rest"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
BODY_LIMIT = 65536
SECONDARY_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID {}."
)


def _same(item: Any) -> Any:
    return item


def iso(when: datetime | None) -> str | None:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ") if when else None


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _http_date(text: str) -> datetime | None:
    """An HTTP-date header (`Tue, 26 May 2026 14:33:10 GMT`), or None when it is not one."""
    try:
        return parsedate_to_datetime(text) if text else None
    except (TypeError, ValueError):
        return None


@dataclass
class Edit:
    """One revision of an issue body in its edit history: the full text after the edit."""

    id: int
    at: datetime
    editor: str
    text: str


@dataclass
class Issue:
    repo: str
    number: int
    id: int
    title: str
    body: str | None
    user: str
    created_at: datetime
    updated_at: datetime
    state: str = "open"
    state_reason: str | None = None
    closed_at: datetime | None = None
    labels: list[str] = field(default_factory=list)
    assignees: list[str] = field(default_factory=list)
    pull_request: bool = False
    author_association: str = "MEMBER"  # OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...
    edits: list[Edit] = field(default_factory=list)  # the body's revisions, oldest first


@dataclass
class Comment:
    repo: str
    issue_number: int
    id: int
    body: str
    user: str
    created_at: datetime
    updated_at: datetime


@dataclass
class Repo:
    full_name: str
    id: int
    default_branch: str = "main"
    issues: dict[int, Issue] = field(default_factory=dict)
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)  # lower-case name -> label
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)  # sha -> git object
    refs: dict[str, str] = field(default_factory=dict)  # "refs/..." -> commit sha
    # What an owner's listing (`/orgs/{org}/repos`, `/users/{username}/repos`) shows of it.
    topics: list[str] = field(default_factory=list)
    private: bool = True
    archived: bool = False
    disabled: bool = False
    fork: bool = False
