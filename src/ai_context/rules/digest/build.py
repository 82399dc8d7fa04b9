"""The daily digest: each task's category, and what changed since the last digest (pure).

Categories are tried in order, first match wins (README, "The daily digest"): shipped (closed as
completed, or a shipped phase, within the window), stuck (a blocker, a blocked phase, no update
for `stale_after`, an error finding), in review, in progress. Stuck comes before in review on
purpose: a review nobody touched, or one with a blocker, needs someone. An issue closed as not
planned, or whose phase says cancelled, is in no category; if the previous digest listed it,
the changes say it left, and why. The previous digest is the state its comment carries
(`state`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ai_context.core.block.model import Block
from ai_context.core.block.parse import parse
from ai_context.core.duration_field import Duration
from ai_context.core.durations import format_duration
from ai_context.core.errors import ConfigError
from ai_context.core.fields import explain
from ai_context.core.models import Issue
from ai_context.core.phases import (
    FINISHED_STEPS,
    current_step,
    is_blocked_phase,
    is_review_phase,
    is_shipped_phase,
    is_terminal,
)
from ai_context.rules.checks import STALE_AFTER, CheckConfig, CheckResult, check_body
from ai_context.rules.digest.model import (
    CATEGORIES,
    Category,
    Change,
    Digest,
    Entry,
    StateRead,
    StepView,
    TaskSummary,
)
from ai_context.rules.repositories import Selector

REVIEW_LABEL = "in-review"

Verdict = tuple[Category | None, tuple[str, ...]]


# How far back a closed issue counts as shipped: the one default of `digest.window` and the
# reports' `--window`.
WINDOW = timedelta(hours=24)
Target = Literal["issue-comment", "slack", "step-summary"]


class DigestConfig(BaseModel):
    """What decides a category. `window` bounds "shipped recently"; `stale_after` is stuck."""

    model_config = ConfigDict(frozen=True)

    window: timedelta = WINDOW
    stale_after: timedelta = STALE_AFTER
    review_label: str = REVIEW_LABEL
    check: CheckConfig = CheckConfig()
    # Actor id (lower case) -> the GitHub login of its owner (`actors.<id>.owner`): who a task
    # belongs to when its issue has no assignee.
    owners: Mapping[str, str] = {}

    def checks(self) -> CheckConfig:
        """The check configuration, with this digest's `stale_after`."""
        return replace(self.check, stale_after=self.stale_after)


class DigestSection(BaseModel):
    """The `digest:` section of the config file."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    targets: tuple[Target, ...] | None = None
    window: Duration = WINDOW
    # Exact names, `owner/<glob>` patterns or `{owner, topic, name}` (rules/repositories.py).
    repositories: tuple[Selector, ...] = ()
    mention_owners: bool = Field(default=False, alias="mention-owners")

    @field_validator("repositories", mode="before")
    @classmethod
    def _repos(cls, value: Any) -> Any:
        """Each entry checked here, so a bad one is named by its text."""
        if not isinstance(value, list | tuple):
            raise ValueError(f"{value!r} is not a list; write [acme/api, acme/*]")
        return tuple(Selector.model_validate(entry) for entry in value)


def parse_digest_section(section: Any, repositories: Any, source: str) -> DigestSection:
    """The `digest:` section (`false`: no digest; `true`: every default), with the file's
    top-level `repositories:` when the section has none; ConfigError naming SOURCE (the file)
    and the key when bad."""
    if section is not None and not isinstance(section, bool | Mapping):
        raise ConfigError(
            f"{source}: digest: must be false (no digest) or a mapping of targets, window, "
            "mention-owners"
        )
    raw = dict(section) if isinstance(section, Mapping) else {}
    top_level = repositories is not None and "repositories" not in raw
    if top_level:
        raw["repositories"] = repositories
    try:
        return DigestSection.model_validate(raw)
    except ValidationError as exc:

        def where(name: str) -> str:
            return name if top_level and name.startswith("repositories") else f"digest.{name}"

        raise ConfigError(f"{source}: {explain(exc, name=where)}") from exc


def utc(stamp: datetime) -> datetime:
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


def current_step_text(block: Block | None) -> str | None:
    """The text of the plan's current step (core.phases decides which step that is)."""
    step = current_step(block)
    return step.text if step is not None else None


def _closed_at(issue: Issue) -> datetime | None:
    stamp = issue.closed_at or issue.updated_at
    return utc(stamp) if stamp is not None else None


def _closed(issue: Issue, now: datetime, window: timedelta) -> Verdict:
    """A closed issue: shipped when closed as completed within the window, else left out."""
    if issue.state_reason not in (None, "completed"):
        return None, (f"closed as {(issue.state_reason or '').replace('_', ' ')}",)
    closed = _closed_at(issue)
    if closed is None or not now - window <= closed <= now:
        when = f"{format_duration(now - closed)} ago" if closed else "at an unknown time"
        return None, (f"closed as completed {when}, outside the {format_duration(window)} window",)
    return "shipped", (f"closed as completed {format_duration(now - closed)} ago",)


def _finished(block: Block, now: datetime, window: timedelta) -> Verdict:
    """An open issue whose phase says the work is over: shipped within the window, else left
    out; cancelled is neither shipped nor in flight."""
    if not is_shipped_phase(block.phase):
        return None, (f"phase is '{block.phase}' (cancelled): not in a digest",)
    age = _age(now, block.last_updated)
    if age is None or age > window:
        when = f"{format_duration(age)} ago" if age is not None else "at an unknown time"
        return None, (
            f"phase '{block.phase}' since {when}, outside the {format_duration(window)} window; "
            "close the issue",
        )
    return "shipped", (f"phase is '{block.phase}' but the issue is still open",)


def _stuck_reasons(
    block: Block, result: CheckResult, now: datetime, stale_after: timedelta
) -> list[str]:
    stuck = [f"blocker: {b}" for b in block.blockers]
    if is_blocked_phase(block.phase):
        stuck.append(f"phase is '{block.phase}'")
    if block.last_updated is not None and now - block.last_updated > stale_after:
        # The age is the row's own column: said once, there.
        stuck.append(f"no update for over {format_duration(stale_after)} (stale)")
    # Each error in words, its code (and line) as a suffix: people read the words.
    errors = (f for f in result.findings if f.severity == "error")
    stuck.extend(f"{f.message} ({f.code}{f', line {f.line}' if f.line else ''})" for f in errors)
    return stuck


def categorise(issue: Issue, result: CheckResult, now: datetime, config: DigestConfig) -> Verdict:
    """The category of one issue and the reasons for it; None (with why) if not in a digest."""
    now = utc(now)
    block = result.block
    if issue.state == "closed":
        return _closed(issue, now, config.window)
    if block is None:
        return None, ("no AI Context block",)
    if is_terminal(block.phase):  # shipped, or cancelled
        return _finished(block, now, config.window)
    stuck = _stuck_reasons(block, result, now, config.stale_after)
    if stuck:
        return "stuck", tuple(stuck)
    review: list[str] = []
    if is_review_phase(block.phase):
        review.append(f"phase is '{block.phase}'")
    if config.review_label in issue.labels:
        review.append(f"label '{config.review_label}'")
    return ("in_review", tuple(review)) if review else ("in_progress", ())


def owners_of(issue: Issue, block: Block | None, owners: Mapping[str, str]) -> tuple[str, ...]:
    """Who a task belongs to: the issue's assignees, else its actor's owner (`actors:`)."""
    if issue.assignees:
        return issue.assignees
    owner = owners.get((block.actor or "").lower()) if block is not None else None
    return (owner,) if owner else ()


def select_issues(
    issues: Iterable[Issue],
    *,
    actors: Iterable[str] = (),
    owners: Iterable[str] = (),
    labels: Iterable[str] = (),
    config: DigestConfig,
) -> list[Issue]:
    """The issues a report's filters keep (each filter given: any of its values; all given:
    every filter): the block's actor id, the owner (owners_of), an issue label. Compared
    without case."""
    want_actors = {a.lower() for a in actors}
    want_owners = {o.lower().removeprefix("@") for o in owners}
    want_labels = {label.lower() for label in labels}
    if not (want_actors or want_owners or want_labels):
        return list(issues)
    kept = []
    for issue in issues:
        block = parse(issue.body).block
        if want_actors and (block is None or (block.actor or "").lower() not in want_actors):
            continue
        who = {o.lower() for o in owners_of(issue, block, config.owners)}
        if want_owners and not who & want_owners:
            continue
        if want_labels and not {label.lower() for label in issue.labels} & want_labels:
            continue
        kept.append(issue)
    return kept


def _task_fields(
    issue: Issue,
    block: Block | None,
    now: datetime,
    stamp: datetime | None,
    owners: Mapping[str, str],
) -> dict[str, Any]:
    """What a digest entry and a task summary both say about one task, with the pull request
    and follow-ups `ai-context done --pr URL --followup TEXT` recorded."""
    extra = block.extra if block else {}
    items = (
        line.strip().lstrip("-*+").strip() for line in (extra.get("Follow-ups") or "").splitlines()
    )
    return {
        "owners": owners_of(issue, block, owners),
        "pull_request": (extra.get("Pull request") or "").strip() or None,
        "followups": tuple(item for item in items if item and item.lower() != "none"),
        "repository": issue.repository,
        "number": issue.number,
        "title": issue.title,
        "url": issue.html_url,
        "state": issue.state,
        "actor": block.actor if block else None,
        "phase": block.phase if block else None,
        "chunk": block.chunk if block else None,
        "plan_done": plan_done(block),
        "current_step": current_step_text(block),
        "next_step": block.next_step if block else None,
        "blockers": block.blockers if block else (),
        "last_updated": stamp,
        "age": _age(now, stamp),
    }


def _entry(
    issue: Issue,
    result: CheckResult,
    now: datetime,
    config: DigestConfig,
    verdict: tuple[Category, tuple[str, ...]],
) -> Entry:
    category, reasons = verdict
    block = result.block
    stamp = block.last_updated if block is not None else None
    if stamp is None and issue.state == "closed":
        stamp = _closed_at(issue)
    done_at = None
    if category == "shipped":
        done_at = _closed_at(issue) if issue.state == "closed" else stamp
    return Entry(
        **_task_fields(issue, block, now, stamp, config.owners),
        done_at=done_at,
        category=category,
        reasons=reasons,
        plan_total=len(block.plan) if block else 0,
        blocked_steps=sum(1 for s in block.plan if s.status == "blocked") if block else 0,
        errors=result.errors,
    )


Gone = tuple[str, str, str]  # a task read this run that is not in the digest: title, url, why


def _left(
    previous: StateRead,
    present: set[tuple[str, int]],
    gone: Mapping[tuple[str, int], Gone],
    repositories: Iterable[str],
) -> list[Change]:
    """Tasks the previous digest listed that this one does not (a shipped task ageing out of
    the window is no news, so it is not listed)."""
    read = {r.lower() for r in repositories}
    changes = []
    for key, before in sorted(previous.state.tasks.items()):
        if key in present or before.category == "shipped" or key[0].lower() not in read:
            continue
        title, url, why = gone.get(key, ("", "", "no longer found (transferred or deleted?)"))
        changes.append(
            Change(
                repository=key[0],
                number=key[1],
                title=title,
                url=url,
                category=before.category,
                left=why,
            )
        )
    return changes


def diff(
    entries: Iterable[Entry],
    previous: StateRead,
    gone: Mapping[tuple[str, int], Gone] | None = None,
    repositories: Iterable[str] = (),
) -> tuple[Change, ...]:
    """New tasks, tasks that moved category, plan steps completed and tasks that left since the
    previous state. With no usable previous state nothing is reported: calling every task
    "new" would be noise."""
    if previous.status != "restored":
        return ()
    changes: list[Change] = []
    present: set[tuple[str, int]] = set()
    for entry in entries:
        present.add(entry.key)
        before = previous.state.tasks.get(entry.key)
        moved = before.category if before and before.category != entry.category else None
        steps = max(0, entry.plan_done - before.done) if before else 0
        if before is None or moved or steps:
            changes.append(
                Change(
                    repository=entry.repository,
                    number=entry.number,
                    title=entry.title,
                    url=entry.url,
                    category=entry.category,
                    new=before is None,
                    moved_from=moved,
                    steps_completed=steps,
                )
            )
    changes += _left(previous, present, gone or {}, repositories)
    return tuple(changes)


def stuck_order(entry: Entry) -> tuple[int, float, str, int]:
    """Stuck by severity: 0 a broken block (the next session trusts it), 1 blocked (a blocker,
    or a blocked phase), 2 stale only; then the longest untouched first (no update time: first)."""
    severity = 0 if entry.errors else 1 if entry.blockers or is_blocked_phase(entry.phase) else 2
    age = entry.age.total_seconds() if entry.age is not None else float("inf")
    return (severity, -age, entry.repository, entry.number)


_BARE_REF = re.compile(r"(?<![\w/#&])#(\d+)\b")


def qualify_refs(text: str, repository: str) -> str:
    """`#411` in agent text as `owner/repo#411`, for a digest over several repositories."""
    return _BARE_REF.sub(lambda m: f"{repository}#{m.group(1)}", text) if "#" in text else text


def _qualified(entry: Entry) -> Entry:
    repo, step, after = entry.repository, entry.current_step, entry.next_step
    return entry.model_copy(
        update={
            "reasons": tuple(qualify_refs(r, repo) for r in entry.reasons),
            "blockers": tuple(qualify_refs(b, repo) for b in entry.blockers),
            "current_step": None if step is None else qualify_refs(step, repo),
            "next_step": None if after is None else qualify_refs(after, repo),
        }
    )


def digest_from_checked(
    checked: Iterable[tuple[Issue, CheckResult]],
    now: datetime,
    config: DigestConfig | None = None,
    previous: StateRead | None = None,
) -> Digest:
    """The digest of issues already checked (the caller ran `check_body` with the same `now`);
    the same issue given twice (by repository and number) counts once: the last one wins."""
    config = config or DigestConfig()
    previous = previous or StateRead(status="absent", detail="no previous digest found")
    now = utc(now)
    unique: dict[tuple[str, int], Entry] = {}
    gone: dict[tuple[str, int], Gone] = {}
    repositories: set[str] = set()
    for issue, result in checked:
        if issue.repository:
            repositories.add(issue.repository)
        category, reasons = categorise(issue, result, now, config)
        key = (issue.repository, issue.number)
        if category is None:
            gone[key] = (issue.title, issue.html_url, reasons[0] if reasons else "left")
            unique.pop(key, None)
        else:
            unique[key] = _entry(issue, result, now, config, (category, reasons))
            gone.pop(key, None)
    ordered = sorted(unique.values(), key=lambda e: e.key)
    if len(repositories) > 1:  # a bare #411 would link to the digest's own repository
        ordered = [_qualified(entry) for entry in ordered]
    entries = {c: tuple(e for e in ordered if e.category == c) for c in CATEGORIES}
    entries["stuck"] = tuple(sorted(entries["stuck"], key=stuck_order))
    return Digest(
        generated_at=now,
        window=config.window,
        stale_after=config.stale_after,
        repositories=tuple(sorted(repositories)),
        entries=entries,
        changes=diff(ordered, previous, gone, repositories),
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
    now = utc(now)
    return digest_from_checked(
        ((i, check_body(i.body, now=now, config=checks)) for i in issues), now, config, previous
    )


def summarize_task(issue: Issue, now: datetime, config: DigestConfig | None = None) -> TaskSummary:
    config = config or DigestConfig()
    now = utc(now)
    result = check_body(issue.body, now=now, config=config.checks())
    category, reasons = categorise(issue, result, now, config)
    block = result.block
    return TaskSummary(
        **_task_fields(issue, block, now, block.last_updated if block else None, config.owners),
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
