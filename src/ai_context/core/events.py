"""One event layer: each webhook payload is read once, here, into a typed event (pure); one
`Commit` model serves a push payload and `git log` alike. A payload it cannot read is an
`EventError` (exit 2) naming the field ("issue.number: expected a positive integer, got -4"),
before anything is written; fields the tool never reads are not looked at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ai_context.core.errors import EventError
from ai_context.core.models import Issue

# GitHub caps webhook payloads at 25 MB; anything larger is not one of its payloads.
MAX_PAYLOAD_BYTES = 25 * 1024 * 1024
MAX_SHA = 64
ISSUE_ACTIONS = frozenset({"opened", "edited", "reopened", "labeled", "unlabeled"})
SCAN_EVENTS = frozenset({"schedule", "workflow_dispatch"})


class Commit(BaseModel):
    """One commit as both GitHub's push payload and `git log` can describe it."""

    model_config = ConfigDict(frozen=True)

    sha: str
    message: str
    author_name: str = ""
    author_email: str = ""
    author_login: str = ""  # a push payload's `author.username`; git log has none
    timestamp: datetime
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @field_validator("sha")
    @classmethod
    def _sha(cls, value: str) -> str:
        # A push payload's `id` is any string to GitHub's schema (even ""); it is an identity
        # here, so only its case and surrounding blanks are normalised.
        value = value.strip().lower()
        if len(value) > MAX_SHA:
            raise ValueError(f"a commit sha is at most {MAX_SHA} characters")
        return value

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("a commit timestamp must carry a timezone")
        return value.astimezone(UTC)

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def short(self) -> str:
        return self.sha[:7]

    @property
    def files(self) -> tuple[str, ...]:
        """Every path the commit added, modified or removed, once each, in that order."""
        return tuple(dict.fromkeys((*self.added, *self.modified, *self.removed)))


# --- the events ------------------------------------------------------------------------------


@dataclass(frozen=True)
class IssuesEvent:
    """An `issues` event. `issue` is read only for the actions ai-context acts on."""

    action: str
    sender: str = ""  # the login that caused the event; "" when the payload names none
    issue: Issue | None = None
    label: str | None = None  # labeled / unlabeled: the label's name
    title_changed: bool = False
    body_changed: bool = False  # edited: `changes.body` is present
    body_before: str = ""  # edited: `changes.body.from`

    name = "issues"


@dataclass(frozen=True)
class PushEvent:
    """A `push` event: its commits, oldest first as GitHub lists them (at most 20 there)."""

    commits: tuple[Commit, ...] = ()

    name = "push"


@dataclass(frozen=True)
class ScanEvent:
    """`schedule` or `workflow_dispatch`: nothing in the payload is read."""

    name: str


@dataclass(frozen=True)
class OtherEvent:
    """An event ai-context does not act on."""

    name: str


Event = IssuesEvent | PushEvent | ScanEvent | OtherEvent


def bad(where: str, why: str) -> EventError:
    """The one message shape of an unreadable payload."""
    return EventError(f"cannot read the event payload: {where}: {why}")


def read_payload(raw: bytes | str, where: str = "payload") -> dict[str, Any]:
    """The payload file's JSON object; anything else is an EventError."""
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise bad(where, f"larger than {MAX_PAYLOAD_BYTES // (1024 * 1024)} MB")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise bad(where, f"not JSON ({str(exc)[:120]})") from None
    if not isinstance(data, dict):
        raise bad(where, f"expected a JSON object, got {_kind(data)}")
    return data


def parse_event(name: str, payload: Mapping[str, Any], repository: str = "") -> Event:
    """The typed event NAME's payload describes; EventError when it cannot be read."""
    if not isinstance(payload, Mapping):
        raise bad("payload", f"expected an object, got {_kind(payload)}")
    if name == "issues":
        return _issues_event(payload, repository)
    if name == "push":
        return PushEvent(commits=commits_from_push(payload))
    if name in SCAN_EVENTS:
        return ScanEvent(name=name)
    return OtherEvent(name=name)


def _issues_event(payload: Mapping[str, Any], repository: str) -> IssuesEvent:
    action = _text(payload.get("action"), "action")
    sender = _mapping(payload.get("sender"), "sender")
    login = _text(sender.get("login"), "sender.login")
    if action not in ISSUE_ACTIONS:
        return IssuesEvent(action=action, sender=login)
    if payload.get("issue") is None:
        raise bad("issue", "missing")
    issue = issue_from_payload(payload["issue"], repository)
    label = _mapping(payload.get("label"), "label")
    changes = _mapping(payload.get("changes"), "changes")
    body = _mapping(changes.get("body"), "changes.body")
    _mapping(changes.get("title"), "changes.title")
    return IssuesEvent(
        action=action,
        sender=login,
        issue=issue,
        label=_text(label.get("name"), "label.name") if label else None,
        title_changed="title" in changes,
        body_changed="body" in changes,
        body_before=_text(body.get("from"), "changes.body.from"),
    )


def issue_from_payload(data: Any, repository: str, where: str = "issue") -> Issue:
    """The issue object of a payload (the REST shape): every field the tool reads, checked."""
    issue = _mapping(data, where)
    number = issue.get("number")
    if type(number) is not int or number <= 0:
        raise bad(f"{where}.number", f"expected a positive integer, got {_show(number)}")
    state = _text(issue.get("state"), f"{where}.state") or "open"
    if state not in ("open", "closed"):
        raise bad(f"{where}.state", f"expected open or closed, got {_show(state)}")
    user = _mapping(issue.get("user"), f"{where}.user")
    comments = issue.get("comments")
    if comments is not None and type(comments) is not int:
        raise bad(f"{where}.comments", f"expected a count, got {_show(comments)}")
    return Issue(
        number=number,
        title=_text(issue.get("title"), f"{where}.title"),
        body=_text(issue.get("body"), f"{where}.body"),
        state="closed" if state == "closed" else "open",  # checked above
        state_reason=_text(issue.get("state_reason"), f"{where}.state_reason") or None,
        labels=_names(issue.get("labels"), f"{where}.labels", "name"),
        assignees=_names(issue.get("assignees"), f"{where}.assignees", "login"),
        author=_text(user.get("login"), f"{where}.user.login") or None,
        author_association=_text(issue.get("author_association"), f"{where}.author_association")
        or None,
        comments=comments if comments is not None and comments >= 0 else None,  # a hint only
        updated_at=_time(issue.get("updated_at"), f"{where}.updated_at"),
        closed_at=_time(issue.get("closed_at"), f"{where}.closed_at"),
        html_url=_text(issue.get("html_url"), f"{where}.html_url"),
        repository=repository,
        is_pull_request="pull_request" in issue,
    )


def commits_from_push(payload: Mapping[str, Any]) -> tuple[Commit, ...]:
    """The commits of a push payload, oldest first as GitHub lists them."""
    commits = payload.get("commits")
    if not isinstance(commits, list):
        raise bad("commits", "missing or not a list")
    return tuple(commit_from_push(c, f"commits[{i}]") for i, c in enumerate(commits))


def commit_from_push(data: Any, where: str = "commit") -> Commit:
    """One entry of a push payload's `commits` (or its `head_commit`)."""
    commit = _mapping(data, where)
    author = _mapping(commit.get("author"), f"{where}.author")
    sha = commit.get("id")
    if not isinstance(sha, str):
        raise bad(f"{where}.id", f"expected a commit sha, got {_show(sha)}")
    sha = sha.strip()[:MAX_SHA]  # git's are 40 (SHA-1) or 64 (SHA-256) hex digits
    stamp = _time(commit.get("timestamp"), f"{where}.timestamp", naive_is_utc=False)
    if stamp is None:
        raise bad(f"{where}.timestamp", "missing")
    try:
        return Commit(
            sha=sha,
            message=_text(commit.get("message"), f"{where}.message"),
            author_name=_text(author.get("name"), f"{where}.author.name"),
            author_email=_text(author.get("email"), f"{where}.author.email"),
            author_login=_text(author.get("username"), f"{where}.author.username"),
            timestamp=stamp,
            added=_strings(commit.get("added"), f"{where}.added"),
            modified=_strings(commit.get("modified"), f"{where}.modified"),
            removed=_strings(commit.get("removed"), f"{where}.removed"),
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()
        )
        raise bad(where, problems) from None


# --- field readers: each names the field it could not read ------------------------------------


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _show(value: Any) -> str:
    return repr(value)[:40] if isinstance(value, str | int | float | bool) else _kind(value)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    """An object, or {} when absent (null); any other type is unreadable."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise bad(where, f"expected an object, got {_kind(value)}")
    return value


def _text(value: Any, where: str) -> str:
    """A string, or "" when absent (null)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise bad(where, f"expected a string, got {_kind(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    """A list, or [] when absent (null)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad(where, f"expected a list, got {_kind(value)}")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    return tuple(_text(item, f"{where}[{i}]") for i, item in enumerate(_list(value, where)))


def _names(value: Any, where: str, key: str) -> tuple[str, ...]:
    """Labels or users: objects with KEY (a label may also be a bare name)."""
    return tuple(_name(item, f"{where}[{i}]", key) for i, item in enumerate(_list(value, where)))


def _name(item: Any, where: str, key: str) -> str:
    if isinstance(item, str):
        return item
    if not isinstance(item, Mapping) or not isinstance(item.get(key), str):
        raise bad(where, f"expected an object with a {key}, got {_kind(item)}")
    return str(item[key])


_TIME_RE = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(:\d\d(\.\d+)?)?([Zz]|[+-]\d\d:?\d\d)?")


def _time(value: Any, where: str, *, naive_is_utc: bool = True) -> datetime | None:
    """An ISO 8601 time (null: None). Without an offset it is UTC, or refused."""
    if value is None:
        return None
    if not isinstance(value, str) or not _TIME_RE.fullmatch(value.strip()):
        raise bad(where, f"expected an ISO 8601 time, got {_show(value)}")
    text = value.strip().replace("z", "Z").replace("t", "T")
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise bad(where, f"expected an ISO 8601 time, got {_show(value)}") from None
    if stamp.tzinfo is None:
        if not naive_is_utc:
            raise bad(where, "a commit timestamp must carry a timezone")
        stamp = stamp.replace(tzinfo=UTC)
    try:
        return stamp.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is before the year 1 in UTC
        raise bad(where, f"out of range: {_show(value)}") from None
