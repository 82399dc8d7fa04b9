"""`save`: the agent's block into the issue, the local copy stored first as unpushed."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ai_context.adapters.cache import Cache
from ai_context.adapters.cache_entry import CacheEntry
from ai_context.core.block.model import Block
from ai_context.core.errors import Exit, ServiceError
from ai_context.jobs.agent.model import AgentError, MirrorHook, Outcome, Tracker
from ai_context.jobs.agent.write import (
    Written,
    as_utc,
    conflict_outcome,
    log_conflict,
    settle,
    store_copy,
    with_changes,
    with_local,
    write_block,
)
from ai_context.rules.checks import REQUIRED_DEFAULT
from ai_context.rules.reconcile import (
    missing_labels,
)


def _input_failure(exc: Exception) -> bool:
    """A failure of the save's input (no such issue, a body over the limit, a refusal), as
    opposed to an outage (timeouts, 429, 5xx) after which the unpushed copy is worth keeping."""
    if isinstance(exc, AgentError):
        return True
    if not isinstance(exc, ServiceError):
        return False
    status = exc.status
    return exc.exit_code == Exit.USAGE or (
        status is not None and 400 <= status < 500 and status not in (403, 429)
    )


def _write_or_roll_back(
    tracker: Tracker,
    cache: Cache,
    number: int,
    block: Block,
    *,
    previous: CacheEntry | None,
    writer: str | None,
    now: datetime,
    force: bool,
) -> Written:
    """Store the local copy as unpushed, then write. If the write fails on its input, the
    cache goes back to what it held before: a later bare `resume` must not trip on it. So it
    does when the guard refuses a machine that never read the issue: its `resume` must take
    the issue's copy (the refused block is in the conflict log and the command's output)."""
    base = previous.base_revision if previous else None
    body = previous.body if previous else None
    store_copy(cache, tracker, number, block, base=base, actor=writer, body=body, now=now)
    try:
        written = write_block(
            tracker, number, block, writer=writer, base=base, read_body=body, force=force
        )
    except Exception as exc:
        if _input_failure(exc):
            _restore(cache, tracker.repository, number, previous)
        raise
    if written.decision.conflict and previous is None:
        _restore(cache, tracker.repository, number, previous)
    return written


def _restore(cache: Cache, repository: str, number: int, previous: CacheEntry | None) -> None:
    if previous is None:
        cache.discard(repository, number)
    else:
        cache.store(previous)


def _incomplete(
    tracker: Tracker, number: int, block: Block, missing: list[str], dry: bool
) -> Outcome:
    return Outcome(
        command="save",
        repository=tracker.repository,
        issue=number,
        status="incomplete",
        state=block,
        missing=tuple(missing),
        dry_run=dry,
    )


def save(
    tracker: Tracker,
    cache: Cache,
    number: int,
    block: Block,
    *,
    writer: str | None,
    now: datetime,
    dry_run: bool = False,
    take: Literal["local"] | None = None,
    required: tuple[str, ...] = REQUIRED_DEFAULT,
    mirror: MirrorHook | None = None,
) -> Outcome:
    """Write BLOCK (stamped NOW) into the issue: 3 GitHub calls when the cache holds the body
    as last read (re-read, PATCH, the edit history that says whether the PATCH overwrote an
    edit), 4 without (a read first); dry-run 1 (read).

    The local copy is stored first, as unpushed: if the PATCH never happens (GitHub down, a
    crash, a conflict), the next resume finds it and pushes it or asks. A failure of the input
    itself (no such issue, a body over GitHub's limit) leaves the cache as it was. The write
    guard (reconcile.may_write) decides whether the issue's block may be replaced: a block this
    machine never read, one that moved on since it last read it (the same actor on another
    machine too), or another actor's, is a conflict, unless TAKE is "local": then it is
    replaced and logged."""
    now = as_utc(now)
    block = with_changes(block, last_updated=now)
    writer = writer or block.actor
    missing = missing_labels(block, required)
    if missing:
        return _incomplete(tracker, number, block, missing, dry_run)
    entry = cache.load(tracker.repository, number)
    if dry_run:  # a dry run diffs against the issue now, and writes nothing
        written = write_block(
            tracker,
            number,
            block,
            writer=writer,
            base=entry.base_revision if entry else None,
            dry_run=True,
            force=take == "local",
        )
    else:
        written = _write_or_roll_back(
            tracker,
            cache,
            number,
            block,
            previous=entry,
            writer=writer,
            now=now,
            force=take == "local",
        )
    if written.decision.conflict:
        kept = entry is not None and not dry_run
        hint = (
            "your block is kept in the local cache as unpushed; `ai-context save "
            f"{number} --take local` (or `resume {number} --take local`) pushes it over the "
            f"issue's, `resume {number} --take remote` drops it",
        )
        return conflict_outcome(
            "save",
            tracker,
            cache,
            number,
            with_local(written.decision, block),
            actor=writer,
            now=now,
            issue=written.issue,
            notes=hint if kept else (),
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
    return _saved(tracker, cache, number, block, written, writer=writer, now=now, mirror=mirror)


def _saved(
    tracker: Tracker,
    cache: Cache,
    number: int,
    block: Block,
    written: Written,
    *,
    writer: str | None,
    now: datetime,
    mirror: MirrorHook | None,
) -> Outcome:
    """The outcome of a save that landed (or found the issue already holding the block)."""
    issue = written.issue
    assert issue is not None  # a write that is not a conflict has read or written the issue
    notes = list(
        settle(cache, tracker, number, block, written, writer=writer, now=now, mirror=mirror)
    )
    log = None
    if written.overridden is not None:
        overridden = with_local(written.overridden, block)
        log = log_conflict(
            cache, tracker, "save", number, overridden, actor=writer, now=now, choice="local"
        )
        notes.append(
            "--take local: the issue's block was replaced by this copy; both are in the "
            "conflict log"
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
        conflict_log=log,
    )
