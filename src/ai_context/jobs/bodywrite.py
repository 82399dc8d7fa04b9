"""Writing an issue body with nothing lost in silence: an agent's block, the run-state line.

GitHub's issue PATCH has no compare-and-swap: a writer re-reads right before its PATCH (after
the write spacing), then reads the edit history to see what its write replaced; an edit that
landed in between is put back by rules/overwrite.py's rules, each correction checked the same
way, a few times at most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ai_context.core.errors import ServiceError
from ai_context.core.models import BodyHistory, Issue
from ai_context.rules.overwrite import UNKNOWN, Region, judge, merge3, predecessor

if TYPE_CHECKING:
    from ai_context.adapters.github import GitHub

ATTEMPTS = 3  # corrective writes before giving up on a body that keeps changing


@dataclass(frozen=True, slots=True)
class Committed:
    """How a body write ended: LANDED (the writer's region is in the issue), OTHER (the copy kept
    instead of ours), PROBLEM (why it did not land), WRITES (the PATCHes made)."""

    issue: Issue
    writes: int
    landed: bool = True
    reapplied: bool = False
    other: str | None = None
    problem: str = ""
    notes: tuple[str, ...] = ()


def fresh_read(tracker: GitHub, number: int) -> Issue:
    """Issue NUMBER read as late as it can be before a write: after the write spacing."""
    tracker.pace_write()
    return tracker.get_issue(number)


def commit_body(
    tracker: GitHub, number: int, *, read: str, planned: str, region: Region
) -> Committed:
    """PATCH PLANNED (made from READ, the body re-read just now), then make sure no edit was
    overwritten by it, correcting the body when one was."""
    written = tracker.update_issue_body(number, planned)
    writes = 1
    restored: str | None = None
    reapplied = False
    for _ in range(ATTEMPTS):
        history = _history(tracker, number)
        if history is None or (lost := predecessor(history, written.body)) == UNKNOWN:
            return _unchecked(tracker, number, written, region, writes, history=history)
        verdict = judge(read=read, lost=lost, region=region)
        if verdict.kind == "clean":
            return _settled(
                history, written, region, writes, restored=restored, reapplied=reapplied
            )
        assert verdict.want is not None and verdict.lost is not None
        fresh = fresh_read(tracker, number)
        target = merge3(written.body, verdict.want, fresh.body)
        if target is None:
            return _lost(fresh, writes, verdict.lost, _UNMERGED)
        if verdict.kind == "restore":
            restored = verdict.lost
        else:
            reapplied = True
        read = fresh.body
        written = tracker.update_issue_body(number, target)
        writes += 1
    return _lost(
        written,
        writes,
        restored,
        f"the issue's body kept changing during {ATTEMPTS} checked writes",
    )


_UNMERGED = (
    "an edit of the issue landed while this write was on its way and cannot be merged with the "
    "issue as it is now; nothing more was written"
)
_REPLACED = "the issue's copy was replaced right after this write"


def _lost(issue: Issue, writes: int, other: str | None, problem: str) -> Committed:
    """A write that did not stay: OTHER is the copy kept instead, PROBLEM why."""
    return Committed(issue, writes, landed=False, other=other, problem=problem)


def _history(tracker: GitHub, number: int) -> BodyHistory | None:
    # Imported here: the agent commands load no HTTP client until they write.
    from ai_context.adapters.github_edits import read_history  # noqa: PLC0415

    try:
        return read_history(tracker, number)
    except ServiceError:
        return None


def _settled(
    history: BodyHistory,
    written: Issue,
    region: Region,
    writes: int,
    *,
    restored: str | None,
    reapplied: bool,
) -> Committed:
    """The last write replaced nothing; did ours stay, and was anything put back?"""
    if restored is not None:
        return _lost(
            written,
            writes,
            restored,
            "another edit of the same part of the issue landed while this write was on its way; "
            "it was put back, and this write was not kept",
        )
    if region.own(history.body) != region.own(written.body):
        return _lost(written, writes, history.body, _REPLACED)
    notes = ("an edit made while this write was on its way was re-applied on top of it",)
    return Committed(written, writes, reapplied=reapplied, notes=notes if reapplied else ())


def _unchecked(
    tracker: GitHub,
    number: int,
    written: Issue,
    region: Region,
    writes: int,
    *,
    history: BodyHistory | None = None,
) -> Committed:
    """No edit history to read: what a re-read can tell (ours replaced since) is checked."""
    now = history.body if history is not None else tracker.get_issue(number).body
    if region.own(now) != region.own(written.body):
        return _lost(written, writes, now, _REPLACED)
    note = (
        "the issue's edit history could not be read or did not show this write, so an edit "
        "made between the re-read and this write would not have been seen"
    )
    return Committed(written, writes, notes=(note,))
