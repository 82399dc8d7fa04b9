"""The digest's data: categories, entries, changes, the remembered state (pure models).

Apart from the rules that fill them, so a renderer imports only what it reads.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from functools import cached_property
from typing import Annotated, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from ai_context.core.findings import Finding

Category = Literal["shipped", "in_review", "in_progress", "stuck"]
# The order of the JSON and of the hidden state (stable: keys may be added, never renamed).
CATEGORIES: tuple[Category, ...] = ("shipped", "in_review", "in_progress", "stuck")
# The order people read: what needs someone first, what is done last.
DISPLAY_ORDER: tuple[Category, ...] = ("stuck", "in_review", "in_progress", "shipped")
CATEGORY_TITLES: dict[Category, str] = {
    "shipped": "Shipped",
    "in_review": "In review",
    "in_progress": "In progress",
    "stuck": "Stuck",
}
# One colour per category wherever the digest lands (Mermaid, the terminal, the emoji of a
# heading), so "Stuck" is red every day, whichever categories happen to be empty.
CATEGORY_COLOURS: dict[Category, str] = {
    "stuck": "#cf222e",
    "in_review": "#bf8700",
    "in_progress": "#0969da",
    "shipped": "#1a7f37",
}
CATEGORY_EMOJI: dict[Category, str] = {
    "stuck": "🔴",
    "in_review": "🟡",
    "in_progress": "🔵",
    "shipped": "🟢",
}
_PULL = re.compile(r"^https?://[^/]+/([^/]+/[^/]+)/pull/(\d+)")


class Entry(BaseModel):
    """One task as the digest shows it."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    repository: str
    number: int
    title: str
    url: str
    state: Literal["open", "closed"]
    category: Category
    actor: str | None = None
    phase: str | None = None
    chunk: tuple[int, int] | None = None
    reasons: tuple[str, ...] = ()
    plan_done: int = 0
    plan_total: int = 0
    current_step: str | None = None
    next_step: str | None = None
    blockers: tuple[str, ...] = ()
    blocked_steps: int = 0
    errors: int = 0
    last_updated: datetime | None = None
    age: timedelta | None = None
    # The people: the assignees, else the owner of its actor (`actors.<id>.owner`).
    owners: tuple[str, ...] = ()
    # What `ai-context done --pr URL --followup TEXT` recorded in the block.
    pull_request: str | None = None
    followups: tuple[str, ...] = ()
    done_at: datetime | None = None  # a shipped task: closed, or its phase set done

    @property
    def key(self) -> tuple[str, int]:
        return (self.repository, self.number)

    @property
    def pr_label(self) -> str:
        """`#12` for a pull request of the task's repository, `owner/name#12` for another's,
        `PR` for a link that is not a GitHub pull request's."""
        match = _PULL.match(self.pull_request or "")
        if match is None:
            return "PR" if self.pull_request else ""
        repo, number = match.groups()
        return f"#{number}" if repo.lower() == self.repository.lower() else f"{repo}#{number}"

    @property
    def who(self) -> str:
        """The owner with the actor id beside it: `bob (cc-bob-laptop)`, or either alone."""
        owners = ", ".join(self.owners)
        if owners and self.actor and self.actor.lower() not in {o.lower() for o in self.owners}:
            return f"{owners} ({self.actor})"
        return owners or self.actor or "-"

    @property
    def progress(self) -> str:
        return f"{self.plan_done}/{self.plan_total}" if self.plan_total else "-"

    @property
    def phase_text(self) -> str:
        if self.phase is None:
            return "-"
        return self.phase + (f" ({self.chunk[0]}/{self.chunk[1]})" if self.chunk else "")


class Change(BaseModel):
    """What happened to one task since the previous digest; `left` says why a task it listed
    is gone (closed as not planned, its block removed, ...), in the category it had then."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    repository: str
    number: int
    title: str
    url: str
    category: Category
    new: bool = False
    moved_from: Category | None = None
    steps_completed: int = 0
    left: str | None = None


class TaskState(NamedTuple):
    """One task as the next digest remembers it: a plain value, checked by DigestState's
    validation where a state is read back from a comment."""

    category: Category
    done: Annotated[int, Field(ge=0)]


class DigestState(BaseModel):
    """What a digest remembers for the next one: per task, its category and plan steps done."""

    model_config = ConfigDict(frozen=True)

    generated_at: datetime | None = None
    tasks: dict[tuple[str, int], TaskState] = {}

    @property
    def counts(self) -> dict[Category, int]:
        found = Counter(task.category for task in self.tasks.values())
        return {c: found[c] for c in CATEGORIES}


class StateRead(BaseModel):
    """The previous state, or why there is none (a first digest is not an error)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    status: Literal["restored", "absent", "unreadable"]
    state: DigestState = DigestState()
    detail: str = ""
    # The baseline is the day's first digest's own state (nothing came before it): a rerun
    # with no changes then reads exactly as that first digest did.
    own: bool = False


class Digest(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    generated_at: datetime
    window: timedelta
    stale_after: timedelta
    repositories: tuple[str, ...]
    entries: dict[Category, tuple[Entry, ...]]
    changes: tuple[Change, ...]
    previous: StateRead

    @property
    def counts(self) -> dict[Category, int]:
        return {c: len(self.entries.get(c, ())) for c in CATEGORIES}

    @property
    def deltas(self) -> dict[Category, int | None]:
        """Each count minus the previous digest's; None with nothing to compare with."""
        if self.first:
            return dict.fromkeys(CATEGORIES, None)
        before = self.previous.state.counts
        return {c: n - before[c] for c, n in self.counts.items()}

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def first(self) -> bool:
        """Nothing to compare with: no usable previous state, or only the day's first digest
        ever, unchanged since."""
        if self.previous.status != "restored":
            return True
        return self.previous.own and not self.changes

    @property
    def multi_repo(self) -> bool:
        """References must name their repository (`owner/repo#N`): a bare #N would link the
        digest's own repository."""
        return len(self.repositories) > 1

    def all_entries(self) -> list[Entry]:
        return [e for c in CATEGORIES for e in self.entries.get(c, ())]

    @cached_property
    def state(self) -> DigestState:
        """What the next digest compares with, built once: the hidden line, Slack's mark and
        the trends all read it. Built from our own entries, so not validated again (a state
        read back from a comment is)."""
        return DigestState.model_construct(
            generated_at=self.generated_at,
            tasks={
                (e.repository, e.number): TaskState(e.category, e.plan_done)
                for e in self.all_entries()
            },
        )


class StepView(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    number: int
    text: str
    status: str


class TaskSummary(BaseModel):
    """One task's progress (`/daily-summary <task>`): the block, its findings, its category."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    repository: str
    number: int
    title: str
    url: str
    state: Literal["open", "closed"]
    generated_at: datetime
    category: Category | None
    reasons: tuple[str, ...]
    has_block: bool
    actor: str | None = None
    actor_description: str | None = None
    phase: str | None = None
    chunk: tuple[int, int] | None = None
    plan: tuple[StepView, ...] = ()
    plan_done: int = 0
    current_step: str | None = None
    next_step: str | None = None
    files_touched: str | None = None
    decisions: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    last_updated: datetime | None = None
    age: timedelta | None = None
    findings: tuple[Finding, ...] = ()
    complete: bool = False
    owners: tuple[str, ...] = ()
    pull_request: str | None = None
    followups: tuple[str, ...] = ()


class Plate(BaseModel):
    """What is on one actor's plate, most urgent first (`/status`)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    actor: str
    generated_at: datetime
    entries: tuple[Entry, ...]
    login: str | None = None  # the GitHub login the actor was asked for by, if any

    @property
    def counts(self) -> dict[Category, int]:
        return {c: sum(1 for e in self.entries if e.category == c) for c in CATEGORIES}
