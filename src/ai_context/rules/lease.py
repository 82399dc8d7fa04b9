"""The working-state lease: records, the `lease:` config section and the decisions (pure).

A lease is a git ref `refs/ai-context/leases/<issue>` at a commit (git's empty tree) whose
message is the JSON `{"issue", "actor", "acquired", "expires"}`. Git refs are GitHub's one
compare-and-swap: creating a ref that exists is a 422, so one claimer wins; a move (renew, take
over) is a commit on top of the one read and a `force: false` PATCH, a 422 when someone moved
the ref in between. A release re-reads the ref and deletes it only if it still points at the
commit read; in that window the ref moves only if the lease had expired, so a release that
late may delete the taker's fresh lease, which then shows as free. jobs/lease.py makes the
calls; this module decides.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ai_context.core.duration_field import Duration, Time
from ai_context.core.durations import format_duration
from ai_context.core.errors import ConfigError, ConflictError
from ai_context.core.fields import explain, utc, whole

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
DEFAULT_PREFIX = "refs/ai-context/leases/"
DEFAULT_TTL = timedelta(hours=2)
_BAD_REF = re.compile(r"[\s~^:?*\[\\]|\.\.|@\{|//|\.lock/|/\.")
_RESERVED = ("refs/heads/", "refs/tags/", "refs/pull/", "refs/remotes/")


class LeaseError(ConflictError, ValueError):
    """A lease commit that does not hold a lease record."""


def stamp(value: datetime) -> str:
    return utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


class LeaseRecord(BaseModel):
    """What a lease commit says: who holds ISSUE, since when, until when."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    issue: int = Field(gt=0)
    actor: str = Field(min_length=1)
    acquired: Time
    expires: Time

    @field_validator("acquired", "expires")
    @classmethod
    def _to_the_second(cls, value: datetime) -> datetime:
        return value.replace(microsecond=0)

    def expired(self, now: datetime) -> bool:
        return utc(now) >= self.expires

    def message(self) -> str:
        """The commit message: the record as JSON, keys in a fixed order."""
        times = {"acquired": stamp(self.acquired), "expires": stamp(self.expires)}
        return json.dumps({**self.model_dump(), **times})


def parse_record(message: str) -> LeaseRecord:
    """The record in a lease commit's message; LeaseError saying why when it is not one."""
    try:
        data = json.loads(message)
    except ValueError as exc:
        raise LeaseError(f"the lease commit's message is not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise LeaseError("the lease commit's message is not a JSON object")
    try:
        return LeaseRecord.model_validate(data)
    except ValidationError as exc:
        raise LeaseError(f"the lease commit's record is bad: {explain(exc)}") from exc


class Lease(BaseModel):
    """A lease as read: its ref, the commit the ref points at, and that commit's record."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    ref: str
    sha: str
    record: LeaseRecord
    parent: str | None = None  # the lease commit this one replaced (renewal or take-over)

    def describe(self, now: datetime) -> str:
        left = self.record.expires - utc(now)
        when = (
            f"expired {format_duration(-left)} ago"
            if left.total_seconds() <= 0
            else f"{format_duration(left)} left"
        )
        return (
            f"#{self.record.issue} is held by {self.record.actor} until "
            f"{stamp(self.record.expires)} ({when}; lease {self.sha[:12]})"
        )


class LeaseConfig(BaseModel):
    """The `lease:` config section."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    prefix: str = DEFAULT_PREFIX
    ttl: Duration = DEFAULT_TTL

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        value = value.strip()
        if not value.endswith("/"):
            value += "/"
        if not value.startswith("refs/") or value.count("/") < 2 or _BAD_REF.search(value):
            raise ValueError(
                f"{value!r} is not a ref prefix; write it like refs/ai-context/leases/"
            )
        if value.startswith(_RESERVED):
            raise ValueError(f"{value!r} would make branches, tags or pull refs; use refs/<own>/")
        return value

    def ref(self, issue: int) -> str:
        return f"{self.prefix}{issue}"

    def issue_of(self, ref: str) -> int | None:
        """The issue number a ref under the prefix is the lease of, or None."""
        tail = ref.removeprefix(self.prefix)
        return whole(tail) if tail != ref else None


def parse_lease_config(section: Any, source: str) -> LeaseConfig:
    if section is None:
        return LeaseConfig()
    if not isinstance(section, Mapping):
        raise ConfigError(f"{source}: lease: must be a mapping, e.g. `lease: {{ttl: 2h}}`")
    try:
        return LeaseConfig.model_validate(section)
    except ValidationError as exc:
        problems = explain(exc, unknown="use prefix or ttl")
        raise ConfigError(f"{source}: lease: {problems}") from exc


# --- decisions ------------------------------------------------------------------------------

Step = Literal["create", "extend", "take_over", "refuse", "missing"]
Same = Callable[[str, str], bool]


def same_actor(a: str, b: str) -> bool:
    return a.strip().casefold() == b.strip().casefold()


def decide_claim(current: Lease | None, actor: str, now: datetime, same: Same = same_actor) -> Step:
    """Claim: create a free lease, extend your own, take over an expired one, else refuse."""
    if current is None:
        return "create"
    if same(current.record.actor, actor):
        return "extend"
    if current.record.expired(now):
        return "take_over"
    return "refuse"


def decide_renew(current: Lease | None, actor: str, same: Same = same_actor) -> Step:
    """Renew only your own lease, even an expired one nobody took (the CAS decides)."""
    if current is None:
        return "missing"
    return "extend" if same(current.record.actor, actor) else "refuse"


def next_record(
    current: Lease | None, step: Step, issue: int, actor: str, *, ttl: timedelta, now: datetime
) -> LeaseRecord:
    """The record a create, extend or take-over writes: an extension keeps `acquired`."""
    acquired = current.record.acquired if step == "extend" and current is not None else now
    return LeaseRecord(issue=issue, actor=actor, acquired=acquired, expires=utc(now) + ttl)
