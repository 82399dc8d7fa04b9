"""What the agent commands take (hooks) and what they return (an Outcome)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from ai_context.core.block.model import Block
from ai_context.core.errors import UsageError
from ai_context.core.models import Issue
from ai_context.rules.reconcile import Decision

IN_PROGRESS = "in-progress"
BODY_LIMIT = 65536
RECENT = timedelta(hours=24)
Command = Literal["save", "resume", "handoff", "done"]
Status = Literal["ok", "conflict", "incomplete", "pick"]
Take = Literal["local", "remote"]


MirrorHook = Callable[[Issue, Block], None]
"""Called once a block has reached the issue: the ClickUp mirror plugs in here."""

LeaseHook = Callable[[Issue, str], None]
"""Called once a handoff has reached the issue, with the actor handing off: releases its lease."""


class AgentError(UsageError):
    """Input the command cannot work with: exit 2 with what to do."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """An open task to pick from when resume cannot tell which one is active."""

    number: int
    title: str
    actor: str | None = None
    phase: str | None = None
    assignees: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What a command did: output.py renders it and maps `status` to the exit code. Plain
    dataclasses (the jobs build them from checked values): no pydantic on the agent's path."""

    command: Command
    repository: str
    issue: int | None = None
    title: str = ""
    html_url: str = ""
    status: Status = "ok"
    source: str = ""  # resume: how the task was chosen (argument, cache, assigned)
    decision: Decision | None = None
    state: Block | None = None
    missing: tuple[str, ...] = ()
    wrote_remote: bool = False
    wrote_local: bool = False
    reapplied: bool = False  # the body changed between read and write; re-applied on it
    dry_run: bool = False
    diff: str = ""  # dry-run: the body's diff; conflict: the blocks' diff
    notes: tuple[str, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    conflict_log: str | None = None
