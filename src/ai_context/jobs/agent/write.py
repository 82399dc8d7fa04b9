"""Writing a block into an issue body, and settling what landed (cache, mirror, conflict log)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ai_context.adapters.cache import Cache
from ai_context.adapters.cache_entry import CacheEntry
from ai_context.adapters.github import GitHub
from ai_context.core.block.model import Block, BlockError, format_timestamp
from ai_context.core.block.parse import parse
from ai_context.core.block.render import render, replace_block
from ai_context.core.fields import utc
from ai_context.core.models import Issue
from ai_context.jobs.agent.model import BODY_LIMIT, AgentError, Command, MirrorHook, Outcome, Take
from ai_context.jobs.bodywrite import Committed, commit_body, fresh_read
from ai_context.rules.overwrite import Region
from ai_context.rules.reconcile import Decision, body_diff, conflict_diff, may_write, revision

TAKEN_LOCAL = (
    "--take local: the issue's block was replaced by this copy; both are in the conflict log"
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
    tracker: GitHub,
    number: int,
    block: Block,
    *,
    writer: str | None,
    base: str | None,
    read_body: str | None = None,
    dry_run: bool = False,
    force: bool = False,
) -> Written:
    """Put BLOCK into the issue body, keeping every byte outside it. The write guard is asked on
    READ_BODY (else a GET) and again on the re-read before the PATCH; a refusal writes nothing
    unless FORCE (--take local), and then comes back as `overridden`."""
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


def as_utc(now: datetime) -> datetime:
    """NOW in UTC to the second, as a block's Last updated holds it."""
    return utc(now).replace(microsecond=0)


def with_local(decision: Decision, block: Block) -> Decision:
    return replace(decision, local=block, local_revision=revision(block))


def with_changes(block: Block, **changes: Any) -> Block:
    """BLOCK with CHANGES, validated like any block (an actor id is one word, ...)."""
    try:
        return replace(block, **changes)
    except BlockError as exc:
        raise AgentError(str(exc)) from exc


@dataclass(frozen=True, slots=True)
class Turn:
    """One command on one issue, by ACTOR at NOW: what its outcomes, cache writes and conflict
    log share."""

    command: Command
    tracker: GitHub
    cache: Cache
    number: int
    actor: str | None
    now: datetime

    def outcome(self, read: Issue | None = None, **fields: Any) -> Outcome:
        """The command's Outcome on this issue (its title and link from READ, when read)."""
        return Outcome(
            command=self.command,
            repository=self.tracker.repository,
            issue=self.number,
            title=read.title if read else "",
            html_url=read.html_url if read else "",
            **fields,
        )

    def store(self, block: Block, *, base: str | None, body: str | None) -> None:
        """BLOCK as this machine's copy, made from the issue's revision BASE (body BODY)."""
        entry = CacheEntry(
            repository=self.tracker.repository,
            issue=self.number,
            actor=self.actor,
            block=block,
            text=render(block),
            last_updated=format_timestamp(block.last_updated) or None,
            revision=revision(block),
            base_revision=base,
            body=body,
            saved_at=self.now,
        )
        self.cache.store(entry)

    def log(self, decision: Decision, choice: Take | None = None) -> str:
        """Seeds/000 step 4: every conflict is logged, with both copies, for later analysis."""
        local, remote = decision.local, decision.remote
        record = {
            "at": format_timestamp(self.now),
            "command": self.command,
            "repository": self.tracker.repository,
            "issue": self.number,
            "actor": self.actor,
            "choice": choice,
            "reasons": list(decision.reasons),
            "local_revision": decision.local_revision,
            "remote_revision": decision.remote_revision,
            "base_revision": decision.base_revision,
            "local": render(local) if local is not None else None,
            "remote": render(remote) if remote is not None else None,
        }
        return str(self.cache.log_conflict(record))

    def conflict(
        self,
        decision: Decision,
        read: Issue | None = None,
        notes: tuple[str, ...] = (),
        *,
        dry_run: bool = False,
    ) -> Outcome:
        """Both copies and their diff, logged (a dry run writes nothing, the log included)."""
        return self.outcome(
            read,
            status="conflict",
            decision=decision,
            diff=conflict_diff(decision.local, decision.remote, issue=self.number),
            notes=(decision.remedy, *notes) if decision.remedy else notes,
            conflict_log=None if dry_run else self.log(decision),
        )

    def landed(
        self, block: Block, written: Written, mirror: MirrorHook | None, *, logged: bool = False
    ) -> tuple[tuple[str, ...], str | None]:
        """After a write that landed: the cache matches the issue, the mirror follows, and a
        write made over the guard's refusal (--take local) is logged unless LOGGED already;
        its notes and log."""
        assert written.issue is not None
        self.store(block, base=revision(block), body=written.issue.body)
        if mirror is not None and written.changed:
            mirror(written.issue, block)
        notes = written.notes
        if written.reapplied and not notes:
            notes = ("the issue body changed since the read; the block was re-applied on it",)
        if written.overridden is None or logged:
            return notes, None
        log = self.log(with_local(written.overridden, block), "local")
        return (*notes, TAKEN_LOCAL), log
