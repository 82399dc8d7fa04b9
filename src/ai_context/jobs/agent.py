"""The agent side's shell: save, resume, handoff and done over the issue and the local cache.

Each command is one function that takes its adapters (the GitHub adapter, or anything with the
same methods; the cache; the clock) and returns an Outcome; cli_agent.py turns arguments into
calls and Outcomes into text or JSON. The decisions are reconcile.py's.

GitHub has no compare-and-swap on issue bodies, so a write re-reads the issue right before its
PATCH: a body changed since the read gets the block re-applied on the fresh text (human text
outside the block is never lost), and a block changed by another actor stops the write. The
read is the cache's copy of the body when it has one (so a save costs 2 calls), else a GET.
What lands between the re-read and the PATCH (one round trip) can still be overwritten: GitHub
offers no conditional update of an issue body.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from ai_context.adapters.cache import Cache, CacheEntry, entry_for
from ai_context.core.block import Block, parse, render, replace_block
from ai_context.core.errors import UsageError
from ai_context.core.models import Issue
from ai_context.rules.checks import REQUIRED_DEFAULT
from ai_context.rules.reconcile import (
    Decision,
    body_diff,
    conflict_diff,
    decide,
    decide_write,
    missing_labels,
    resolve,
    revision,
)

IN_PROGRESS = "in-progress"
BODY_LIMIT = 65536
RECENT = timedelta(hours=24)
Status = Literal["ok", "conflict", "incomplete", "pick"]
Take = Literal["local", "remote"]


class Tracker(Protocol):
    """What the commands need from GitHub; `ai_context.adapters.github.GitHub` is one."""

    repository: str

    def get_issue(self, number: int) -> Issue: ...

    def update_issue_body(self, number: int, body: str) -> Issue: ...

    def list_issues(
        self,
        state: str = "open",
        *,
        assignee: str | None = None,
        labels: Sequence[str] = (),
        sort: str | None = None,
        limit: int | None = None,
    ) -> list[Issue]: ...


MirrorHook = Callable[[Issue, Block], None]
"""Called once a block has reached the issue: the ClickUp mirror (issue 4) plugs in here."""

LeaseHook = Callable[[Issue, str], None]
"""Called once a handoff has reached the issue, with the actor handing off: releases its lease."""


class AgentError(UsageError):
    """Input the command cannot work with: exit 2 with what to do."""


class Candidate(BaseModel):
    """An open task to pick from when resume cannot tell which one is active."""

    model_config = ConfigDict(frozen=True)

    number: int
    title: str
    actor: str | None = None
    phase: str | None = None
    assignees: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    updated_at: datetime | None = None


class Outcome(BaseModel):
    """What a command did: cli_agent renders it and maps `status` to the exit code."""

    model_config = ConfigDict(frozen=True)

    command: Literal["save", "resume", "handoff", "done"]
    repository: str
    issue: int | None = None
    title: str = ""
    html_url: str = ""
    status: Status = "ok"
    source: str = ""  # resume: how the task was chosen (argument, cache, assigned)
    decision: Decision | None = None
    state: Block | None = None
    missing: tuple[str, ...] = ()
    wrote_remote: bool = False
    wrote_local: bool = False
    reapplied: bool = False  # the body changed between read and write; re-applied on it
    dry_run: bool = False
    diff: str = ""  # dry-run: the body's diff; conflict: the blocks' diff
    notes: tuple[str, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    conflict_log: str | None = None


@dataclass
class _Written:
    decision: Decision
    issue: Issue | None = None  # as written (or as re-read when nothing needed writing)
    reapplied: bool = False
    changed: bool = False
    diff: str = ""


def write_block(
    tracker: Tracker,
    number: int,
    block: Block,
    *,
    writer: str | None,
    base: str | None,
    read_body: str | None = None,
    dry_run: bool = False,
) -> _Written:
    """Put BLOCK into the issue body, keeping every byte outside it.

    READ_BODY is the body as last read (the cache's copy, or a GET the caller just made);
    without it the issue is read first. The issue is re-read before the PATCH; if the body
    changed, the block is re-applied on the fresh body, unless the block itself was changed
    by an actor other than WRITER since revision BASE: that is a conflict and nothing is
    written. Dry-run stops after the read and returns the body's diff."""
    if read_body is None:
        read_body = tracker.get_issue(number).body
    check = decide_write(parse(read_body).block, base=base, writer=writer)
    if check.conflict:
        return _Written(check)
    planned = replace_block(read_body, block)
    if dry_run:
        return _Written(check, diff=body_diff(read_body, planned), changed=planned != read_body)
    fresh = tracker.get_issue(number)
    reapplied = fresh.body != read_body
    if reapplied:
        check = decide_write(parse(fresh.body).block, base=base, writer=writer)
        if check.conflict:
            return _Written(check, fresh, reapplied=True)
        planned = replace_block(fresh.body, block)
    if planned == fresh.body:
        return _Written(check, fresh, reapplied=reapplied)
    if len(planned) > BODY_LIMIT:
        raise AgentError(
            f"issue #{number}'s body would be {len(planned):,} characters with this block; "
            f"GitHub allows {BODY_LIMIT:,}: shorten the block (or the issue's text)"
        )
    updated = tracker.update_issue_body(number, planned)
    return _Written(check, updated, reapplied=reapplied, changed=True)


# --- helpers ------------------------------------------------------------------------------


def _utc(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(microsecond=0)


def _store(
    cache: Cache,
    tracker: Tracker,
    number: int,
    block: Block,
    *,
    base: str | None,
    actor: str | None,
    body: str | None,
    now: datetime,
) -> CacheEntry:
    entry = entry_for(
        repository=tracker.repository,
        issue=number,
        block=block,
        text=render(block),
        revision=revision(block),
        base_revision=base,
        actor=actor,
        body=body,
        now=now,
    )
    cache.store(entry)
    return entry


def _log_conflict(
    cache: Cache,
    tracker: Tracker,
    command: str,
    number: int,
    decision: Decision,
    *,
    actor: str | None,
    now: datetime,
    choice: Take | None = None,
) -> str:
    """Seeds/000 step 4: every conflict is logged, with both copies, for later analysis."""
    record: dict[str, Any] = {
        "at": _utc(now).isoformat().replace("+00:00", "Z"),
        "command": command,
        "repository": tracker.repository,
        "issue": number,
        "actor": actor,
        "choice": choice,
        "reasons": list(decision.reasons),
        "local_revision": decision.local_revision,
        "remote_revision": decision.remote_revision,
        "base_revision": decision.base_revision,
        "local": render(decision.local) if decision.local is not None else None,
        "remote": render(decision.remote) if decision.remote is not None else None,
    }
    return str(cache.log_conflict(record))


def _settle(
    cache: Cache,
    tracker: Tracker,
    number: int,
    block: Block,
    written: _Written,
    *,
    writer: str | None,
    now: datetime,
    mirror: MirrorHook | None,
) -> tuple[str, ...]:
    """After a write that landed: the cache now matches the issue, the mirror follows."""
    assert written.issue is not None
    _store(
        cache,
        tracker,
        number,
        block,
        base=revision(block),
        actor=writer,
        body=written.issue.body,
        now=now,
    )
    if mirror is not None and written.changed:
        mirror(written.issue, block)
    if written.reapplied:
        return ("the issue body changed since the read; the block was re-applied on it",)
    return ()


def _conflict(
    command: Literal["save", "resume", "handoff", "done"],
    tracker: Tracker,
    cache: Cache,
    number: int,
    decision: Decision,
    *,
    actor: str | None,
    now: datetime,
    issue: Issue | None = None,
    notes: tuple[str, ...] = (),
    dry_run: bool = False,
) -> Outcome:
    # A dry run writes nothing, the conflict log included.
    log = (
        None
        if dry_run
        else _log_conflict(cache, tracker, command, number, decision, actor=actor, now=now)
    )
    return Outcome(
        command=command,
        repository=tracker.repository,
        issue=number,
        title=issue.title if issue else "",
        html_url=issue.html_url if issue else "",
        status="conflict",
        decision=decision,
        diff=conflict_diff(decision.local, decision.remote, issue=number),
        notes=notes,
        conflict_log=log,
    )


def _with_local(decision: Decision, block: Block) -> Decision:
    return decision.model_copy(update={"local": block, "local_revision": revision(block)})


def with_changes(block: Block, **changes: Any) -> Block:
    """BLOCK with CHANGES, validated like any block (an actor id is one word, ...)."""
    data = block.model_dump(exclude={"paths"})
    data.update(changes)
    try:
        return Block.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "block"
        raise AgentError(f"{where}: {problem['msg'].removeprefix('Value error, ')}") from exc


# --- save ---------------------------------------------------------------------------------


def save(
    tracker: Tracker,
    cache: Cache,
    number: int,
    block: Block,
    *,
    writer: str | None,
    now: datetime,
    dry_run: bool = False,
    required: tuple[str, ...] = REQUIRED_DEFAULT,
    mirror: MirrorHook | None = None,
) -> Outcome:
    """Write BLOCK (stamped NOW) into the issue: 2 GitHub calls when the cache holds the body
    as last read (re-read, PATCH), 3 without (read, re-read, PATCH); dry-run 1 (read).

    The local copy is stored first, as unpushed: if the PATCH never happens (GitHub down, a
    crash, a conflict), the next resume finds it and pushes it or asks."""
    now = _utc(now)
    block = with_changes(block, last_updated=now)
    writer = writer or block.actor
    missing = missing_labels(block, required)
    if missing:
        return Outcome(
            command="save",
            repository=tracker.repository,
            issue=number,
            status="incomplete",
            state=block,
            missing=tuple(missing),
            dry_run=dry_run,
        )
    entry = cache.load(tracker.repository, number)
    base = entry.base_revision if entry else None
    cached_body = entry.body if entry else None
    if not dry_run:
        _store(cache, tracker, number, block, base=base, actor=writer, body=cached_body, now=now)
    written = write_block(
        tracker,
        number,
        block,
        writer=writer,
        base=base,
        read_body=None if dry_run else cached_body,  # a dry run diffs against the issue now
        dry_run=dry_run,
    )
    if written.decision.conflict:
        hint = (
            "your block is kept in the local cache as unpushed; `ai-context resume "
            f"{number} --take local` pushes it over the issue's, `--take remote` drops it",
        )
        return _conflict(
            "save",
            tracker,
            cache,
            number,
            _with_local(written.decision, block),
            actor=writer,
            now=now,
            issue=written.issue,
            notes=hint if not dry_run else (),
            dry_run=dry_run,
        )
    if dry_run:
        return Outcome(
            command="save",
            repository=tracker.repository,
            issue=number,
            state=block,
            dry_run=True,
            diff=written.diff,
            notes=() if written.changed else ("the issue already has this block",),
        )
    issue = written.issue
    assert issue is not None  # a write that is not a conflict has read or written the issue
    notes = list(
        _settle(cache, tracker, number, block, written, writer=writer, now=now, mirror=mirror)
    )
    if not written.changed:
        notes.append("the issue already had this block; nothing was written")
    return Outcome(
        command="save",
        repository=tracker.repository,
        issue=number,
        title=issue.title,
        html_url=issue.html_url,
        state=block,
        wrote_remote=written.changed,
        wrote_local=True,
        reapplied=written.reapplied,
        notes=tuple(notes),
    )


# --- resume -------------------------------------------------------------------------------


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
    now = _utc(now or datetime.now(UTC))
    repository = tracker.repository
    entry: CacheEntry | None = None
    issue: Issue | None = None
    source = "argument"
    notes: list[str] = []
    if number is None:  # step 1: which task
        recent = cache.recent(repository, RECENT, datetime.now(UTC))
        if recent:
            entry, number, source = recent[0], recent[0].issue, "cache"
        elif who := (login() if callable(login) else login):
            # One page (one call). GitHub's "updated" moves with the bot's own comments and
            # labels, so the task is chosen by its block's Last updated (docs/design.md §5).
            found = tracker.list_issues(
                "open", assignee=who, labels=[IN_PROGRESS], sort="updated", limit=100
            )
            if found:
                issue = max(found, key=_declared_activity)
                number, source = issue.number, "assigned"
        else:
            notes.append(
                "no GitHub login known for this actor: pass --assignee LOGIN or set "
                "actors.<id>.owner in the config file to find your in-progress issue"
            )
        if number is None:
            listed = tracker.list_issues("open", sort="updated", limit=30)
            return Outcome(
                command="resume",
                repository=repository,
                status="pick",
                candidates=tuple(_candidate(i) for i in listed),
                notes=(
                    *notes,
                    "no recent local copy and no open in-progress issue assigned to you: "
                    "pick a task and run `ai-context resume ISSUE`",
                ),
            )
    if entry is None:
        entry = cache.load(repository, number)
    if issue is None:  # step 2: both copies
        issue = tracker.get_issue(number)
    if issue.state == "closed":
        notes.append(f"issue #{number} is closed")
    remote = parse(issue.body).block
    actor = actor or (entry.actor if entry else None)
    decision = decide(
        entry.block if entry else None, remote, base=entry.base_revision if entry else None
    )
    log: str | None = None
    if decision.conflict:  # step 4
        if take is None:
            return _conflict(
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
        log = _log_conflict(
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
        "source": source,
        "decision": decision,
        "state": decision.state,
        "conflict_log": log,
    }
    missing = missing_labels(decision.state, required)  # step 5
    if missing:
        return Outcome(status="incomplete", missing=tuple(missing), notes=tuple(notes), **common)
    state = decision.state
    assert state is not None  # only conflicts carry no state
    wrote_remote = reapplied = False
    if decision.write_remote:  # step 6
        written = write_block(
            tracker,
            number,
            state,
            writer=actor or state.actor,
            base=decision.remote_revision,
            read_body=issue.body,
        )
        if written.decision.conflict:
            return _conflict(
                "resume",
                tracker,
                cache,
                number,
                _with_local(written.decision, state),
                actor=actor,
                now=now,
                issue=issue,
                notes=("the issue changed again while this machine was pushing its copy",),
            )
        assert written.issue is not None
        issue, wrote_remote, reapplied = written.issue, written.changed, written.reapplied
        _store(
            cache,
            tracker,
            number,
            state,
            base=revision(state),
            actor=actor,
            body=issue.body,
            now=now,
        )
        if mirror is not None and written.changed:
            mirror(issue, state)
    elif decision.write_local:
        _store(
            cache,
            tracker,
            number,
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


# --- handoff and done ---------------------------------------------------------------------


def _rewrite(
    command: Literal["handoff", "done"],
    tracker: Tracker,
    cache: Cache,
    number: int,
    change: Callable[[Block], Block],
    *,
    writer: str | None,
    now: datetime,
    dry_run: bool,
    required: tuple[str, ...],
    mirror: MirrorHook | None,
) -> tuple[Outcome, Issue | None, str | None]:
    """Reconcile (as resume does), apply CHANGE to the state, write it: 3 GitHub calls.
    Returns the outcome, the issue as written (None when nothing was) and the writer."""
    repository = tracker.repository
    entry = cache.load(repository, number)
    issue = tracker.get_issue(number)
    decision = decide(
        entry.block if entry else None,
        parse(issue.body).block,
        base=entry.base_revision if entry else None,
    )
    writer = writer or (entry.actor if entry else None)
    if decision.conflict:
        return (
            _conflict(
                command,
                tracker,
                cache,
                number,
                decision,
                actor=writer,
                now=now,
                issue=issue,
                notes=(f"resolve it first with `ai-context resume {number} --take local|remote`",),
                dry_run=dry_run,
            ),
            None,
            writer,
        )
    current = decision.state or Block()
    writer = writer or current.actor
    block = change(current)
    common: dict[str, Any] = {
        "command": command,
        "repository": repository,
        "issue": number,
        "title": issue.title,
        "html_url": issue.html_url,
        "state": block,
        "dry_run": dry_run,
    }
    missing = missing_labels(block, required)
    if missing:
        return Outcome(status="incomplete", missing=tuple(missing), **common), None, writer
    written = write_block(
        tracker,
        number,
        block,
        writer=writer,
        base=decision.remote_revision,
        read_body=issue.body,
        dry_run=dry_run,
    )
    if written.decision.conflict:
        return (
            _conflict(
                command,
                tracker,
                cache,
                number,
                _with_local(written.decision, block),
                actor=writer,
                now=now,
                issue=issue,
                dry_run=dry_run,
            ),
            None,
            writer,
        )
    if dry_run:
        return Outcome(diff=written.diff, **common), None, writer
    assert written.issue is not None
    notes = _settle(cache, tracker, number, block, written, writer=writer, now=now, mirror=mirror)
    outcome = Outcome(
        wrote_remote=written.changed,
        wrote_local=True,
        reapplied=written.reapplied,
        notes=notes,
        **common,
    )
    return outcome, written.issue, writer


def handoff(
    tracker: Tracker,
    cache: Cache,
    number: int,
    to: str,
    *,
    description: str | None = None,
    next_step: str | None = None,
    writer: str | None = None,
    now: datetime,
    dry_run: bool = False,
    required: tuple[str, ...] = REQUIRED_DEFAULT,
    release_lease: LeaseHook | None = None,
    mirror: MirrorHook | None = None,
) -> Outcome:
    """Hand the task to actor TO: Active actor TO, Phase `handoff`, the plan kept. The lease
    of the actor handing off is released through RELEASE_LEASE once the block is written."""
    now = _utc(now)
    changes: dict[str, Any] = {
        "actor": to,
        "actor_description": description,
        "phase": "handoff",
        "chunk": None,
        "last_updated": now,
    }
    if next_step is not None:
        changes["next_step"] = next_step
    outcome, issue, handing = _rewrite(
        "handoff",
        tracker,
        cache,
        number,
        lambda block: with_changes(block, **changes),
        writer=writer,
        now=now,
        dry_run=dry_run,
        required=required,
        mirror=mirror,
    )
    if issue is not None and release_lease is not None and handing:
        release_lease(issue, handing)
    return outcome


def final_block(
    block: Block,
    *,
    now: datetime,
    pr: str | None,
    followups: Sequence[str],
    shipped: str | None,
) -> Block:
    """The block managers and teammates see from now on: what shipped, the PR, follow-ups."""
    done_steps = [step.text for step in block.plan if step.status == "done"]
    summary = shipped or "; ".join(done_steps) or "see the pull request"
    extra = {
        k: v for k, v in block.extra.items() if k not in ("Shipped", "Pull request", "Follow-ups")
    }
    extra["Shipped"] = summary
    if pr:
        extra["Pull request"] = pr
    items = [item.strip() for item in followups if item.strip()]
    extra["Follow-ups"] = "\n".join(["", *(f"- {item}" for item in items)]) if items else "none"
    next_step = "the follow-ups below (the task itself is done)" if items else "none (task done)"
    return with_changes(
        block,
        phase="done",
        chunk=None,
        last_updated=now,
        blockers=(),
        next_step=next_step,
        extra=extra,
    )


def done(
    tracker: Tracker,
    cache: Cache,
    number: int,
    *,
    pr: str | None = None,
    followups: Sequence[str] = (),
    shipped: str | None = None,
    writer: str | None = None,
    now: datetime,
    dry_run: bool = False,
    required: tuple[str, ...] = REQUIRED_DEFAULT,
    mirror: MirrorHook | None = None,
) -> Outcome:
    """The final block (docs/seeds/000 "Task complete"): Phase `done`, what shipped, the PR, and
    the follow-ups."""
    if pr is not None and not pr.startswith(("https://", "http://")):
        raise AgentError(f"--pr {pr!r} is not a URL; pass the pull request's https:// link")
    now = _utc(now)
    outcome, _, _ = _rewrite(
        "done",
        tracker,
        cache,
        number,
        lambda block: final_block(block, now=now, pr=pr, followups=followups, shipped=shipped),
        writer=writer,
        now=now,
        dry_run=dry_run,
        required=required,
        mirror=mirror,
    )
    return outcome
