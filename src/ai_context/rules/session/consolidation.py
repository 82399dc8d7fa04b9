"""The consolidation matrix (seeds/004): which completed tasks fold into one per area.

Never folded: a critical bug (BUGFIX, P1), a task with a pitfall or lesson no other repeats, one
completed under 3 days ago, one open work references. An area (a task's `area`; tasks without
one form one group) folds its other completed tasks into one when three of four hold: the area
is named, more than 5 completed, none kept as critical, 3 days since its last completion. Then
at most 5 individual completed tasks stay: the oldest foldable ones beyond go to their area's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ai_context.rules.session.model import TASK_MENTION_RE, ContextBlock, Task, task_number


class ConsolidationRules(BaseModel):
    model_config = ConfigDict(frozen=True)

    consolidate_at: int = 3  # criteria met, of 4
    keep_individual: int = 5  # completed tasks kept one by one
    recent: timedelta = timedelta(days=3)
    many_related: int = 5  # "more than 5 related completed tasks"


KeepReason = Literal["critical bug", "unique pitfall", "recent", "referenced by open work"]
_NOTE_RE = re.compile(r"(?i)\b(?:pitfall|lesson|gotcha)s?[ \t]*:[ \t]*([^.;\n]{1,300})")
_SEE_RE = re.compile(r"(?i)\b(?:see|plan)[ \t]*:[ \t]*([^\s,;]{1,200})")


def notes(context: str) -> list[str]:
    """The pitfall / lesson notes of a task's context, normalised."""
    return [" ".join(m.group(1).lower().split()) for m in _NOTE_RE.finditer(context)]


class AreaDecision(BaseModel):
    """How the matrix judged one area's completed tasks, for the report and the tests."""

    model_config = ConfigDict(frozen=True)

    area: str | None
    members: tuple[str, ...]
    same_area: bool
    many_related: bool
    no_critical: bool
    quiet: bool
    folded: tuple[str, ...] = ()  # ids consolidated by the matrix
    forced: tuple[str, ...] = ()  # ids consolidated to respect the limit of individual tasks
    into: str | None = None

    @property
    def met(self) -> int:
        return sum((self.same_area, self.many_related, self.no_critical, self.quiet))


class Consolidation(BaseModel):
    model_config = ConfigDict(frozen=True)

    tasks: tuple[Task, ...]
    context_blocks: tuple[ContextBlock, ...]
    decisions: tuple[AreaDecision, ...]
    kept: dict[str, KeepReason]  # completed task id -> why it must stay individual
    over_limit: tuple[str, ...]  # individual completed tasks beyond the limit, kept anyway


def _referenced(tasks: Sequence[Task], blocks: Sequence[ContextBlock]) -> set[int]:
    """Numbers of the tasks open work mentions (in its title or context, or beside it)."""
    open_ids = {t.id for t in tasks if t.is_open}
    referenced: set[int] = set()
    for task in tasks:
        if task.is_open:
            text = f"{task.title} {task.context}"
            referenced.update(int(m.group(1)) for m in TASK_MENTION_RE.finditer(text))
    for block in blocks:
        if open_ids & set(block.related_tasks):
            referenced.update(task_number(i) for i in block.related_tasks)
    return referenced


def keep_reasons(
    tasks: Sequence[Task], blocks: Sequence[ContextBlock], now: datetime, rules: ConsolidationRules
) -> dict[str, KeepReason]:
    """Completed tasks that must never be consolidated, with the first reason that applies."""
    note_owners: dict[str, set[str]] = {}
    for task in tasks:
        for note in notes(task.context):
            note_owners.setdefault(note, set()).add(task.id)
    referenced = _referenced(tasks, blocks)
    reasons: dict[str, KeepReason] = {}
    for task in tasks:
        if task.status != "completed" or task.consolidated:
            continue
        if task.category == "BUGFIX" and task.priority == "P1":
            reasons[task.id] = "critical bug"
        elif any(note_owners[n] == {task.id} for n in notes(task.context)):
            reasons[task.id] = "unique pitfall"
        elif now - task.finished < rules.recent:
            reasons[task.id] = "recent"
        elif task.number in referenced:
            reasons[task.id] = "referenced by open work"
    return reasons


def _area_key(area: str | None) -> str:
    return (area or "").strip().lower()


def _fold(members: Sequence[Task], into: Task | None, area: str | None) -> Task:
    """One consolidated task standing for `members` (and what `into` already stood for)."""
    everything = [*([into] if into else []), *members]
    ranks = [t.priority for t in everything if t.priority]
    categories = {t.category for t in everything}
    titles = [t.title for t in sorted(members, key=lambda t: t.finished)]
    shown = "; ".join(titles[:8]) + (f"; +{len(titles) - 8} more" if len(titles) > 8 else "")
    summary = f"Summary: {shown}."
    pitfalls = list(
        dict.fromkeys(m.group(0).strip() for t in members for m in _NOTE_RE.finditer(t.context))
    )
    refs = list(dict.fromkeys(m.group(1) for t in members for m in _SEE_RE.finditer(t.context)))
    parts = [summary, *(p + "." for p in pitfalls[:5])]
    if refs:
        parts.append("See: " + ", ".join(refs[:5]))
    context = " ".join(parts)
    if into is not None and into.context:
        context = f"{into.context} | {context}"
    if len(context) > 1500:
        context = context[:1499] + "…"
    files = list(dict.fromkeys(f for t in everything for f in t.files))[:20]
    base = into or min(members, key=lambda t: t.number)
    return Task(
        id=base.id,
        title=(into.title if into else None) or area or "Earlier completed work",
        status="completed",
        priority=min(ranks) if ranks else None,
        category=next(iter(categories)) if len(categories) == 1 else None,
        created=min(t.created for t in everything),
        completed=max(t.finished for t in everything),
        consolidated=True,
        consolidated_count=sum(t.weight for t in everything),
        context=context,
        files=tuple(files),
        area=area,
    )


def _force_limit(
    remaining: Sequence[Task],
    kept: dict[str, KeepReason],
    *,
    folding: dict[str, list[Task]],
    decisions: dict[str, AreaDecision],
    existing_groups: dict[str, Task],
    rules: ConsolidationRules,
) -> tuple[str, ...]:
    """Fold the oldest movable tasks beyond the limit of individual ones (updating `folding`
    and `decisions`); returns the kept tasks still over the limit, which the report names."""
    if len(remaining) <= rules.keep_individual:
        return ()
    excess = len(remaining) - rules.keep_individual
    movable = sorted((t for t in remaining if t.id not in kept), key=lambda t: t.finished)
    per_area = Counter(_area_key(t.area) for t in movable[:excess])
    for task in movable[:excess]:
        key = _area_key(task.area)
        if per_area[key] == 1 and key not in folding and key not in existing_groups:
            key = ""  # a lone task is not a group of its own: it joins the catch-all
        folding.setdefault(key, []).append(task)
        decision = decisions.get(key) or AreaDecision(
            area=None, members=(), same_area=False, many_related=False, no_critical=True, quiet=True
        )
        decisions[key] = decision.model_copy(update={"forced": (*decision.forced, task.id)})
    still = len(remaining) - min(excess, len(movable))
    if still > rules.keep_individual:
        return tuple(t.id for t in remaining if t.id in kept)
    return ()


def _substitute(tasks: Sequence[Task], replaced: dict[str, Task]) -> list[Task]:
    """The tasks in file order, each folded one replaced by its group (emitted once)."""
    out: dict[str, Task] = {}
    for task in tasks:
        target = replaced.get(task.id, task)
        out.setdefault(target.id, target)
    return list(out.values())


def consolidate(
    tasks: Sequence[Task],
    blocks: Sequence[ContextBlock],
    *,
    now: datetime,
    rules: ConsolidationRules | None = None,
) -> Consolidation:
    """Apply the consolidation matrix and the limit of individual completed tasks."""
    rules = rules or ConsolidationRules()
    kept = keep_reasons(tasks, blocks, now, rules)
    individual = [t for t in tasks if t.status == "completed" and not t.consolidated]
    existing_groups = {
        _area_key(t.area): t for t in tasks if t.status == "completed" and t.consolidated
    }
    areas: dict[str, list[Task]] = {}
    for task in individual:
        areas.setdefault(_area_key(task.area), []).append(task)
    folding: dict[str, list[Task]] = {}
    decisions: dict[str, AreaDecision] = {}
    for key, members in areas.items():
        candidates = [t for t in members if t.id not in kept]
        decision = AreaDecision(
            area=members[0].area if key else None,
            members=tuple(t.id for t in members),
            same_area=bool(key),
            many_related=len(members) > rules.many_related,
            no_critical=not any(
                kept.get(t.id) in ("critical bug", "unique pitfall") for t in members
            ),
            quiet=now - max(t.finished for t in members) > rules.recent,
        )
        enough = len(candidates) >= 2 or (candidates and key in existing_groups)
        if decision.met >= rules.consolidate_at and enough:
            folding[key] = candidates
            decision = decision.model_copy(update={"folded": tuple(t.id for t in candidates)})
        decisions[key] = decision
    folded_ids = {t.id for group in folding.values() for t in group}
    remaining = [t for t in individual if t.id not in folded_ids]
    over_limit = _force_limit(
        remaining,
        kept,
        folding=folding,
        decisions=decisions,
        existing_groups=existing_groups,
        rules=rules,
    )
    replaced: dict[str, Task] = {}  # member id -> consolidated task
    for key, members in folding.items():
        into = existing_groups.get(key)
        group = _fold(members, into, decisions[key].area if key else None)
        decisions[key] = decisions[key].model_copy(update={"into": group.id})
        for member in members:
            replaced[member.id] = group
        if into is not None:
            replaced[into.id] = group
    out = _substitute(tasks, replaced)
    remap = {member: group.id for member, group in replaced.items()}
    new_blocks = tuple(
        b.model_copy(
            update={"related_tasks": tuple(dict.fromkeys(remap.get(i, i) for i in b.related_tasks))}
        )
        for b in blocks
    )
    return Consolidation(
        tasks=tuple(out),
        context_blocks=new_blocks,
        decisions=tuple(decisions.values()),
        kept=kept,
        over_limit=over_limit,
    )


def ordered(tasks: Iterable[Task]) -> list[Task]:
    """Open tasks (pending and in progress) in the order the agent gave them (their numbers),
    then completed ones (newest first), groups last: seeds/004's "Next: first pend/prog" is
    the first open task of the file, as its example's TASK_001."""

    def key(task: Task) -> tuple[Any, ...]:
        if task.is_open:
            return (0, 0, task.number)
        stamp = -task.finished.timestamp()
        return (2 if task.consolidated else 1, stamp, task.number)

    return sorted(tasks, key=key)
