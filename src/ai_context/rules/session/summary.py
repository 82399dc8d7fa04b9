"""Summaries: the save report, and WF2 load (age, counts, next task, git drift)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

from ai_context.core.durations import format_duration
from ai_context.rules.scrub import describe_counts
from ai_context.rules.session.model import SessionFile, Task
from ai_context.rules.session.saving import SaveResult


class Counts(BaseModel):
    model_config = ConfigDict(frozen=True)

    pending: int
    in_progress: int
    done: int  # original tasks, consolidated ones counted as what they stand for
    done_individual: int
    consolidated_groups: int
    consolidated_from: int
    priorities: dict[str, int]  # of open tasks


def counts(session: SessionFile) -> Counts:
    tasks = session.tasks
    groups = [t for t in tasks if t.status == "completed" and t.consolidated]
    priorities = Counter(t.priority for t in tasks if t.is_open and t.priority)
    return Counts(
        pending=sum(1 for t in tasks if t.status == "pending"),
        in_progress=sum(1 for t in tasks if t.status == "in_progress"),
        done=sum(t.weight for t in tasks if t.status == "completed"),
        done_individual=sum(1 for t in tasks if t.status == "completed" and not t.consolidated),
        consolidated_groups=len(groups),
        consolidated_from=sum(t.weight for t in groups),
        priorities=dict(sorted(priorities.items())),
    )


def next_task(session: SessionFile) -> Task | None:
    """Seeds/004's Next: the first pending or in-progress task, in saved order."""
    return next((t for t in session.tasks if t.is_open), None)


def _short(sha: str | None) -> str:
    return (sha or "")[:7]


def _done_detail(c: Counts) -> str:
    if not c.consolidated_groups:
        return ""
    groups = f"{c.consolidated_groups} consolidated from {c.consolidated_from}"
    return f" ({c.done_individual} individual, {groups})"


def _next_line(session: SessionFile) -> str:
    task = next_task(session)
    return f"Next: {task.id} - {task.title}" if task else "Next: nothing open"


def render_save(path: str, result: SaveResult) -> str:
    """The seed's save report."""
    session = result.session
    c = counts(session)
    open_part = f"{c.pending} pend" + (f", {c.in_progress} prog" if c.in_progress else "")
    prio = ", ".join(f"{n} {p}" for p, n in c.priorities.items())
    lines = [f"Saved → {path}"]
    lines.append(f"- {open_part}" + (f" ({prio})" if prio else ""))
    lines.append(f"- {c.done} done{_done_detail(c)}")
    for decision in result.consolidation.decisions:
        moved = len(decision.folded) + len(decision.forced)
        if moved:
            why = ", ".join(
                name
                for name, met in (
                    ("same area", decision.same_area),
                    (">5 related", decision.many_related),
                    ("no critical findings", decision.no_critical),
                    (">3 days quiet", decision.quiet),
                )
                if met
            )
            extra = f"; {len(decision.forced)} to keep ≤5 individual" if decision.forced else ""
            lines.append(
                f"- Consolidated {moved} into {decision.into} "
                f"'{decision.area or 'Earlier completed work'}' ({why}{extra})"
            )
    if result.consolidation.over_limit:
        reasons = result.consolidation.kept
        listed = ", ".join(f"{i} {reasons[i]}" for i in result.consolidation.over_limit)
        lines.append(f"- Note: more than 5 individual done kept, none may be merged: {listed}")
    if session.metadata.git_branch or session.metadata.git_commit:
        branch = session.metadata.git_branch or "(detached)"
        lines.append(f"- Git: {branch} @ {_short(session.metadata.git_commit)}")
    if result.scrubbed:
        lines.append(f"- Scrubbed: {describe_counts(Counter(result.scrubbed))}")
    lines.append(_next_line(session))
    return "\n".join(lines)


class GitState(BaseModel):
    """What the checkout says now, gathered by the shell (gitrepo.py)."""

    model_config = ConfigDict(frozen=True)

    branch: str | None
    head: str | None
    ahead: int | None = None  # commits HEAD has beyond the saved commit; None if unknown
    saved_known: bool = True  # whether the saved commit exists in this clone
    descends: bool = True  # whether HEAD descends from the saved commit


class LoadSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    age: timedelta
    first_saved: timedelta
    counts: Counts
    next_task: Task | None
    git_line: str | None
    warnings: tuple[str, ...]
    context_titles: tuple[str, ...]


def _age(delta: timedelta) -> str:
    seconds = max(0, int(delta.total_seconds()))
    if seconds >= 86400:
        return f"{seconds // 86400}d"
    if seconds >= 3600:
        return f"{seconds // 3600}h"
    return f"{seconds // 60}m"


def summarize(session: SessionFile, *, now: datetime, git: GitState | None) -> LoadSummary:
    """WF2: age, counts, next task, git drift warnings. The age counts from `updated` (the last
    save), not the seed's `created`: with merging, that is the first save ever."""
    meta = session.metadata
    warnings: list[str] = []
    git_line: str | None = None
    if meta.git_commit or meta.git_branch:
        saved = f"{meta.git_branch or '(detached)'} @ {_short(meta.git_commit)}"
        drift = ""
        if git is not None:
            if meta.git_commit and git.head and git.head != meta.git_commit:
                if not git.saved_known:
                    drift = " (saved commit not in this clone)"
                    warnings.append("Git state changed: the saved commit is not in this clone")
                elif not git.descends:
                    drift = " (history rewritten since the save)"
                    warnings.append("Git state changed: HEAD does not descend from the save")
                else:
                    ahead = git.ahead or 0
                    drift = f" ({ahead} commit{'s' if ahead != 1 else ''} ahead)"
                    warnings.append("Git state changed")
            if meta.git_branch and git.branch != meta.git_branch:
                warnings.append(f"Branch: {meta.git_branch} → {git.branch or '(detached)'}")
        git_line = saved + drift
    if now - meta.updated < -timedelta(minutes=5):
        warnings.append(
            f"saved {format_duration(meta.updated - now)} in the future: check the clock"
        )
    return LoadSummary(
        age=now - meta.updated,
        first_saved=now - meta.created,
        counts=counts(session),
        next_task=next_task(session),
        git_line=git_line,
        warnings=tuple(warnings),
        context_titles=tuple(b.title for b in session.context_blocks),
    )


def render_load(path: str, session: SessionFile, summary: LoadSummary) -> str:
    """The seed's load report."""
    c = summary.counts
    age = _age(summary.age)
    first = _age(summary.first_saved)
    head = f"Loaded {path} ({age} old" + (f", first saved {first} ago" if first != age else "")
    lines = [head + ")"]
    lines.append(f"- {c.pending} pend, {c.in_progress} prog, {c.done} done{_done_detail(c)}")
    if summary.git_line:
        lines.append(f"- Git: {summary.git_line}")
    lines.extend(f"- Warning: {w}" for w in summary.warnings)
    if summary.context_titles:
        lines.append("- Context: " + "; ".join(summary.context_titles))
    lines.append(_next_line(session))
    return "\n".join(lines)
