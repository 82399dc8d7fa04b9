"""One error model: every failure the tool reports is an `AIContextError` carrying its exit code
(`Exit`, docs/design.md's "Runtime contract"), and a message saying what was wrong and what to
do. Adapters translate service failures into `ServiceError`s; each face maps them in one place.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar


class Exit(IntEnum):
    """The exit statuses every face uses (FINDINGS: at or above the user's threshold;
    INCOMPLETE: required fields missing)."""

    OK = 0
    FINDINGS = 1
    USAGE = 2
    SERVICE = 3
    CONFLICT = 4
    INCOMPLETE = 5


class AIContextError(Exception):
    """The base of every error the tool reports (never a traceback)."""

    exit_code: ClassVar[Exit] = Exit.SERVICE
    # A short title for the Action's annotation ("ai-context: <title>").
    title: ClassVar[str] = "failed"


class UsageError(AIContextError):
    """Bad usage of a command, or input it cannot use: exit 2."""

    exit_code = Exit.USAGE
    title = "bad usage"


class ConfigError(UsageError):
    """Bad configuration: exit 2. The message says what, where and what to do."""

    title = "bad configuration"


class EventError(UsageError):
    """The event payload cannot be read: exit 2 ("cannot read the event payload: <field>")."""

    title = "bad event payload"


class TemplateError(UsageError):
    """A user template failed to load or render: exit 2 ("template error: ...")."""

    title = "template error"


class ServiceError(AIContextError):
    """An outside service (GitHub, ClickUp, Slack, git) failed; `status` is its HTTP status."""

    exit_code = Exit.SERVICE
    service: ClassVar[str] = "a service"

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def failure_title(self) -> str:
        return f"{self.service} failed"


class ServiceRefused(ServiceError):
    """The service refused the credentials or a setting: the user must change it (exit 2)."""

    exit_code = Exit.USAGE


class ConflictError(AIContextError):
    """Two actors disagree, or a lease is held by another actor: exit 4."""

    exit_code = Exit.CONFLICT
    title = "conflict"
