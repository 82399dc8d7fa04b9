"""The daily digest: classify tasks, say what changed since the last digest (pure).

Which issues are in a digest: every open issue with an AI Context block, plus every issue closed
within the window. Each gets one category; the rules are tried in this order, first match wins:

1. shipped      closed as completed within the window (state_reason `completed`, or none given,
                as older issues have), or an open issue whose Phase means shipped
                (core.phases: done, shipped, complete(d), merged, released, closed);
2. stuck        blockers listed, Phase has the word blocked, Last updated (the block's, not the
                issue's: the bot's own edits are no activity) older than `stale_after`, or any
                error finding (an incomplete block gives the next session false confidence);
3. in review    Phase mentions review (review, reviewing, in review, ...), or the issue has the
                `in-review` label;
4. in progress  every other open issue with a block.

Stuck comes before in review on purpose: a review nobody has touched past `stale_after`, or one
with a blocker, needs someone's attention, which is what "stuck" is for. An issue closed as not
planned is left out: it was neither shipped nor is it in flight; so is an open issue whose
Phase says cancelled.

"Since the last digest" compares against a compact state (per task: repository, number,
category, plan steps done) that the digest comment carries in a hidden line, so no other store
is needed; see `encode_state` / `find_state`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ai_context.core import hidden
from ai_context.core.block import Block, format_timestamp
from ai_context.core.durations import format_duration
from ai_context.core.findings import Finding
from ai_context.core.models import Issue
from ai_context.core.phases import (
    FINISHED_STEPS,
    is_blocked_phase,
    is_review_phase,
    is_shipped_phase,
    is_terminal,
)
from ai_context.core.phases import current_step as phase_step
from ai_context.rules.checks import CheckConfig, CheckResult, check_body

Category = Literal["shipped", "in_review", "in_progress", "stuck"]
CATEGORIES: tuple[Category, ...] = ("shipped", "in_review", "in_progress", "stuck")
CATEGORY_TITLES: dict[Category, str] = {
    "shipped": "Shipped",
    "in_review": "In review",
    "in_progress": "In progress",
    "stuck": "Stuck",
}
REVIEW_LABEL = "in-review"


class DigestConfig(BaseModel):
    """What decides a category. `window` bounds "shipped recently"; `stale_after` is stuck."""

    model_config = ConfigDict(frozen=True)

    window: timedelta = timedelta(hours=24)
    stale_after: timedelta = timedelta(hours=24)
    review_label: str = REVIEW_LABEL
    check: CheckConfig = CheckConfig()

    def checks(self) -> CheckConfig:
        """The check configuration, with this digest's `stale_after`."""
        return self.check.model_copy(update={"stale_after": self.stale_after})


class Entry(BaseModel):
    """One task as the digest shows it."""

    model_config = ConfigDict(frozen=True)

    repository: str
    number: int
    title: str
    url: str
    state: Literal["open", "closed"]
    category: Category
    reasons: tuple[str, ...]
    actor: str | None = None
    phase: str | None = None
    chunk: tuple[int, int] | None = None
    plan_done: int = 0
    plan_total: int = 0
    current_step: str | None = None
    next_step: str | None = None
    blockers: tuple[str, ...] = ()
    blocked_steps: int = 0
    errors: int = 0
    last_updated: datetime | None = None
    age: timedelta | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.repository, self.number)

    @property
    def progress(self) -> str:
        return f"{self.plan_done}/{self.plan_total}" if self.plan_total else "-"

    @property
    def phase_text(self) -> str:
        if self.phase is None:
            return "-"
        return self.phase + (f" ({self.chunk[0]}/{self.chunk[1]})" if self.chunk else "")


class Change(BaseModel):
    """What happened to one task since the previous digest."""

    model_config = ConfigDict(frozen=True)

    repository: str
    number: int
    title: str
    url: str
    category: Category
    new: bool = False
    moved_from: Category | None = None
    steps_completed: int = 0


StateStatus = Literal["restored", "absent", "unreadable"]


class TaskState(BaseModel):
    model_config = ConfigDict(frozen=True)

    category: Category
    done: int = Field(ge=0)


class DigestState(BaseModel):
    """What a digest remembers for the next one: per task, its category and plan steps done."""

    model_config = ConfigDict(frozen=True)

    generated_at: datetime | None = None
    tasks: dict[tuple[str, int], TaskState] = {}


class StateRead(BaseModel):
    """The previous state, or why there is none (a first digest is not an error)."""

    model_config = ConfigDict(frozen=True)

    status: StateStatus
    state: DigestState = DigestState()
    detail: str = ""


class Digest(BaseModel):
    model_config = ConfigDict(frozen=True)

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
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def first(self) -> bool:
        """No usable previous state: nothing can be reported as changed."""
        return self.previous.status != "restored"

    def all_entries(self) -> list[Entry]:
        return [e for c in CATEGORIES for e in self.entries.get(c, ())]

    def state(self) -> DigestState:
        return DigestState(
            generated_at=self.generated_at,
            tasks={
                e.key: TaskState(category=e.category, done=e.plan_done) for e in self.all_entries()
            },
        )


# --- classification ---------------------------------------------------------------------


def _utc(stamp: datetime) -> datetime:
    if stamp.tzinfo is None:
        raise ValueError("times must carry a timezone; pass UTC, e.g. 2026-05-27T09:00:00Z")
    return stamp.astimezone(UTC)


def _age(now: datetime, stamp: datetime | None) -> timedelta | None:
    """Time since `stamp`; a stamp in the future (a skewed clock, AIC303) counts as just now."""
    return None if stamp is None else max(now - stamp, timedelta(0))


def plan_done(block: Block | None) -> int:
    """Steps finished: done or skipped (a skipped step is no longer work to do)."""
    if block is None:
        return 0
    return sum(1 for s in block.plan if s.status in FINISHED_STEPS)


def current_step(block: Block | None) -> str | None:
    """The text of the plan's current step (core.phases decides which step that is)."""
    step = phase_step(block)
    return step.text if step is not None else None


def _closed_completed(issue: Issue) -> bool:
    return issue.state == "closed" and issue.state_reason in (None, "completed")


def _closed_at(issue: Issue) -> datetime | None:
    stamp = issue.closed_at or issue.updated_at
    return _utc(stamp) if stamp is not None else None


def _error_reason(finding: Finding) -> str:
    where = f" (line {finding.line})" if finding.line else ""
    return f"{finding.code}{where}: {finding.message}"


# Owned by issue 11a/13, to be reduced; the lead removes this noqa after merging.
def categorise(  # noqa: C901
    issue: Issue, result: CheckResult, now: datetime, config: DigestConfig
) -> tuple[Category | None, tuple[str, ...]]:
    """The category of one issue and the reasons for it; None (with why) if not in a digest."""
    now = _utc(now)
    block = result.block
    if issue.state == "closed":
        closed = _closed_at(issue)
        if not _closed_completed(issue):
            return None, (f"closed as {issue.state_reason}",)
        if closed is None or not now - config.window <= closed <= now:
            when = f"{format_duration(now - closed)} ago" if closed else "at an unknown time"
            return None, (f"closed {when}, outside the {format_duration(config.window)} window",)
        return "shipped", (f"closed as completed {format_duration(now - closed)} ago",)
    if block is None:
        return None, ("no AI Context block",)
    if is_terminal(block.phase):  # shipped, or cancelled: neither shipped nor in flight
        shipped = is_shipped_phase(block.phase)
        why = "but the issue is still open" if shipped else "(cancelled): not in a digest"
        return "shipped" if shipped else None, (f"phase is '{block.phase}' {why}",)
    stuck: list[str] = [f"blocker: {b}" for b in block.blockers]
    if is_blocked_phase(block.phase):
        stuck.append(f"phase is '{block.phase}'")
    if block.last_updated is not None:
        age = now - block.last_updated
        if age > config.stale_after:
            stuck.append(
                f"stale: last updated {format_duration(age)} ago "
                f"(stale after {format_duration(config.stale_after)})"
            )
    stuck.extend(_error_reason(f) for f in result.findings if f.severity == "error")
    if stuck:
        return "stuck", tuple(stuck)
    review: list[str] = []
    if is_review_phase(block.phase):
        review.append(f"phase is '{block.phase}'")
    if config.review_label in issue.labels:
        review.append(f"label '{config.review_label}'")
    if review:
        return "in_review", tuple(review)
    return "in_progress", ()


def classify(
    issue: Issue, result: CheckResult, now: datetime, config: DigestConfig
) -> Entry | None:
    """The digest entry of one issue, or None when the issue is not part of a digest."""
    now = _utc(now)
    category, reasons = categorise(issue, result, now, config)
    if category is None:
        return None
    block = result.block
    stamp = block.last_updated if block is not None else None
    if stamp is None and issue.state == "closed":
        stamp = _closed_at(issue)
    return Entry(
        **_task_fields(issue, block, now, stamp),
        category=category,
        reasons=reasons,
        plan_total=len(block.plan) if block else 0,
        blocked_steps=sum(1 for s in block.plan if s.status == "blocked") if block else 0,
        errors=result.errors,
    )


def _task_fields(
    issue: Issue, block: Block | None, now: datetime, stamp: datetime | None
) -> dict[str, Any]:
    """What a digest entry and a task summary both say about one task."""
    return {
        "repository": issue.repository,
        "number": issue.number,
        "title": issue.title,
        "url": issue.html_url,
        "state": issue.state,
        "actor": block.actor if block else None,
        "phase": block.phase if block else None,
        "chunk": block.chunk if block else None,
        "plan_done": plan_done(block),
        "current_step": current_step(block),
        "next_step": block.next_step if block else None,
        "blockers": block.blockers if block else (),
        "last_updated": stamp,
        "age": _age(now, stamp),
    }


def diff(entries: Iterable[Entry], previous: StateRead) -> tuple[Change, ...]:
    """New tasks, tasks that moved category and plan steps completed since the previous state.

    With no usable previous state nothing is reported: calling every task "new" would be noise.
    """
    if previous.status != "restored":
        return ()
    changes: list[Change] = []
    for entry in entries:
        before = previous.state.tasks.get(entry.key)
        new = before is None
        moved = before.category if before and before.category != entry.category else None
        steps = max(0, entry.plan_done - before.done) if before else 0
        if new or moved or steps:
            changes.append(
                Change(
                    repository=entry.repository,
                    number=entry.number,
                    title=entry.title,
                    url=entry.url,
                    category=entry.category,
                    new=new,
                    moved_from=moved,
                    steps_completed=steps,
                )
            )
    return tuple(changes)


def digest_from_checked(
    checked: Iterable[tuple[Issue, CheckResult]],
    now: datetime,
    config: DigestConfig | None = None,
    previous: StateRead | None = None,
) -> Digest:
    """The digest of issues already checked (the caller ran `check_body` with the same `now`).

    The same issue given twice (by repository and number) counts once: the last one wins.
    """
    config = config or DigestConfig()
    previous = previous or StateRead(status="absent", detail="no previous digest found")
    now = _utc(now)
    unique: dict[tuple[str, int], Entry] = {}
    repositories: set[str] = set()
    for issue, result in checked:
        entry = classify(issue, result, now, config)
        if issue.repository:
            repositories.add(issue.repository)
        if entry is not None:
            unique[entry.key] = entry
    ordered = sorted(unique.values(), key=lambda e: e.key)
    by_category = {c: tuple(e for e in ordered if e.category == c) for c in CATEGORIES}
    return Digest(
        generated_at=now,
        window=config.window,
        stale_after=config.stale_after,
        repositories=tuple(sorted(repositories)),
        entries=by_category,
        changes=diff(ordered, previous),
        previous=previous,
    )


def build_digest(
    issues: Iterable[Issue],
    now: datetime,
    config: DigestConfig | None = None,
    previous: StateRead | None = None,
) -> Digest:
    """Check every issue body and build the digest (the one call a job needs)."""
    config = config or DigestConfig()
    checks = config.checks()
    now = _utc(now)
    return digest_from_checked(
        ((i, check_body(i.body, now=now, config=checks)) for i in issues), now, config, previous
    )


def digest_json(digest: Digest) -> dict[str, Any]:
    """The stable JSON shape of a digest (`--format json`): keys may be added, never renamed."""

    def entry(e: Entry) -> dict[str, Any]:
        return {
            "repo": e.repository,
            "number": e.number,
            "title": e.title,
            "url": e.url,
            "state": e.state,
            "actor": e.actor,
            "phase": e.phase,
            "chunk": list(e.chunk) if e.chunk else None,
            "reasons": list(e.reasons),
            "plan_done": e.plan_done,
            "plan_total": e.plan_total,
            "current_step": e.current_step,
            "next_step": e.next_step,
            "blockers": list(e.blockers),
            "errors": e.errors,
            "last_updated": format_timestamp(e.last_updated) or None,
            "age_seconds": int(e.age.total_seconds()) if e.age is not None else None,
        }

    return {
        "generated_at": format_timestamp(digest.generated_at),
        "window_hours": digest.window.total_seconds() / 3600,
        "stale_after_hours": digest.stale_after.total_seconds() / 3600,
        "repositories": list(digest.repositories),
        "counts": dict(digest.counts),
        "categories": {c: [entry(e) for e in digest.entries.get(c, ())] for c in CATEGORIES},
        "changes": [
            {
                "repo": c.repository,
                "number": c.number,
                "category": c.category,
                "new": c.new,
                "moved_from": c.moved_from,
                "steps_completed": c.steps_completed,
            }
            for c in digest.changes
        ],
        "previous": {
            "status": digest.previous.status,
            "detail": digest.previous.detail,
            "generated_at": format_timestamp(digest.previous.state.generated_at) or None,
        },
    }


# --- the state carried by the digest comment ----------------------------------------------

STATE_PREFIX = "ai-context-digest:v1:"
STATE_LINE_RE = re.compile(
    r"^\[//\]: # \(ai-context-digest:([A-Za-z0-9]+):([A-Za-z0-9_=-]*)\)[ \t]*$", re.M
)
MAX_STATE_CHARS = hidden.MAX_ENCODED
_CODES: dict[Category, str] = {"shipped": "s", "in_review": "r", "in_progress": "p", "stuck": "k"}
_CATEGORY_BY_CODE: dict[str, Category] = {v: k for k, v in _CODES.items()}


def encode_state(state: DigestState) -> str:
    """The state as url-safe base64 of compact JSON: `{"v":1,"at":..,"r":{repo:[[n,c,d],..]}}`.

    About 18 characters per task once encoded, so a 1,000-task state is some 18 kB of the
    65,536 a GitHub comment may hold.
    """
    repos: dict[str, list[list[Any]]] = {}
    for (repo, number), task in sorted(state.tasks.items()):
        repos.setdefault(repo, []).append([number, _CODES[task.category], task.done])
    return hidden.encode({"v": 1, "at": format_timestamp(state.generated_at) or None, "r": repos})


def state_line(state: DigestState) -> str:
    """The hidden line: a Markdown link reference definition, which renders as nothing.

    `[//]: # (...)` is the well-known Markdown comment idiom; it must be preceded by a blank
    line (a definition cannot interrupt a paragraph) and it survives GitHub's sanitiser, which
    an HTML comment would too, but a definition also never shows in the Slack or step summary
    copies of the same text.
    """
    return f"[//]: # ({STATE_PREFIX}{encode_state(state)})"


def decode_state(encoded: str) -> StateRead:
    """The state from its base64 text; garbled text is a first digest, not an error."""

    def unreadable(why: str) -> StateRead:
        return StateRead(
            status="unreadable",
            detail=f"the previous digest's state is unreadable: {why}; treated as the first digest",
        )

    if len(encoded) > MAX_STATE_CHARS:
        return unreadable("too long")
    payload = hidden.decode(encoded)  # the one codec of hidden state; None when garbled
    if payload is None:
        return unreadable("not base64 JSON")
    if payload.get("v") != 1:
        return unreadable("unknown version")
    try:
        at = payload.get("at")
        generated = _utc(datetime.fromisoformat(at)) if isinstance(at, str) else None
        tasks: dict[tuple[str, int], TaskState] = {}
        repos = payload.get("r", {})
        if not isinstance(repos, dict):
            raise TypeError("r is not an object")
        for repo, rows in repos.items():
            for row in rows:
                number, code, done = row
                if type(number) is not int or type(done) is not int:
                    raise TypeError("number and done are integers")
                tasks[(str(repo), number)] = TaskState(category=_CATEGORY_BY_CODE[code], done=done)
    except (TypeError, ValueError, KeyError, ValidationError):
        return unreadable("unexpected content")
    when = f" of {format_timestamp(generated)}" if generated else ""
    return StateRead(
        status="restored",
        state=DigestState(generated_at=generated, tasks=tasks),
        detail=f"compared with the digest{when} ({len(tasks)} tasks)",
    )


def find_state(text: str | None) -> StateRead:
    """The state carried by a digest comment's body; absent or garbled is a first digest."""
    if not text:
        return StateRead(status="absent", detail="no previous digest found")
    # The last line wins: a comment edited by hand may keep an older one above it.
    matches = list(STATE_LINE_RE.finditer(text))
    match = matches[-1] if matches else None
    if match is None:
        if STATE_PREFIX.split(":", 1)[0] in text:
            return StateRead(
                status="unreadable",
                detail="the previous digest's state line is damaged; treated as the first digest",
            )
        return StateRead(status="absent", detail="the previous digest carries no state")
    if match.group(1) != "v1":
        return StateRead(
            status="unreadable",
            detail=f"the previous digest's state has version {match.group(1)}, not v1; "
            "treated as the first digest",
        )
    return decode_state(match.group(2))


# --- one task, and one actor's plate ---------------------------------------------------------


class StepView(BaseModel):
    model_config = ConfigDict(frozen=True)

    number: int
    text: str
    status: str


class TaskSummary(BaseModel):
    """One task's progress (`/daily-summary <task>`): the block, its findings, its category."""

    model_config = ConfigDict(frozen=True)

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


def summarize_task(issue: Issue, now: datetime, config: DigestConfig | None = None) -> TaskSummary:
    config = config or DigestConfig()
    now = _utc(now)
    result = check_body(issue.body, now=now, config=config.checks())
    category, reasons = categorise(issue, result, now, config)
    block = result.block
    return TaskSummary(
        **_task_fields(issue, block, now, block.last_updated if block else None),
        generated_at=now,
        category=category,
        reasons=reasons,
        has_block=block is not None,
        actor_description=block.actor_description if block else None,
        plan=tuple(
            StepView(number=s.number, text=s.text, status=s.status or "unmarked")
            for s in (block.plan if block else ())
        ),
        files_touched=block.files_touched if block else None,
        decisions=block.decisions if block else (),
        findings=result.findings,
        complete=result.complete,
    )


# Urgency tiers of `/status`, most urgent first. Within a tier the task untouched longest
# comes first (its age is the time since its block was last updated), then by number.
URGENCY_TIERS: dict[str, int] = {
    "stuck": 0,  # needs someone now: blocked, stale or broken
    "blocked step": 1,  # in progress, but a plan step is marked blocked
    "in_progress": 2,
    "in_review": 3,  # waiting on others
    "shipped": 4,  # done within the window, listed for the record
}


def urgency_tier(entry: Entry) -> str:
    if entry.category == "in_progress" and entry.blocked_steps:
        return "blocked step"
    return entry.category


def urgency(entry: Entry) -> tuple[int, float, str, int]:
    """Sort key: tier, then oldest update first (unknown age counts as oldest)."""
    age = entry.age.total_seconds() if entry.age is not None else float("inf")
    return (URGENCY_TIERS[urgency_tier(entry)], -age, entry.repository, entry.number)


class Plate(BaseModel):
    """What is on one actor's plate, most urgent first (`/status`)."""

    model_config = ConfigDict(frozen=True)

    actor: str
    generated_at: datetime
    entries: tuple[Entry, ...]

    @property
    def counts(self) -> dict[Category, int]:
        return {c: sum(1 for e in self.entries if e.category == c) for c in CATEGORIES}


def actors(digest: Digest) -> list[str]:
    """Every actor named in the digest, sorted."""
    return sorted({e.actor for e in digest.all_entries() if e.actor})


def plate(digest: Digest, actor: str) -> Plate:
    """The tasks of `actor` (compared without case), most urgent first."""
    wanted = actor.strip().lower()
    mine = [e for e in digest.all_entries() if (e.actor or "").lower() == wanted]
    return Plate(
        actor=actor.strip(),
        generated_at=digest.generated_at,
        entries=tuple(sorted(mine, key=urgency)),
    )
