"""`resume` (docs/seeds/000 steps 1-6): which task, both copies, reconcile, push or store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ai_context.adapters.cache import Cache
from ai_context.adapters.cache_entry import CacheEntry
from ai_context.core.block.parse import parse
from ai_context.core.models import Issue
from ai_context.core.phases import is_terminal
from ai_context.jobs.agent.model import (
    IN_PROGRESS,
    RECENT,
    Candidate,
    MirrorHook,
    Outcome,
    Take,
    Tracker,
)
from ai_context.jobs.agent.write import (
    Written,
    as_utc,
    conflict_outcome,
    log_conflict,
    settle,
    store_copy,
    with_local,
    write_block,
)
from ai_context.rules.checks import REQUIRED_DEFAULT
from ai_context.rules.reconcile import (
    Decision,
    decide,
    initialize_empty,
    is_empty,
    missing_labels,
    resolve,
)


def _candidate(issue: Issue) -> Candidate:
    block = parse(issue.body).block
    return Candidate(
        number=issue.number,
        title=issue.title,
        actor=block.actor if block else None,
        phase=block.phase if block else None,
        assignees=issue.assignees,
        labels=issue.labels,
        updated_at=issue.updated_at,
    )


def _declared_activity(issue: Issue) -> tuple[datetime, datetime]:
    """When the task's actor last wrote (the block), then GitHub's time as the tie-break."""
    block = parse(issue.body).block
    floor = datetime.min.replace(tzinfo=UTC)
    declared = block.last_updated if block is not None and block.last_updated else floor
    return declared, issue.updated_at or floor


@dataclass
class _Chosen:
    """Step 1's answer: the task, how it was chosen, and what was read on the way."""

    number: int
    source: str
    entry: CacheEntry | None = None
    issue: Issue | None = None


LISTED = 100  # step 1's one listing: a page of the most recently updated open issues
PICK = 30  # of which the first are offered to pick from


def _choose(
    tracker: Tracker,
    cache: Cache,
    actor: str | None,
    login: str | Callable[[], str | None] | None,
    notes: list[str],
) -> _Chosen | Outcome:
    """Step 1 without an issue number: the recent local copy (no GitHub call), else one
    listing of the open issues, in which the task is the one whose block names ACTOR as Active
    actor (a new machine knows its actor before any config), else the one assigned to LOGIN
    with the in-progress label (seeds/000's rule); when neither is found, an Outcome asking to
    pick among them. GitHub's "updated" moves with the bot's own comments and labels, so a
    task is chosen by its block's Last updated (docs/design.md §5)."""
    repository = tracker.repository
    recent = cache.recent(repository, RECENT, datetime.now(UTC))
    if recent:
        return _Chosen(recent[0].issue, "cache", entry=recent[0])
    listed = tracker.list_issues("open", sort="updated", limit=LISTED)
    mine = [i for i in listed if actor is not None and _active_actor(i) == actor]
    if mine:
        issue = max(mine, key=_declared_activity)
        return _Chosen(issue.number, "block", issue=issue)
    if who := (login() if callable(login) else login):
        assigned = [
            i
            for i in listed
            if who.lower() in (a.lower() for a in i.assignees) and IN_PROGRESS in i.labels
        ]
        if assigned:
            issue = max(assigned, key=_declared_activity)
            return _Chosen(issue.number, "assigned", issue=issue)
    else:
        notes.append(
            "no GitHub login known for this actor: pass --assignee LOGIN or set "
            "actors.<id>.owner in the config file to find your in-progress issue"
        )
    return Outcome(
        command="resume",
        repository=repository,
        status="pick",
        candidates=tuple(_candidate(i) for i in listed[:PICK]),
        notes=(
            *notes,
            "no recent local copy, no open issue whose block names "
            f"{actor or 'this actor'} as Active actor and none assigned to you: pick a task "
            "and run `ai-context resume ISSUE`",
        ),
    )


def _active_actor(issue: Issue) -> str | None:
    """The Active actor of ISSUE's block, when the task is still going (not done)."""
    block = parse(issue.body).block
    if block is None or is_terminal(block.phase):
        return None
    return block.actor


def _push(
    tracker: Tracker,
    cache: Cache,
    issue: Issue,
    decision: Decision,
    *,
    actor: str | None,
    now: datetime,
    mirror: MirrorHook | None,
    force: bool,
) -> Outcome | Written:
    """Step 6 when the local copy is newer: write it, then the cache matches the issue. The
    write guard is asked as for any write; this resume's own read is the revision held, and
    FORCE is the person's `--take local`."""
    state = decision.state
    assert state is not None  # only conflicts carry no state
    number = issue.number
    written = write_block(
        tracker,
        number,
        state,
        writer=actor or state.actor,
        base=decision.remote_revision,
        read_body=issue.body,
        force=force,
    )
    if written.decision.conflict:
        return conflict_outcome(
            "resume",
            tracker,
            cache,
            number,
            with_local(written.decision, state),
            actor=actor,
            now=now,
            issue=issue,
            notes=("the issue changed again while this machine was pushing its copy",),
        )
    settle(cache, tracker, number, state, written, writer=actor, now=now, mirror=mirror)
    return written


def resume(
    tracker: Tracker,
    cache: Cache,
    number: int | None = None,
    *,
    actor: str | None = None,
    login: str | Callable[[], str | None] | None = None,
    now: datetime | None = None,
    take: Take | None = None,
    required: tuple[str, ...] = REQUIRED_DEFAULT,
    mirror: MirrorHook | None = None,
) -> Outcome:
    """Seeds/000 steps 1-6. One GitHub call when the task is known (argument or cache) and the
    copies need no push; a push adds the write's re-read and PATCH. LOGIN (or a function
    giving it, called only when step 1 gets that far) finds the actor's in-progress issue."""
    now = as_utc(now or datetime.now(UTC))
    repository = tracker.repository
    notes: list[str] = []
    chosen = _Chosen(number, "argument") if number is not None else None
    if chosen is None:  # step 1: which task
        picked = _choose(tracker, cache, actor, login, notes)
        if isinstance(picked, Outcome):
            return picked
        chosen = picked
    number = chosen.number
    entry = chosen.entry or cache.load(repository, number)
    issue = chosen.issue or tracker.get_issue(number)  # step 2: both copies
    if issue.state == "closed":
        notes.append(f"issue #{number} is closed")
    parsed = parse(issue.body)
    if parsed.marker is not None and parsed.marker.sha256 and not parsed.marker.matches:
        notes.append(
            "the issue's block was edited by hand on GitHub (its hash marker no longer matches)"
        )
    actor = actor or (entry.actor if entry else None)
    decision = decide(
        entry.block if entry else None,
        parsed.block,
        base=entry.base_revision if entry else None,
    )
    log: str | None = None
    if decision.conflict:  # step 4
        if take is None:
            return conflict_outcome(
                "resume",
                tracker,
                cache,
                number,
                decision,
                actor=actor,
                now=now,
                issue=issue,
                notes=(
                    *notes,
                    f"pick one: `ai-context resume {number} --take local` pushes this "
                    "machine's copy, `--take remote` keeps the issue's",
                ),
            )
        log = log_conflict(
            cache, tracker, "resume", number, decision, actor=actor, now=now, choice=take
        )
        decision = resolve(decision, take)
    elif take is not None:
        notes.append(f"no conflict to resolve; --take {take} was ignored")
    common: dict[str, Any] = {
        "command": "resume",
        "repository": repository,
        "issue": number,
        "title": issue.title,
        "html_url": issue.html_url,
        "source": chosen.source,
        "decision": decision,
        "state": decision.state,
        "conflict_log": log,
    }
    missing = missing_labels(decision.state, required)  # step 5
    if missing:
        return _incomplete(
            tracker,
            cache,
            issue,
            decision,
            actor=actor,
            now=now,
            missing=missing,
            notes=notes,
            common=common,
        )
    return _step_six(
        tracker,
        cache,
        issue,
        decision,
        actor=actor,
        now=now,
        mirror=mirror,
        force=take == "local",
        common=common,
        notes=notes,
    )


def _incomplete(
    tracker: Tracker,
    cache: Cache,
    issue: Issue,
    decision: Decision,
    *,
    actor: str | None,
    now: datetime,
    missing: list[str],
    notes: list[str],
    common: dict[str, Any],
) -> Outcome:
    """Step 5 found a gap; nothing is pushed. A task with no state anywhere gets seeds/000's
    `initialize_empty()`: a block for ACTOR, Phase planning, its plan to write, ready for
    `save`. An issue's half block is remembered as read (the cache's base), so the save that
    completes it passes the write guard."""
    state = decision.state
    if is_empty(state):
        common["state"] = initialize_empty(actor, now)
        notes.append(
            f"a new task: the block below is a starting point for {actor or 'your actor id'}; "
            f"write its plan and save it with `ai-context save {issue.number}`"
        )
    elif decision.write_local and state is decision.remote and state is not None:
        store_copy(
            cache,
            tracker,
            issue.number,
            state,
            base=decision.remote_revision,
            actor=actor,
            body=issue.body,
            now=now,
        )
        common["wrote_local"] = True
    return Outcome(status="incomplete", missing=tuple(missing), notes=tuple(notes), **common)


def _step_six(
    tracker: Tracker,
    cache: Cache,
    issue: Issue,
    decision: Decision,
    *,
    actor: str | None,
    now: datetime,
    mirror: MirrorHook | None,
    force: bool,
    common: dict[str, Any],
    notes: list[str],
) -> Outcome:
    """Step 6: push the local copy (FORCE: the person took it with --take local), or store the
    issue's, as the decision says."""
    state = decision.state
    assert state is not None  # only conflicts carry no state
    wrote_remote = reapplied = False
    if decision.write_remote:
        pushed = _push(
            tracker, cache, issue, decision, actor=actor, now=now, mirror=mirror, force=force
        )
        if isinstance(pushed, Outcome):
            return pushed
        wrote_remote, reapplied = pushed.changed, pushed.reapplied
    elif decision.write_local:
        store_copy(
            cache,
            tracker,
            issue.number,
            state,
            base=decision.remote_revision,
            actor=actor,
            body=issue.body,
            now=now,
        )
    return Outcome(
        wrote_remote=wrote_remote,
        wrote_local=decision.write_local or decision.write_remote,
        reapplied=reapplied,
        notes=tuple(notes),
        **common,
    )
