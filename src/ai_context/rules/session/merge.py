"""What the agent hands to `session save`, and merging it into the file's tasks and blocks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict, ValidationError

from ai_context.core.fields import explain
from ai_context.rules.session.model import (
    ContextBlock,
    ContextBlockInput,
    SessionError,
    Task,
    TaskInput,
    task_id,
    task_number,
)


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
        raise SessionError(f"Cannot save: {explain(exc)}") from None


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
