"""Plain models the adapters hand back, so the pure core never sees an HTTP answer: frozen
dataclasses (the adapters check what they read first), so a hook never loads pydantic for them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from ai_context.core.fields import utc, whole


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
        if self.updated_at is not None:
            put(self, "updated_at", utc(self.updated_at))
        if self.closed_at is not None:
            put(self, "closed_at", utc(self.closed_at))


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


@dataclass(frozen=True, slots=True)
class IssueRef:
    """An issue as a person names it: `12`, `#12` or its URL, which names its repository too
    (`repository` None otherwise)."""

    repository: str | None
    number: int


_REPOSITORY_RE = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_ISSUE_URL_RE = re.compile(r"https?://[^/]+/(?:[^/]+/)*?([^/]+/[^/]+)/(?:issues|pull)/(\d+)/?")


def repository_name(value: str) -> str:
    """OWNER/NAME as a person writes it (spaces around cut); ValueError saying how otherwise."""
    text = value.strip()
    if not _REPOSITORY_RE.fullmatch(text):
        raise ValueError(f"{value!r} is not OWNER/NAME, e.g. octo-org/shop")
    return text


def issue_ref(value: str) -> IssueRef:
    """`12`, `#12` or `https://github.com/OWNER/NAME/issues/12`; ValueError saying how to
    write it otherwise."""
    text = value.strip()
    match = _ISSUE_URL_RE.fullmatch(text)
    if match:
        return IssueRef(match.group(1), int(match.group(2)))
    number = whole(text.removeprefix("#"))
    if number:
        return IssueRef(None, number)
    raise ValueError(f"{value!r} is not an issue number: write it as 12, #12 or the issue's URL")


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


@dataclass(frozen=True)
class Listed:
    """One repository of an owner's listing, with what selection looks at."""

    full_name: str
    topics: tuple[str, ...] = ()
    archived: bool = False
    disabled: bool = False
    fork: bool = False
