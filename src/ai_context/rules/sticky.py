"""The one bot comment per issue and the labels that mirror its findings, as planned writes
(pure). The comment holds no times or ages, so a rerun over unchanged blocks plans no writes."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ai_context.core.findings import Finding
from ai_context.core.hidden import hide
from ai_context.core.markdown import escape_code_cell, strip_controls
from ai_context.core.models import Comment, Issue
from ai_context.rules.stale import CONFLICT_CODES, STALE_CODES

MARKER = "<!-- ai-context:findings -->"
MAX_COMMENT = 65_536
LABEL_INVALID = "ai-context:invalid"
LABEL_INCOMPLETE = "ai-context:incomplete"
LABEL_STALE = "ai-context:stale"
LABEL_CONFLICT = "ai-context:conflict"
# The labels we own, each with the findings that call for it. A plan adds and removes these
# (and only these) to match the findings; every other label is the humans'.
LABEL_RULES: dict[str, Callable[[Finding], bool]] = {
    LABEL_INVALID: lambda f: f.severity == "error" and not f.code.startswith("AIC6"),
    LABEL_INCOMPLETE: lambda f: f.code == "AIC201",
    LABEL_STALE: lambda f: f.code in STALE_CODES,
    LABEL_CONFLICT: lambda f: f.code in CONFLICT_CODES,
}
OWNED_LABELS = tuple(LABEL_RULES)
ICONS = {"error": "❌ error", "warning": "⚠️ warning", "info": "ℹ️ info"}


class Op(BaseModel):
    """One write to GitHub. `describe` is what a dry run prints."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: Literal["create_comment", "edit_comment", "delete_comment", "add_labels", "remove_label"]
    issue: int
    comment_id: int | None = None
    body: str | None = None
    labels: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.kind == "create_comment":
            return f"create comment on #{self.issue} ({len(self.body or '')} chars)"
        if self.kind == "edit_comment":
            return f"edit comment {self.comment_id} on #{self.issue} ({len(self.body or '')} chars)"
        if self.kind == "delete_comment":
            return f"delete duplicate comment {self.comment_id} on #{self.issue}"
        if self.kind == "add_labels":
            return f"add labels {', '.join(self.labels)} to #{self.issue}"
        return f"remove label {', '.join(self.labels)} from #{self.issue}"


def dry_run_text(op: Op, current: str | None = None) -> str:
    """What a dry run prints for OP: its description, then the comment's text (or its diff
    against CURRENT)."""
    head = f"[dry-run] would {op.describe()}"
    if op.body is None:
        return head
    return f"{head}\n{text_or_diff(op.body, current, f'comment {op.comment_id}')}"


def text_or_diff(body: str, current: str | None, where: str) -> str:
    """BODY line by line, or its diff against CURRENT (WHERE names both sides). Every line
    starts with `| `: a log line starting with `::` would be a workflow command."""
    lines = body.splitlines()
    if current is not None:
        import difflib  # noqa: PLC0415 - dry runs only

        before, after = f"{where} (now)", f"{where} (would be)"
        lines = list(difflib.unified_diff(current.splitlines(), lines, before, after, lineterm=""))
    return "\n".join(f"| {line}" for line in lines)


@dataclass
class WriteBudget:
    """The writes one run may make (`max-writes`); the rest are left to the next run, which
    plans them again. RESERVE keeps room for the run state and the digest comment."""

    limit: int
    used: int = 0
    reserve: int = 0
    left: int = 0  # writes planned but left for the next run
    left_tasks: int = 0

    @property
    def room(self) -> int:
        """Writes still allowed, the reserve kept."""
        return self.limit - self.used - self.reserve

    def allows(self, writes: int) -> bool:
        return writes <= self.room

    def spend(self, writes: int) -> None:
        self.used += writes

    def describe(self) -> str:
        """One line for the log and the step summary."""
        if not self.left:
            return f"{self.used} write(s), within max-writes {self.limit}."
        return (
            f"stopped at max-writes {self.limit}: {self.left} write(s) on {self.left_tasks} "
            "task(s) left for the next run, which continues where this one stopped (run the "
            "workflow again, or wait for the next schedule)."
        )


def render_findings(
    findings: Sequence[Finding],
    *,
    notes: Sequence[str] = (),
    state: Mapping[str, Any] | None = None,
) -> str:
    """The comment for an issue with findings (an all-clear line without). NOTES are Markdown
    lines our code wrote (the owner's mention); STATE is hidden for later runs. Findings quote
    outside text, so the body leaves without control characters (markdown.strip_controls)."""
    if not findings:
        return f"{MARKER}\n✅ **ai-context:** the AI Context block has no findings now."
    errors = sum(1 for f in findings if f.severity == "error")
    head = (
        f"{MARKER}\n### ai-context: {len(findings)} finding{'s' if len(findings) != 1 else ''}"
        f" on this task ({errors} error{'s' if errors != 1 else ''})\n\n"
        "| severity | line | code | finding | what to do |\n|---|---|---|---|---|\n"
    )
    tail = (
        "".join(f"\n{note}\n" for note in notes)
        + "\n<sub>Edited in place by ai-context whenever the block changes; the agent fixes the "
        "block, humans need not edit it.</sub>" + (f"\n{hide(state)}" if state else "")
    )
    rows = []
    for f in findings:
        message, hint = escape_code_cell(f.message), escape_code_cell(f.hint)
        rows.append(f"| {ICONS[f.severity]} | {f.line or ''} | `{f.code}` | {message} | {hint} |\n")
    return strip_controls(fit(head, rows, tail))


def fit(head: str, rows: Sequence[str], tail: str, limit: int = MAX_COMMENT) -> str:
    """Whole rows only, cut with a visible notice so a comment never exceeds GitHub's limit."""
    kept = bisect_right(list(accumulate(map(len, rows))), limit - len(head) - len(tail) - 200)
    cut = len(rows) - kept
    notice = f"\n**… {cut} more not shown (comment size limit).**\n" if cut else ""
    return head + "".join(rows[:kept]) + notice + tail


def sticky_comment(comments: Iterable[Comment], bot_login: str) -> Comment | None:
    """The one sticky comment (the oldest of ours, when a race left more)."""
    ours = stickies(comments, bot_login)
    return ours[0] if ours else None


def stickies(comments: Iterable[Comment], bot_login: str) -> list[Comment]:
    """Our sticky comments, oldest first: one, or more when a race left them."""
    login = bot_login.lower()
    ours = [c for c in comments if c.author.lower() == login and c.body.startswith(MARKER)]
    return sorted(ours, key=lambda c: (c.created_at, c.id))


def plan_comment(
    issue: int,
    findings: Sequence[Finding],
    comments: Iterable[Comment],
    bot_login: str,
    *,
    notes: Sequence[str] = (),
    state: Mapping[str, Any] | None = None,
) -> list[Op]:
    """Create, edit or leave the sticky comment; delete duplicates a race left behind."""
    ours = stickies(comments, bot_login)
    ops = [Op(kind="delete_comment", issue=issue, comment_id=c.id) for c in ours[1:]]
    wanted = render_findings(findings, notes=notes, state=state)
    if not ours and findings:
        ops.append(Op(kind="create_comment", issue=issue, body=wanted))
    elif ours and ours[0].body.strip() != wanted.strip():
        ops.append(Op(kind="edit_comment", issue=issue, comment_id=ours[0].id, body=wanted))
    return ops


def wanted_labels(findings: Sequence[Finding]) -> set[str]:
    return {label for label, wanted in LABEL_RULES.items() if any(map(wanted, findings))}


def plan_labels(issue: Issue, findings: Sequence[Finding]) -> list[Op]:
    """Add and remove only our labels, only where they differ from the findings."""
    have = {label for label in issue.labels if label in OWNED_LABELS}
    want = wanted_labels(findings)
    ops = []
    if want - have:
        ops.append(Op(kind="add_labels", issue=issue.number, labels=tuple(sorted(want - have))))
    ops.extend(
        Op(kind="remove_label", issue=issue.number, labels=(label,))
        for label in sorted(have - want)
    )
    return ops


def needs_comments(issue: Issue, findings: Sequence[Finding], *, thorough: bool = False) -> bool:
    """Whether the comments must be read: only when a sticky comment may exist or is due. A
    scan takes a clean task without our labels to have the all-clear line already (a read
    saved per clean task); a THOROUGH check (one issue, from its event) reads anyway."""
    if issue.comments == 0:
        return False
    return thorough or bool(findings) or any(label in OWNED_LABELS for label in issue.labels)
