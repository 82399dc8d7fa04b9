"""Plain models the adapters hand back, so the pure core never sees an HTTP answer.

Their validators are built on first use (`defer_build`): `validate` needs none of them, an
agent's `resume` one or two, and each costs start-up time when built at import (issue 14).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Issue(BaseModel):
    """An issue as every job sees it, whether it came from GitHub or from a directory."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    number: int
    title: str
    body: str = ""
    state: Literal["open", "closed"] = "open"
    state_reason: str | None = None
    labels: tuple[str, ...] = ()
    assignees: tuple[str, ...] = ()
    author: str | None = None
    comments: int | None = None  # the count GitHub lists with the issue; None: unknown
    updated_at: datetime | None = None
    closed_at: datetime | None = None
    html_url: str = ""
    repository: str = ""
    is_pull_request: bool = False

    @field_validator("updated_at", "closed_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        # Front matter written by hand may carry no offset: times here are UTC.
        return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


class Comment(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    id: int
    body: str
    author: str
    created_at: datetime | None = None
    updated_at: datetime | None = None
    html_url: str = ""
    # The issue it is on, from `issue_url`: a repository-wide listing mixes issues.
    issue_number: int | None = None


class IssueRef(BaseModel):
    """Which issue, in which repository: enough to address it without fetching it."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    repository: str
    number: int = Field(gt=0)


class GitCommit(BaseModel):
    """A git commit object as the git database API returns it (leases are built on these)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    sha: str
    message: str
    tree: str = ""
    parents: tuple[str, ...] = ()
    author_date: datetime | None = None
