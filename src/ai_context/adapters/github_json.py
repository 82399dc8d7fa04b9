"""GitHub's REST JSON into the plain models of core/models.py: the adapter hands nothing else
back, so the core never sees an HTTP answer. Lenient on what GitHub may leave out (a null body,
no labels), strict on what identifies (a number, an id)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ai_context.core.fields import whole
from ai_context.core.models import Comment, GitCommit, Issue, Listed


def parse_time(value: Any) -> datetime | None:
    """GitHub's ISO 8601 time (`...Z`), REST's and GraphQL's alike; None when absent."""
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def issue_from_json(data: dict[str, Any], repository: str) -> Issue:
    return Issue(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        state="closed" if data.get("state") == "closed" else "open",
        state_reason=data.get("state_reason"),
        labels=tuple(
            str(label["name"] if isinstance(label, dict) else label)
            for label in data.get("labels") or ()
        ),
        assignees=tuple(str(a["login"]) for a in data.get("assignees") or ()),
        author=(data.get("user") or {}).get("login"),
        author_association=data.get("author_association"),
        comments=data.get("comments") if isinstance(data.get("comments"), int) else None,
        updated_at=parse_time(data.get("updated_at")),
        closed_at=parse_time(data.get("closed_at")),
        html_url=str(data.get("html_url") or ""),
        repository=repository,
        is_pull_request="pull_request" in data,
    )


def git_commit_from_json(data: dict[str, Any]) -> GitCommit:
    return GitCommit(
        sha=str(data["sha"]),
        message=str(data.get("message") or ""),
        tree=str((data.get("tree") or {}).get("sha") or ""),
        parents=tuple(str(p["sha"]) for p in data.get("parents") or ()),
        author_date=parse_time((data.get("author") or {}).get("date")),
    )


def comment_from_json(data: dict[str, Any]) -> Comment:
    return Comment(
        id=int(data["id"]),
        body=str(data.get("body") or ""),
        author=str((data.get("user") or {}).get("login") or ""),
        created_at=parse_time(data.get("created_at")),
        updated_at=parse_time(data.get("updated_at")),
        html_url=str(data.get("html_url") or ""),
        issue_number=_issue_number(data.get("issue_url")),
    )


def _issue_number(url: Any) -> int | None:
    """The number at the end of a comment's `issue_url` (".../issues/42"); None otherwise."""
    tail = str(url or "").rstrip("/").rsplit("/", 1)[-1]
    return whole(tail)


def repository_from_json(data: dict[str, Any]) -> Listed:
    """One repository of an owner's listing: its name, topics and the flags selection reads."""
    return Listed(
        full_name=str(data["full_name"]),
        topics=tuple(str(t) for t in data.get("topics") or ()),
        archived=bool(data.get("archived")),
        disabled=bool(data.get("disabled")),
        fork=bool(data.get("fork")),
    )
