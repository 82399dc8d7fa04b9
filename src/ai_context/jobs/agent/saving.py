"""`save`: the agent's block into the issue, the local copy stored first as unpushed."""

from __future__ import annotations

from datetime import datetime

from ai_context.adapters.cache import Cache
from ai_context.core.block import Block
from ai_context.jobs.agent.model import MirrorHook, Outcome, Tracker
from ai_context.jobs.agent.write import (
    as_utc,
    conflict_outcome,
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
    now = as_utc(now)
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
        store_copy(
            cache, tracker, number, block, base=base, actor=writer, body=cached_body, now=now
        )
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
        return conflict_outcome(
            "save",
            tracker,
            cache,
            number,
            with_local(written.decision, block),
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
        settle(cache, tracker, number, block, written, writer=writer, now=now, mirror=mirror)
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
