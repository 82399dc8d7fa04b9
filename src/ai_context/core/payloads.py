"""The webhook payloads, as far as the tool reads them: pydantic models that core.events'
`parse_event` reads an `issues` or `push` payload with, imported for those events only (a
scheduled run builds none of them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, StrictInt, ValidationError

from ai_context.core.duration_field import AwareTime, Time
from ai_context.core.errors import EventError
from ai_context.core.events import ISSUE_ACTIONS, Commit, IssuesEvent, Sha
from ai_context.core.fields import explain
from ai_context.core.models import Issue


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


def issues_event(payload: Mapping[str, Any], repository: str) -> IssuesEvent:
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
