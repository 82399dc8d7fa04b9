"""What a block's Phase and a plan step's status mean, decided here once for the checks, the
stale rules, the digest and the mirror. A Phase's first word alone says whether the work is
over (SHIPPED_WORDS, CANCELLED_WORDS: terminal, never stale); otherwise the word blocked makes
it blocked, a word starting with review in review, and anything else in progress.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from ai_context.core.block.model import Block, PlanStep

Meaning = Literal["shipped", "cancelled", "blocked", "in_review", "in_progress"]
SHIPPED_WORDS = frozenset(
    {"done", "shipped", "complete", "completed", "merged", "released", "closed"}
)
CANCELLED_WORDS = frozenset({"cancelled", "canceled"})
TERMINAL_PHASES = SHIPPED_WORDS | CANCELLED_WORDS
FINISHED_STEPS = frozenset({"done", "skipped"})

_WORD_RE = re.compile(r"[a-z]+")
_REVIEW_RE = re.compile(r"\breview", re.IGNORECASE)
_BLOCKED_RE = re.compile(r"\bblocked\b", re.IGNORECASE)


def first_word(phase: str | None) -> str:
    words = _WORD_RE.findall((phase or "").lower())
    return words[0] if words else ""


def meaning(phase: str | None) -> Meaning:
    """What PHASE says about the task (an absent Phase is in progress: not finished)."""
    word = first_word(phase)
    if word in SHIPPED_WORDS:
        return "shipped"
    if word in CANCELLED_WORDS:
        return "cancelled"
    if _BLOCKED_RE.search(phase or ""):
        return "blocked"
    if mentions_review(phase):
        return "in_review"
    return "in_progress"


def mentions_review(phase: str | None) -> bool:
    """A word of PHASE starts with review (review, reviewing, in review, ...)."""
    return _REVIEW_RE.search(phase or "") is not None


def is_terminal(phase: str | None) -> bool:
    """The work is over (shipped or cancelled): nothing about the task can go stale."""
    return first_word(phase) in TERMINAL_PHASES


def is_shipped_phase(phase: str | None) -> bool:
    return meaning(phase) == "shipped"


def is_blocked_phase(phase: str | None) -> bool:
    return meaning(phase) == "blocked"


def is_review_phase(phase: str | None) -> bool:
    return meaning(phase) == "in_review"


def current_step(block: Block | None) -> PlanStep | None:
    """The step in progress; else the first one still open (pending, blocked or unmarked)."""
    if block is None:
        return None
    for step in block.plan:
        if step.status == "in progress":
            return step
    return next((s for s in block.plan if s.status not in FINISHED_STEPS), None)


def plan_progress(plan: Sequence[PlanStep]) -> str:
    """How far PLAN is, done told apart from skipped: "2/3 done, 1 skipped" (a skipped step is
    finished but nothing was delivered by it, so it never counts as done); "" without a plan."""
    if not plan:
        return ""
    done = sum(1 for step in plan if step.status == "done")
    skipped = sum(1 for step in plan if step.status == "skipped")
    return f"{done}/{len(plan)} done" + (f", {skipped} skipped" if skipped else "")
