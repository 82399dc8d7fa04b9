"""Writing a block into an issue body, and settling what landed (cache, mirror, conflict log)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from ai_context.adapters.cache import Cache
from ai_context.adapters.cache_entry import CacheEntry, entry_for
from ai_context.core.block.model import Block, BlockError
from ai_context.core.block.parse import parse
from ai_context.core.block.render import render, replace_block
from ai_context.core.models import Issue
from ai_context.jobs.agent.model import BODY_LIMIT, AgentError, MirrorHook, Outcome, Take, Tracker
from ai_context.jobs.bodywrite import Committed, commit_body, fresh_read
from ai_context.rules.overwrite import Region
from ai_context.rules.reconcile import (
    Decision,
    body_diff,
    conflict_diff,
    may_write,
    revision,
)


@dataclass
class Written:
    decision: Decision
    issue: Issue | None = None  # as written (or as re-read when nothing needed writing)
    reapplied: bool = False
    changed: bool = False
    diff: str = ""
    overridden: Decision | None = None  # the conflict a forced write (--take local) went over
    notes: tuple[str, ...] = ()  # what the checked write put back or could not check


def write_block(
    tracker: Tracker,
    number: int,
    block: Block,
    *,
    writer: str | None,
    base: str | None,
    read_body: str | None = None,
    dry_run: bool = False,
    force: bool = False,
) -> Written:
    """Put BLOCK into the issue body, keeping every byte outside it.

    READ_BODY is the body as last read (the cache's copy, or a GET the caller just made);
    without it the issue is read first. The write guard (reconcile.may_write: this machine
    holds revision BASE, the issue's current one, and WRITER is its Active actor) is asked on
    that body (a refusal on a cached body is checked again on the issue as it is now) and again
    on the re-read before the PATCH (made after the write spacing); if the body changed
    outside the block, the block is re-applied on the fresh body. After the PATCH the issue's
    edit history says whether an edit landed in between (jobs/bodywrite.py): one outside the
    block is re-applied, one of the block is put back and this write becomes a conflict with
    both copies. A refusal writes nothing, unless FORCE (the user chose this copy with
    --take local; the refusal is returned as `overridden` for the log). Dry-run stops after
    the read and returns the body's diff."""
    read: Issue | None = None
    if read_body is None:
        read = tracker.get_issue(number)
        read_body = read.body
    check, overridden = guard(read_body, number, base=base, writer=writer, force=force)
    if check.conflict and read is None:  # refused on the cached body: show the issue as it is
        read = tracker.get_issue(number)
        read_body = read.body
        check, overridden = guard(read_body, number, base=base, writer=writer, force=force)
    if check.conflict:
        return Written(check, read)
    planned = replace_block(read_body, block)
    if dry_run:
        return Written(
            check,
            diff=body_diff(read_body, planned),
            changed=planned != read_body,
            overridden=overridden,
        )
    fresh = fresh_read(tracker, number)
    reapplied = fresh.body != read_body
    if reapplied:
        check, overridden = guard(fresh.body, number, base=base, writer=writer, force=force)
        if check.conflict:
            return Written(check, fresh, reapplied=True)
        planned = replace_block(fresh.body, block)
    if planned == fresh.body:
        return Written(check, fresh, reapplied=reapplied, overridden=overridden)
    if len(planned) > BODY_LIMIT:
        raise AgentError(
            f"issue #{number}'s body would be {len(planned):,} characters with this block; "
            f"GitHub allows {BODY_LIMIT:,}: shorten the block (or the issue's text)"
        )
    region = Region(own=block_text, put=lambda body: replace_block(body, block))
    done = commit_body(tracker, number, read=fresh.body, planned=planned, region=region)
    if not done.landed:
        return Written(overwritten(check, done, number), done.issue, changed=True)
    return Written(
        check,
        done.issue,
        reapplied=reapplied or done.reapplied,
        changed=True,
        overridden=overridden,
        notes=done.notes,
    )


def block_text(body: str) -> str | None:
    """The text of BODY's block as it stands (markers included); None when it has none."""
    region = parse(body).region
    return None if region is None else body[region.start : region.end]


def overwritten(check: Decision, done: Committed, number: int) -> Decision:
    """The conflict of a write that did not stay: the other copy is the other edit's block."""
    other = parse(done.other).block if done.other is not None else None
    return replace(
        check,
        kind="conflict",
        reasons=(done.problem,),
        remote=other,
        remote_revision=revision(other) if other is not None else None,
        remedy=(
            f"both copies are shown here and kept in the conflict log; `ai-context resume "
            f"{number}` reads the issue's copy, `--take local` writes this one over it (logged)"
        ),
    )


def guard(
    body: str, number: int, *, base: str | None, writer: str | None, force: bool = False
) -> tuple[Decision, Decision | None]:
    """The write guard (reconcile.may_write) on BODY's block; with FORCE a refusal becomes a
    push, and the refusal is returned beside it for the conflict log."""
    parsed = parse(body)
    marker = parsed.marker
    check = may_write(
        parsed.block,
        held=base,
        writer=writer,
        hand_edited=marker is not None and marker.sha256 is not None and not marker.matches,
        issue=number,
    )
    if not (check.conflict and force):
        return check, None
    forced = replace(
        check, kind="push_local", reasons=(*check.reasons, "pushed anyway: --take local")
    )
    return forced, check


# --- helpers ------------------------------------------------------------------------------


def as_utc(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(microsecond=0)


def store_copy(
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


def log_conflict(
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
        "at": as_utc(now).isoformat().replace("+00:00", "Z"),
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


def settle(
    cache: Cache,
    tracker: Tracker,
    number: int,
    block: Block,
    written: Written,
    *,
    writer: str | None,
    now: datetime,
    mirror: MirrorHook | None,
) -> tuple[str, ...]:
    """After a write that landed: the cache now matches the issue, the mirror follows."""
    assert written.issue is not None
    store_copy(
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
    if written.reapplied and not written.notes:
        return ("the issue body changed since the read; the block was re-applied on it",)
    return written.notes


def conflict_outcome(
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
        else log_conflict(cache, tracker, command, number, decision, actor=actor, now=now)
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
        notes=(decision.remedy, *notes) if decision.remedy else notes,
        conflict_log=log,
    )


def with_local(decision: Decision, block: Block) -> Decision:
    return replace(decision, local=block, local_revision=revision(block))


def with_changes(block: Block, **changes: Any) -> Block:
    """BLOCK with CHANGES, validated like any block (an actor id is one word, ...)."""
    try:
        return replace(block, **changes)
    except BlockError as exc:
        raise AgentError(str(exc)) from exc
