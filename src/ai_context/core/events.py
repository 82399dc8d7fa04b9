"""One event layer: each webhook payload is read once, by pydantic (core.payloads), into a
typed event (pure); one `Commit` model serves a push payload and `git log` alike. A payload it
cannot read is an `EventError` (exit 2) naming the field ("issue.number: Input should be
greater than 0"), before anything is written; fields the tool never reads are not looked at.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints

from ai_context.core.duration_field import AwareTime
from ai_context.core.errors import EventError
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

    model_config = ConfigDict(frozen=True, defer_build=True)

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
        from ai_context.core.payloads import issues_event  # noqa: PLC0415 - see core.payloads

        return issues_event(payload, repository)
    if name == "push":
        from ai_context.core.payloads import commits_from_push  # noqa: PLC0415

        return PushEvent(commits=commits_from_push(payload))
    if name in SCAN_EVENTS:
        return ScanEvent(name=name)
    return OtherEvent(name=name)
