"""Was an edit overwritten by our body write, and how to put it back (pure).

GitHub's issue PATCH replaces the whole body without a precondition; the issue's edit history
shows afterwards the revision our PATCH replaced. When that is not the body we read, the LOST
edit is put back by a line-level three-way merge (difflib): re-applied when it left our region
alone, restored (our write not landed) when it changed it; changes to the same lines of the
base are a conflict unless both made the same change.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ai_context.core.models import BodyHistory

UNKNOWN: Literal["unknown"] = "unknown"


def normal(text: str) -> str:
    """TEXT with CRLF as LF: GitHub may store and give back either."""
    return text.replace("\r\n", "\n")


def predecessor(history: BodyHistory, written: str) -> str | Literal["unknown"] | None:
    """The revision just before our write WRITTEN in HISTORY (newest first): the body our
    PATCH replaced. None when ours is the first revision recorded; UNKNOWN when ours is not
    among the revisions read, or the one before it was deleted from the history."""
    ours = normal(written)
    for index, text in enumerate(history.edits):
        if text is not None and normal(text) == ours:
            if index + 1 < len(history.edits):
                before = history.edits[index + 1]
                return UNKNOWN if before is None else before
            return None if history.complete else UNKNOWN
    return UNKNOWN


@dataclass(frozen=True, slots=True)
class Region:
    """The part of a body one writer owns: OWN gives its text in a body (None: not there),
    PUT a body with the writer's text in place and every other byte kept."""

    own: Callable[[str], str | None]
    put: Callable[[str], str]


Kind = Literal["clean", "reapply", "restore"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the write overwrote: nothing (clean), an edit outside our region to re-apply, or
    an edit of our region to restore. WANT is the body that puts the lost edit back."""

    kind: Kind
    lost: str | None = None
    want: str | None = None


def judge(*, read: str, lost: str | None, region: Region) -> Verdict:
    """READ is the body our write was planned on, LOST the revision our PATCH replaced."""
    if lost is None or normal(lost) == normal(read):
        return Verdict("clean")
    if region.own(lost) == region.own(read):
        return Verdict("reapply", lost, region.put(lost))
    return Verdict("restore", lost, lost)


Hunk = tuple[int, int, list[str]]


def _hunks(base: Sequence[str], other: Sequence[str]) -> list[Hunk]:
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [
        (i1, i2, list(other[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _clash(a: Hunk, b: Hunk) -> bool:
    return a[0] == b[0] or (a[0] < b[1] and b[0] < a[1])


def merge3(base: str, mine: str, theirs: str) -> str | None:
    """MINE and THEIRS, both made from BASE, as one text; None when they change the same lines."""
    if theirs in (mine, base):
        return mine
    if mine == base:
        return theirs
    lines = base.splitlines(keepends=True)
    hunks = _hunks(lines, mine.splitlines(keepends=True))
    for hunk in _hunks(lines, theirs.splitlines(keepends=True)):
        if hunk in hunks:
            continue
        if any(_clash(hunk, other) for other in hunks):
            return None
        hunks.append(hunk)
    out: list[str] = []
    at = 0
    for start, end, replacement in sorted(hunks, key=lambda h: (h[0], h[1])):
        out += lines[at:start] + replacement
        at = end
    return "".join(out + lines[at:])
