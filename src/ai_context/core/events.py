"""One event layer: each webhook payload is read once, here, by pydantic into a typed event
(pure); one `Commit` model serves a push payload and `git log` alike. A payload it cannot read
is an `EventError` (exit 2) naming the field ("issue.number: Input should be greater than 0"),
before anything is written; fields the tool never reads are not looked at.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StringConstraints,
    ValidationError,
)

from ai_context.core.duration_field import AwareTime, Time
from ai_context.core.errors import EventError
from ai_context.core.fields import explain
from ai_context.core.models import Issue

# GitHub caps webhook payloads at 25 MB; anything larger is not one of its payloads.
MAX_PAYLOAD_BYTES = 25 * 1024 * 1024
ISSUE_ACTIONS = frozenset({"opened", "edited", "reopened", "labeled", "unlabeled"})
SCAN_EVENTS = frozenset({"schedule", "workflow_dispatch"})
# A push payload's `id` is any string to GitHub's schema (even ""); it is an identity here, so
# only its case and surrounding blanks are normalised, and it is cut to git's longest (SHA-256).
Sha = Annotated[
    str, StringConstraints(strip_whitespace=True, to_lower=True), AfterValidator(lambda s: s[:64])
]


class Commit(BaseModel):
    """One commit as both GitHub's push payload and `git log` can describe it."""

    model_config = ConfigDict(frozen=True)

    sha: Sha
    message: str
    author_name: str = ""
    author_email: str = ""
    author_login: str = ""  # a push payload's `author.username`; git log has none
    timestamp: AwareTime
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

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


# --- the payloads, as far as the tool reads them ----------------------------------------------


class User(BaseModel):
    login: str


class Label(BaseModel):
    name: str


class IssuePayload(BaseModel):
    """An issue as a payload holds it (the REST shape): every field the tool reads."""

    number: StrictInt = Field(gt=0)
    title: str | None = None
    body: str | None = None
    state: Literal["open", "closed"] | None = None
    state_reason: str | None = None
    labels: list[Label] | None = None
    assignees: list[User] | None = None
    user: User | None = None
    author_association: str | None = None
    comments: StrictInt | None = None  # a hint only: a negative count is an unknown one
    updated_at: Time | None = None
    closed_at: Time | None = None
    html_url: str | None = None
    pull_request: object = None  # only its presence is read

    def issue(self, repository: str) -> Issue:
        return Issue(
            number=self.number,
            title=self.title or "",
            body=self.body or "",
            state=self.state or "open",
            state_reason=self.state_reason or None,
            labels=tuple(label.name for label in self.labels or ()),
            assignees=tuple(user.login for user in self.assignees or ()),
            author=(self.user and self.user.login) or None,
            author_association=self.author_association or None,
            comments=self.comments if self.comments is not None and self.comments >= 0 else None,
            updated_at=self.updated_at,
            closed_at=self.closed_at,
            html_url=self.html_url or "",
            repository=repository,
            is_pull_request="pull_request" in self.model_fields_set,
        )


class BodyChange(BaseModel):
    before: str | None = Field(None, alias="from")


class Changes(BaseModel):
    body: BodyChange | None = None
    title: dict[str, Any] | None = None


class IssuesHead(BaseModel):
    """What every `issues` payload is read for: its action and who sent it."""

    action: str
    sender: User | None = None


class IssuesPayload(IssuesHead):
    """An `issues` payload of an action ai-context acts on."""

    issue: IssuePayload
    label: Label | None = None
    changes: Changes | None = None


class Author(BaseModel):
    name: str | None = None
    email: str | None = None
    username: str | None = None


class PushCommit(BaseModel):
    """One entry of a push payload's `commits`."""

    id: Sha
    message: str | None = None
    author: Author | None = None
    timestamp: AwareTime
    added: list[str] | None = None
    modified: list[str] | None = None
    removed: list[str] | None = None

    def commit(self) -> Commit:
        author = self.author or Author()
        return Commit(
            sha=self.id,
            message=self.message or "",
            author_name=author.name or "",
            author_email=author.email or "",
            author_login=author.username or "",
            timestamp=self.timestamp,
            added=tuple(self.added or ()),
            modified=tuple(self.modified or ()),
            removed=tuple(self.removed or ()),
        )


class PushPayload(BaseModel):
    commits: list[PushCommit]


Read = TypeVar("Read", bound=BaseModel)


def _read(model: type[Read], payload: Any) -> Read:
    """MODEL as PAYLOAD holds it; an EventError naming each field it cannot read."""
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise EventError(f"cannot read the event payload: {explain(exc)}") from None


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
        raise bad(where, f"expected a JSON object, got {type(data).__name__}")
    return data


def parse_event(name: str, payload: Mapping[str, Any], repository: str = "") -> Event:
    """The typed event NAME's payload describes; EventError when it cannot be read."""
    if name == "issues":
        return _issues_event(payload, repository)
    if name == "push":
        return PushEvent(commits=commits_from_push(payload))
    if name in SCAN_EVENTS:
        return ScanEvent(name=name)
    return OtherEvent(name=name)


def _issues_event(payload: Mapping[str, Any], repository: str) -> IssuesEvent:
    head = _read(IssuesHead, payload)
    login = (head.sender and head.sender.login) or ""
    if head.action not in ISSUE_ACTIONS:
        return IssuesEvent(action=head.action, sender=login)
    read = _read(IssuesPayload, payload)
    changes = read.changes or Changes()
    return IssuesEvent(
        action=read.action,
        sender=login,
        issue=read.issue.issue(repository),
        label=read.label.name if read.label else None,
        title_changed="title" in changes.model_fields_set,
        body_changed="body" in changes.model_fields_set,
        body_before=(changes.body and changes.body.before) or "",
    )


def commits_from_push(payload: Mapping[str, Any]) -> tuple[Commit, ...]:
    """The commits of a push payload, oldest first as GitHub lists them."""
    return tuple(c.commit() for c in _read(PushPayload, payload).commits)
