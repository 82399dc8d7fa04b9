"""Session files (`sp.json`, docs/seeds/004 WF1 save and WF2 load), pure.

A session file lets the next agent session pick up unfinished work: every open task, the last
few completed ones, older completed work folded into consolidated tasks, and context blocks
(decisions, pitfalls, plan references). Format v2.0, minified single-line JSON, UTC `Z` times.

Saving (WF1): when the agent loaded the file this session its list is complete and the file
is overwritten; otherwise the file is read and merged (a task matched by id, or by title when
the agent has no id, takes the agent's version; nothing in the file is dropped). Then the
consolidation matrix runs and everything written is scrubbed (scrub.py).

Consolidation, per feature/area (a task's optional `area`; tasks without one form one group):
  never consolidated ("keep individual"): a critical bug (category BUGFIX with priority P1), a
  task with a unique pitfall or lesson (a `Pitfall:`, `Lesson:` or `Gotcha:` note that no
  other task repeats), one completed less than 3 days ago, one referenced by open work (its id
  in an open task's title or context, or beside an open task in a context block's
  related_tasks);
  the four criteria, judged over all completed tasks of the area: same feature/area (the area
  is named), more than 5 completed tasks, no critical finding to preserve (no task of the area
  kept for being a critical bug or for a unique pitfall), more than 3 days since the area's
  last completion. Three or more met: the area's other completed tasks fold into one
  consolidated task (into the area's existing one if there is one);
  then at most 5 individual completed tasks stay: beyond that the oldest that may be
  consolidated are folded into their area's task whatever the matrix says; tasks that must
  stay individual are kept even past 5, and the report says so.

Deviation from the seed, on purpose: the load summary's age counts from `updated` (when the
state was saved) and also shows `created` when it differs; with merging, `created` is the
first save ever and says little about how stale the state is.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    field_validator,
    model_validator,
)

from ai_context.core.block import format_timestamp
from ai_context.core.durations import format_duration
from ai_context.core.errors import UsageError
from ai_context.core.findings import Finding
from ai_context.rules.scrub import describe_counts, privacy_findings, scrub_counted

SESSION_VERSION = "2.0"
TaskStatus = Literal["pending", "in_progress", "completed"]
Priority = Literal["P1", "P2", "P3"]
Category = Literal["BUGFIX", "FEATURE", "CONFIG", "DOCS", "TEST", "REFACTOR"]
STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed")
_TASK_ID_RE = re.compile(r"TASK_?(\d{1,6})")
_TASK_MENTION_RE = re.compile(r"(?<![A-Za-z0-9])TASK_?(\d{1,6})(?![0-9])")


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError(
            "a timestamp needs a timezone: write UTC with Z, e.g. 2025-11-26T14:00:00Z"
        )
    return value.astimezone(UTC).replace(microsecond=0)


UtcTime = Annotated[
    datetime, AfterValidator(_utc), PlainSerializer(format_timestamp, return_type=str)
]


def task_id(number: int) -> str:
    return f"TASK_{number:03d}"


def task_number(value: str) -> int:
    match = _TASK_ID_RE.fullmatch(value.strip())
    if match is None:
        raise ValueError(f"task id {value!r} is not TASK_ followed by digits, e.g. TASK_001")
    return int(match.group(1))


def _normal_id(value: str) -> str:
    return task_id(task_number(value))


_STATUS_ALIASES = {
    "done": "completed",
    "complete": "completed",
    "open": "pending",
    "todo": "pending",
}


def _upper_or_none(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().upper() or None
    return value


def _normal_status(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    key = value.strip().lower().replace("-", "_").replace(" ", "_")
    return _STATUS_ALIASES.get(key, key)


class Metadata(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    version: str
    created: UtcTime
    updated: UtcTime
    git_branch: str | None = None
    git_commit: str | None = None

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if value != SESSION_VERSION:
            raise ValueError(f"session format version {value!r}; this tool reads {SESSION_VERSION}")
        return value


class Task(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    title: str
    status: TaskStatus
    priority: Priority | None = None
    category: Category | None = None
    created: UtcTime
    completed: UtcTime | None = None
    consolidated: bool = False
    consolidated_count: int = Field(default=0, ge=0)
    context: str = ""
    files: tuple[str, ...] = ()
    area: str | None = None  # ours: the feature/area the consolidation matrix groups by

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _normal_id(value)

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: Any) -> Any:
        return _normal_status(value)

    @field_validator("priority", "category", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return _upper_or_none(value)

    @field_validator("title")
    @classmethod
    def _title(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("a task needs a title")
        return value

    @field_validator("area")
    @classmethod
    def _area(cls, value: str | None) -> str | None:
        return " ".join(value.split()) or None if value is not None else None

    @model_validator(mode="after")
    def _counts(self) -> Task:
        if not self.consolidated and self.consolidated_count:
            object.__setattr__(self, "consolidated_count", 0)
        if self.consolidated and self.consolidated_count < 1:
            object.__setattr__(self, "consolidated_count", 1)
        return self

    @property
    def number(self) -> int:
        return task_number(self.id)

    @property
    def is_open(self) -> bool:
        return self.status != "completed"

    @property
    def finished(self) -> datetime:
        """When the task was completed (its creation time when the file does not say)."""
        return self.completed or self.created

    @property
    def weight(self) -> int:
        """How many original tasks this entry stands for."""
        return self.consolidated_count if self.consolidated else 1


class ContextBlock(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    title: str
    content: str
    updated: UtcTime
    related_tasks: tuple[str, ...] = ()

    @field_validator("related_tasks")
    @classmethod
    def _ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(_normal_id(v) for v in value))


class SessionFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    metadata: Metadata
    tasks: tuple[Task, ...]
    context_blocks: tuple[ContextBlock, ...] = ()

    @field_validator("tasks")
    @classmethod
    def _tasks(cls, value: tuple[Task, ...]) -> tuple[Task, ...]:
        if not value:
            raise ValueError("a session file holds at least one task")
        seen: set[str] = set()
        for task in value:
            if task.id in seen:
                raise ValueError(f"task id {task.id} is used twice")
            seen.add(task.id)
        return value


class SessionError(UsageError):
    """A session file or input that cannot be used; the message says what and what to do."""


# --- reading ----------------------------------------------------------------------------


def _problems(exc: ValidationError, prefix: str = "") -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = "".join(
            f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p))
            for i, p in enumerate(error["loc"])
        )
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{prefix}{where}: {message}" if where else f"{prefix}{message}")
    more = len(exc.errors()) - 5
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def loads(text: str) -> SessionFile:
    """A session file from its text; SessionError says exactly why it cannot be loaded."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SessionError(
            f"Cannot load: invalid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix the file or save the session again"
        ) from None
    if not isinstance(data, dict):
        raise SessionError(
            "Cannot load: not a session file (expected a JSON object with metadata, tasks and "
            "context_blocks)"
        )
    if "metadata" not in data or not isinstance(data["metadata"], dict):
        raise SessionError(
            "Cannot load: missing metadata (a v2.0 session file starts with "
            '{"metadata":{"version":"2.0",...}}); save the session again'
        )
    if "tasks" not in data:
        raise SessionError("Cannot load: missing tasks; save the session again")
    try:
        return SessionFile.model_validate(data)
    except ValidationError as exc:
        raise SessionError(f"Cannot load: {_problems(exc)}") from None


def _task_json(task: Task) -> dict[str, Any]:
    data: dict[str, Any] = task.model_dump(mode="json", exclude={"area"})
    data["files"] = list(task.files)
    if task.area is not None:
        data["area"] = task.area
    return data


def to_json(session: SessionFile) -> dict[str, Any]:
    """The seed's shape, fields in its order (`area` only when set)."""
    return {
        "metadata": session.metadata.model_dump(mode="json"),
        "tasks": [_task_json(t) for t in session.tasks],
        "context_blocks": [
            {**b.model_dump(mode="json"), "related_tasks": list(b.related_tasks)}
            for b in session.context_blocks
        ],
    }


def dumps(session: SessionFile) -> str:
    """Minified single-line JSON: no whitespace between tokens, no newline."""
    return json.dumps(to_json(session), separators=(",", ":"), ensure_ascii=False)


# --- what the agent hands to `session save` ---------------------------------------------


class TaskInput(BaseModel):
    """A task as the agent passes it: only title and status are required."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str | None = None
    title: str
    status: TaskStatus
    priority: Priority | None = None
    category: Category | None = None
    created: UtcTime | None = None
    completed: UtcTime | None = None
    consolidated: bool = False
    consolidated_count: int = Field(default=0, ge=0)
    context: str = ""
    files: tuple[str, ...] = ()
    area: str | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: Any) -> Any:
        return _normal_status(value)

    @field_validator("priority", "category", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return _upper_or_none(value)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str | None) -> str | None:
        return _normal_id(value) if value is not None else None


class ContextBlockInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    content: str
    updated: UtcTime | None = None
    related_tasks: tuple[str, ...] = ()


class SessionInput(BaseModel):
    """`{"tasks": [...], "context_blocks": [...]}`; a bare list is the tasks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tasks: tuple[TaskInput, ...]
    context_blocks: tuple[ContextBlockInput, ...] = ()


def parse_input(text: str) -> SessionInput:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SessionError(
            f"Cannot save: the task list is not JSON (line {exc.lineno}, column {exc.colno}: "
            f'{exc.msg}); pass a JSON object {{"tasks": [...], "context_blocks": [...]}}'
        ) from None
    if isinstance(data, list):
        data = {"tasks": data}
    if not isinstance(data, dict):
        raise SessionError(
            'Cannot save: expected {"tasks": [...], "context_blocks": [...]} or a list of tasks'
        )
    try:
        return SessionInput.model_validate(data)
    except ValidationError as exc:
        raise SessionError(f"Cannot save: {_problems(exc)}") from None


# --- merging ----------------------------------------------------------------------------


def _title_key(title: str) -> str:
    return " ".join(title.lower().split())


def _materialise(item: TaskInput, number: int, now: datetime, old: Task | None) -> Task:
    created = item.created or (old.created if old else now)
    completed = item.completed
    if item.status == "completed" and completed is None:
        completed = old.completed if old and old.completed else now
    if item.status != "completed":
        completed = None
    return Task(
        id=task_id(number),
        title=item.title,
        status=item.status,
        priority=item.priority if item.priority is not None else (old.priority if old else None),
        category=item.category if item.category is not None else (old.category if old else None),
        created=created,
        completed=completed,
        consolidated=item.consolidated,
        consolidated_count=item.consolidated_count,
        context=item.context or (old.context if old else ""),
        files=item.files or (old.files if old else ()),
        area=item.area if item.area is not None else (old.area if old else None),
    )


def merge_tasks(
    existing: Sequence[Task], incoming: Sequence[TaskInput], now: datetime
) -> list[Task]:
    """The file's tasks with the agent's versions applied; new tasks get the next ids."""
    by_id = {t.id: t for t in existing}
    by_title = {_title_key(t.title): t.id for t in existing if not t.consolidated}
    result: dict[str, Task] = dict(by_id)
    next_number = max((t.number for t in existing), default=0)
    seen_ids: set[str] = set()
    for item in incoming:
        if item.id is not None:
            old_id = item.id if item.id in by_id else None
        else:
            old_id = by_title.get(_title_key(item.title))
        if item.id is not None and item.id in seen_ids:
            raise SessionError(f"Cannot save: task id {item.id} appears twice in the input")
        if item.id is not None and old_id is None:
            number = task_number(item.id)  # the agent's own id for a task new to the file
            if task_id(number) in result:
                raise SessionError(
                    f"Cannot save: task id {item.id} is taken in the file by "
                    f"'{result[task_id(number)].title}'"
                )
        elif old_id is not None:
            number = task_number(old_id)
        else:
            number = 0
        if number == 0:
            next_number = max([next_number, *(task_number(i) for i in result)]) + 1
            number = next_number
        task = _materialise(item, number, now, by_id.get(task_id(number)))
        seen_ids.add(task.id)
        result[task.id] = task
        by_title.pop(_title_key(item.title), None)
    return list(result.values())


def overwrite_tasks(incoming: Sequence[TaskInput], now: datetime) -> list[Task]:
    """Only the agent's tasks (it loaded the file this session, so its list is complete)."""
    taken = {task_number(i.id) for i in incoming if i.id is not None}
    if len(taken) != sum(1 for i in incoming if i.id is not None):
        raise SessionError("Cannot save: a task id appears twice in the input")
    next_number = max(taken, default=0)
    tasks = []
    for item in incoming:
        if item.id is not None:
            number = task_number(item.id)
        else:
            next_number += 1
            number = next_number
        tasks.append(_materialise(item, number, now, None))
    return tasks


def merge_blocks(
    existing: Sequence[ContextBlock], incoming: Sequence[ContextBlockInput], now: datetime
) -> list[ContextBlock]:
    """Blocks by title: the agent's version replaces the file's."""
    blocks = {_title_key(b.title): b for b in existing}
    for item in incoming:
        blocks[_title_key(item.title)] = ContextBlock(
            title=item.title,
            content=item.content,
            updated=item.updated or now,
            related_tasks=item.related_tasks,
        )
    return list(blocks.values())


# --- consolidation ----------------------------------------------------------------------


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


def is_critical_bug(task: Task) -> bool:
    return task.category == "BUGFIX" and task.priority == "P1"


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


def keep_reasons(
    tasks: Sequence[Task], blocks: Sequence[ContextBlock], now: datetime, rules: ConsolidationRules
) -> dict[str, KeepReason]:
    """Completed tasks that must never be consolidated, with the first reason that applies."""
    note_owners: dict[str, set[str]] = {}
    for task in tasks:
        for note in notes(task.context):
            note_owners.setdefault(note, set()).add(task.id)
    open_ids = {t.id for t in tasks if t.is_open}
    referenced: set[int] = set()
    for task in tasks:
        if task.is_open:
            text = f"{task.title} {task.context}"
            referenced.update(int(m.group(1)) for m in _TASK_MENTION_RE.finditer(text))
    for block in blocks:
        if open_ids & set(block.related_tasks):
            referenced.update(task_number(i) for i in block.related_tasks)
    reasons: dict[str, KeepReason] = {}
    for task in tasks:
        if task.status != "completed" or task.consolidated:
            continue
        if is_critical_bug(task):
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
    over_limit: tuple[str, ...] = ()
    if len(remaining) > rules.keep_individual:
        excess = len(remaining) - rules.keep_individual
        movable = sorted((t for t in remaining if t.id not in kept), key=lambda t: t.finished)
        per_area = Counter(_area_key(t.area) for t in movable[:excess])
        for task in movable[:excess]:
            key = _area_key(task.area)
            if per_area[key] == 1 and key not in folding and key not in existing_groups:
                key = ""  # a lone task is not a group of its own: it joins the catch-all
            folding.setdefault(key, []).append(task)
            decision = decisions.get(key) or AreaDecision(
                area=None,
                members=(),
                same_area=False,
                many_related=False,
                no_critical=True,
                quiet=True,
            )
            decisions[key] = decision.model_copy(update={"forced": (*decision.forced, task.id)})
        still = len(remaining) - min(excess, len(movable))
        if still > rules.keep_individual:
            over_limit = tuple(t.id for t in remaining if t.id in kept)
    replaced: dict[str, Task] = {}  # member id -> consolidated task
    for key, members in folding.items():
        into = existing_groups.get(key)
        group = _fold(members, into, decisions[key].area if key else None)
        decisions[key] = decisions[key].model_copy(update={"into": group.id})
        for member in members:
            replaced[member.id] = group
        if into is not None:
            replaced[into.id] = group
    out: list[Task] = []
    emitted: set[str] = set()
    for task in tasks:
        target = replaced.get(task.id, task)
        if target.id not in emitted:
            out.append(target)
            emitted.add(target.id)
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


_PRIORITY_RANK = {"P1": 0, "P2": 1, "P3": 2, None: 3}


def ordered(tasks: Iterable[Task]) -> list[Task]:
    """In progress, then pending by priority, then completed (newest first), groups last."""

    def key(task: Task) -> tuple[Any, ...]:
        if task.status == "in_progress":
            return (0, _PRIORITY_RANK[task.priority], task.number)
        if task.status == "pending":
            return (1, _PRIORITY_RANK[task.priority], task.number)
        stamp = -task.finished.timestamp()
        return (3 if task.consolidated else 2, stamp, task.number)

    return sorted(tasks, key=key)


# --- save -------------------------------------------------------------------------------


class SaveResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    session: SessionFile
    mode: Literal["new", "merge", "overwrite"]
    consolidation: Consolidation
    scrubbed: dict[str, int]


def _scrub_text(value: str, counts: dict[str, int]) -> str:
    clean, found = scrub_counted(value)
    for kind, number in found.items():
        counts[kind] = counts.get(kind, 0) + number
    return clean


def scrub_session(session: SessionFile) -> tuple[SessionFile, dict[str, int]]:
    """Every free-text field scrubbed (titles, contexts, files, blocks, branch)."""
    counts: dict[str, int] = {}
    tasks = tuple(
        t.model_copy(
            update={
                "title": _scrub_text(t.title, counts),
                "context": _scrub_text(t.context, counts),
                "files": tuple(_scrub_text(f, counts) for f in t.files),
                "area": _scrub_text(t.area, counts) if t.area else t.area,
            }
        )
        for t in session.tasks
    )
    blocks = tuple(
        b.model_copy(
            update={
                "title": _scrub_text(b.title, counts),
                "content": _scrub_text(b.content, counts),
            }
        )
        for b in session.context_blocks
    )
    meta = session.metadata
    if meta.git_branch:
        meta = meta.model_copy(update={"git_branch": _scrub_text(meta.git_branch, counts)})
    return SessionFile(metadata=meta, tasks=tasks, context_blocks=blocks), counts


def save(
    existing: SessionFile | None,
    incoming: SessionInput,
    *,
    now: datetime,
    overwrite: bool,
    git_branch: str | None = None,
    git_commit: str | None = None,
    rules: ConsolidationRules | None = None,
) -> SaveResult:
    """WF1: merge (or overwrite), consolidate, scrub; the caller writes `dumps(result.session)`."""
    now = _utc(now)
    if not incoming.tasks and (overwrite or existing is None):
        raise SessionError("Cannot save: no tasks given; a session file holds at least one task")
    if overwrite or existing is None:
        tasks = overwrite_tasks(incoming.tasks, now)
        blocks = merge_blocks([], incoming.context_blocks, now)
        created = now
        mode: Literal["new", "merge", "overwrite"] = "overwrite" if overwrite else "new"
    else:
        tasks = merge_tasks(existing.tasks, incoming.tasks, now)
        blocks = merge_blocks(existing.context_blocks, incoming.context_blocks, now)
        created = existing.metadata.created
        mode = "merge"
    result = consolidate(tasks, blocks, now=now, rules=rules)
    metadata = Metadata(
        version=SESSION_VERSION,
        created=created,
        updated=now,
        git_branch=git_branch,
        git_commit=git_commit,
    )
    try:
        session = SessionFile(
            metadata=metadata,
            tasks=tuple(ordered(result.tasks)),
            context_blocks=result.context_blocks,
        )
    except ValidationError as exc:
        raise SessionError(f"Cannot save: {_problems(exc)}") from None
    clean, counts = scrub_session(session)
    return SaveResult(session=clean, mode=mode, consolidation=result, scrubbed=counts)


# --- summaries --------------------------------------------------------------------------


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
    priorities: dict[str, int] = {}
    for task in tasks:
        if task.is_open and task.priority:
            priorities[task.priority] = priorities.get(task.priority, 0) + 1
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
    """The first open task in file order (save writes in-progress and P1 work first)."""
    return next((t for t in session.tasks if t.is_open), None)


def _short(sha: str | None) -> str:
    return (sha or "")[:7]


def _done_detail(c: Counts) -> str:
    parts = []
    if c.consolidated_groups:
        parts.append(f"{c.done_individual} individual")
        parts.append(f"{c.consolidated_groups} consolidated from {c.consolidated_from}")
    return f" ({', '.join(parts)})" if parts else ""


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
    """WF2: age, counts, next task, git drift warnings."""
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


# --- checking a committed session file (push) -------------------------------------------


def check_session_file(path: str, text: str) -> list[Finding]:
    """Findings for a committed sp.json: AIC520 unreadable, AIC521 invalid, AIC53x privacy.

    A secret is an error naming file, line and column, never the value (scrub.py).
    """
    out: list[Finding] = []
    try:
        loads(text)
    except SessionError as exc:
        invalid_json = "invalid JSON" in str(exc)
        out.append(
            Finding(
                code="AIC520" if invalid_json else "AIC521",
                severity="error",
                message=f"{path}: {exc}",
                line=None,
                hint="Save the session with `ai-context session save` instead of editing it.",
            )
        )
    out.extend(privacy_findings(path, text))
    return out
