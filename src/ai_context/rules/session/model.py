"""The session file v2.0: its models, reading and writing it, checking a committed one."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    field_validator,
    model_validator,
)

from ai_context.core.block.model import format_timestamp
from ai_context.core.errors import UsageError
from ai_context.core.fields import explain, utc
from ai_context.core.findings import Finding
from ai_context.rules.scrub import privacy_findings

SESSION_VERSION = "2.0"
TaskStatus = Literal["pending", "in_progress", "completed"]
Priority = Literal["P1", "P2", "P3"]
Category = Literal["BUGFIX", "FEATURE", "CONFIG", "DOCS", "TEST", "REFACTOR"]
_TASK_ID_RE = re.compile(r"TASK_?(\d{1,6})")
TASK_MENTION_RE = re.compile(r"(?<![A-Za-z0-9])TASK_?(\d{1,6})(?![0-9])")


def as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError(
            "a timestamp needs a timezone: write UTC with Z, e.g. 2025-11-26T14:00:00Z"
        )
    return utc(value).replace(microsecond=0)


UtcTime = Annotated[
    datetime, AfterValidator(as_utc), PlainSerializer(format_timestamp, return_type=str)
]


def task_id(number: int) -> str:
    return f"TASK_{number:03d}"


def task_number(value: str) -> int:
    match = _TASK_ID_RE.fullmatch(value.strip())
    if match is None:
        raise ValueError(f"task id {value!r} is not TASK_ followed by digits, e.g. TASK_001")
    return int(match.group(1))


def normal_id(value: str) -> str:
    return task_id(task_number(value))


_STATUS_ALIASES = {
    "done": "completed",
    "complete": "completed",
    "open": "pending",
    "todo": "pending",
}


def upper_or_none(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().upper() or None
    return value


def normal_status(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    key = value.strip().lower().replace("-", "_").replace(" ", "_")
    return _STATUS_ALIASES.get(key, key)


# How a task's status, priority and category are read wherever a task comes in (a session
# file's task, an agent's input): loose spellings in, the canonical value out.
LooseStatus = Annotated[TaskStatus, BeforeValidator(normal_status)]
LoosePriority = Annotated[Priority | None, BeforeValidator(upper_or_none)]
LooseCategory = Annotated[Category | None, BeforeValidator(upper_or_none)]


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


class TaskInput(BaseModel):
    """A task as the agent passes it to `session save`: only title and status are required."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str | None = None
    title: str
    status: LooseStatus
    priority: LoosePriority = None
    category: LooseCategory = None
    created: UtcTime | None = None
    completed: UtcTime | None = None
    consolidated: bool = False
    consolidated_count: int = Field(default=0, ge=0)
    context: str = ""
    files: tuple[str, ...] = ()
    area: str | None = None  # ours: the feature/area the consolidation matrix groups by

    @field_validator("id")
    @classmethod
    def _id(cls, value: str | None) -> str | None:
        return normal_id(value) if value is not None else None


class Task(TaskInput):
    """A task as the session file holds it: its id and creation time settled."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    created: UtcTime

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


class ContextBlockInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    content: str
    updated: UtcTime | None = None
    related_tasks: tuple[str, ...] = ()


class ContextBlock(ContextBlockInput):
    model_config = ConfigDict(frozen=True, extra="ignore")

    updated: UtcTime

    @field_validator("related_tasks")
    @classmethod
    def _ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(normal_id(v) for v in value))


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
        raise SessionError(f"Cannot load: {explain(exc)}") from None


def to_json(session: SessionFile) -> dict[str, Any]:
    """The seed's shape, fields in its order (`area`, ours, only when set)."""
    return {
        "metadata": session.metadata.model_dump(mode="json"),
        "tasks": [
            t.model_dump(mode="json", exclude={"area"} if t.area is None else None)
            for t in session.tasks
        ],
        "context_blocks": [b.model_dump(mode="json") for b in session.context_blocks],
    }


def dumps(session: SessionFile) -> str:
    """Minified single-line JSON: no whitespace between tokens, no newline."""
    return json.dumps(to_json(session), separators=(",", ":"), ensure_ascii=False)


# --- checking a committed session file (push) -------------------------------------------


def check_session_file(path: str, text: str) -> list[Finding]:
    """Findings for a committed sp.json: AIC520 unreadable, AIC521 invalid, AIC53x privacy (a secret
    named by file, line and column, never its value)."""
    out: list[Finding] = []
    try:
        loads(text)
    except SessionError as exc:
        code = "AIC520" if "invalid JSON" in str(exc) else "AIC521"
        hint = "Save the session with `ai-context session save` instead of editing it."
        out.append(Finding(code, "error", f"{path}: {exc}", None, hint))
    out.extend(privacy_findings(path, text))
    return out
