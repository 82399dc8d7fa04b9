"""`resume` (docs/seeds/000 steps 1-6): which task, both copies, reconcile, push or store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

from ai_context.adapters.cache import Cache
from ai_context.adapters.cache_entry import CacheEntry
from ai_context.adapters.github import GitHub
from ai_context.core.block.model import Block
from ai_context.core.block.parse import parse
from ai_context.core.models import Issue
from ai_context.core.phases import is_terminal
from ai_context.jobs.agent.model import IN_PROGRESS, RECENT, Candidate, MirrorHook, Outcome, Take
from ai_context.jobs.agent.write import Turn, as_utc, with_local, write_block
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
    tracker: GitHub,
    cache: Cache,
    actor: str | None,
    login: str | Callable[[], str | None] | None,
    notes: list[str],
) -> _Chosen | Outcome:
    """Step 1 without an issue number: the recent local copy, else in one listing of open issues the
    one whose block names ACTOR, else LOGIN's in-progress one, else an Outcome asking to pick. Among
    several, the latest Last updated: GitHub's "updated" moves with the bot's own comments."""
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


def resume(
    tracker: GitHub,
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
    notes: list[str] = []
    chosen = _Chosen(number, "argument") if number is not None else None
    if chosen is None:  # step 1: which task
        picked = _choose(tracker, cache, actor, login, notes)
        if isinstance(picked, Outcome):
            return picked
        chosen = picked
    entry = chosen.entry or cache.load(tracker.repository, chosen.number)
    issue = chosen.issue or tracker.get_issue(chosen.number)  # step 2: both copies
    actor = actor or (entry.actor if entry else None)
    turn = Turn("resume", tracker, cache, chosen.number, actor, as_utc(now or datetime.now(UTC)))
    if issue.state == "closed":
        notes.append(f"issue #{issue.number} is closed")
    parsed = parse(issue.body)
    if parsed.marker is not None and parsed.marker.sha256 and not parsed.marker.matches:
        notes.append(
            "the issue's block was edited by hand on GitHub (its hash marker no longer matches)"
        )
    base = entry.base_revision if entry else None
    decision = decide(entry.block if entry else None, parsed.block, base=base)
    log: str | None = None
    if decision.conflict:  # step 4
        if take is None:
            pick = (
                f"pick one: `ai-context resume {issue.number} --take local` pushes this "
                "machine's copy, `--take remote` keeps the issue's"
            )
            return turn.conflict(decision, issue, (*notes, pick))
        log = turn.log(decision, take)
        decision = resolve(decision, take)
    elif take is not None:
        notes.append(f"no conflict to resolve; --take {take} was ignored")
    reconciled = partial(
        turn.outcome, issue, source=chosen.source, decision=decision, conflict_log=log
    )
    missing = missing_labels(decision.state, required)  # step 5
    if missing:
        state, stored = _incomplete(turn, issue, decision, notes)
        return reconciled(
            status="incomplete",
            state=state,
            missing=tuple(missing),
            wrote_local=stored,
            notes=tuple(notes),
        )
    pushed = _step_six(turn, issue, decision, mirror=mirror, force=take == "local")
    if isinstance(pushed, Outcome):
        return pushed
    return reconciled(
        state=decision.state,
        wrote_remote=pushed[0],
        wrote_local=decision.write_local or decision.write_remote,
        reapplied=pushed[1],
        notes=tuple(notes),
    )


def _incomplete(
    turn: Turn, issue: Issue, decision: Decision, notes: list[str]
) -> tuple[Block | None, bool]:
    """Step 5 found a gap, nothing is pushed: a task with no state gets seeds/000's
    `initialize_empty()`; an issue's half block is stored as read, so the save completing it passes
    the write guard. The state to show, and whether it was stored."""
    state = decision.state
    if is_empty(state):
        notes.append(
            f"a new task: the block below is a starting point for "
            f"{turn.actor or 'your actor id'}; write its plan and save it with "
            f"`ai-context save {issue.number}`"
        )
        return initialize_empty(turn.actor, turn.now), False
    if decision.write_local and state is decision.remote and state is not None:
        turn.store(state, base=decision.remote_revision, body=issue.body)
        return state, True
    return state, False


def _step_six(
    turn: Turn, issue: Issue, decision: Decision, *, mirror: MirrorHook | None, force: bool
) -> Outcome | tuple[bool, bool]:
    """Step 6: push the local copy (through the write guard, this read held; FORCE is --take local)
    or store the issue's; whether the issue was written and the block re-applied."""
    state = decision.state
    assert state is not None  # only conflicts carry no state
    if not decision.write_remote:
        if decision.write_local:
            turn.store(state, base=decision.remote_revision, body=issue.body)
        return False, False
    written = write_block(
        turn.tracker,
        issue.number,
        state,
        writer=turn.actor or state.actor,
        base=decision.remote_revision,
        read_body=issue.body,
        force=force,
    )
    if written.decision.conflict:
        again = ("the issue changed again while this machine was pushing its copy",)
        return turn.conflict(with_local(written.decision, state), issue, again)
    turn.landed(state, written, mirror, logged=True)  # --take was logged as it resolved
    return written.changed, written.reapplied
