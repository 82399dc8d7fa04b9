"""`save`: the agent's block into the issue, the local copy stored first as unpushed."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ai_context.adapters.cache import Cache
from ai_context.adapters.cache_entry import CacheEntry
from ai_context.adapters.github import GitHub
from ai_context.core.block.model import Block
from ai_context.core.errors import Exit, ServiceError
from ai_context.jobs.agent.model import AgentError, MirrorHook, Outcome
from ai_context.jobs.agent.write import Turn, Written, as_utc, with_changes, with_local, write_block
from ai_context.rules.checks import REQUIRED_DEFAULT
from ai_context.rules.reconcile import missing_labels


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
    turn: Turn, block: Block, previous: CacheEntry | None, *, force: bool
) -> Written:
    """Store the local copy as unpushed, then write. A failure of the input, or a refusal on a
    machine that never read the issue, puts the cache back: a later `resume` takes the issue's."""
    base = previous.base_revision if previous else None
    body = previous.body if previous else None
    turn.store(block, base=base, body=body)
    tracker, number = turn.tracker, turn.number
    try:
        written = write_block(
            tracker, number, block, writer=turn.actor, base=base, read_body=body, force=force
        )
    except Exception as exc:
        if _input_failure(exc):
            if previous is None:
                turn.cache.discard(tracker.repository, number)
            else:
                turn.cache.store(previous)
        raise
    if written.decision.conflict and previous is None:
        turn.cache.discard(tracker.repository, number)
    return written


def save(
    tracker: GitHub,
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
    """Write BLOCK (stamped NOW) into the issue: 3 GitHub calls with a cached body, 4 without,
    dry-run 1. The local copy is stored first, as unpushed, so the next resume pushes it if the
    PATCH never happens."""
    now = as_utc(now)
    block = with_changes(block, last_updated=now)
    turn = Turn("save", tracker, cache, number, writer or block.actor, now)
    missing = missing_labels(block, required)
    if missing:
        return turn.outcome(
            status="incomplete", state=block, missing=tuple(missing), dry_run=dry_run
        )
    entry = cache.load(tracker.repository, number)
    force = take == "local"
    if dry_run:  # a dry run diffs against the issue now, and writes nothing
        base = entry.base_revision if entry else None
        written = write_block(
            tracker, number, block, writer=turn.actor, base=base, dry_run=True, force=force
        )
    else:
        written = _write_or_roll_back(turn, block, entry, force=force)
    if written.decision.conflict:
        hint = (
            "your block is kept in the local cache as unpushed; `ai-context save "
            f"{number} --take local` (or `resume {number} --take local`) pushes it over the "
            f"issue's, `resume {number} --take remote` drops it",
        )
        kept = hint if entry is not None and not dry_run else ()
        decision = with_local(written.decision, block)
        return turn.conflict(decision, written.issue, kept, dry_run=dry_run)
    if dry_run:
        same = () if written.changed else ("the issue already has this block",)
        return turn.outcome(state=block, dry_run=True, diff=written.diff, notes=same)
    notes, log = turn.landed(block, written, mirror)
    if not written.changed:
        notes = (*notes, "the issue already had this block; nothing was written")
    return turn.outcome(
        written.issue,
        state=block,
        wrote_remote=written.changed,
        wrote_local=True,
        reapplied=written.reapplied,
        notes=notes,
        conflict_log=log,
    )
