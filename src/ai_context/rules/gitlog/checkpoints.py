"""Checkpoint commits: the one reader of their messages (format v1, written by the agent)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ai_context.core.events import Commit
from ai_context.rules.gitlog.refs import issues_named

CHECKPOINT_TRAILER = "AI-Context-Checkpoint"
CHECKPOINT_VERSION = 1
_CHECKPOINT_TRAILER_RE = re.compile(
    r"^[ \t]*AI-Context-Checkpoint[ \t]*:[ \t]*(.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE
)
_VERSION_RE = re.compile(r"v(\d{1,6})", re.IGNORECASE)
_V1_SUBJECT_RE = re.compile(
    r"ai-context: (?P<text>\S.*?) completed \[issue:(?P<issue>\d{1,9})\]"
    r"(?: \[step:(?P<step>\d{1,9})\])?"
)
# A subject in the checkpoint shape, whatever its version and spacing: reported when the
# trailer is missing.
_CHECKPOINT_SHAPE_RE = re.compile(
    r"ai-context:.*completed\s*\[\s*issue\s*:\s*#?\d{1,9}\s*\]", re.IGNORECASE
)
# The issue a checkpoint that cannot be read still names, so its finding reaches that issue.
_LOOSE_ISSUE_RE = re.compile(r"\[\s*issue\s*:\s*#?(\d{1,9})\s*\]", re.IGNORECASE)
_MAX_SUBJECT = 1000


class Checkpoint(BaseModel):
    """A plan step an agent recorded as completed, in a commit of its own."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    version: int
    issue: int
    step: int | None = None
    text: str


class CheckpointProblem(BaseModel):
    """A commit that claims to be a checkpoint but cannot be read as one; never guessed."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: Literal["unknown-version", "malformed", "unversioned"]
    version: str | None = None
    message: str
    issue: int | None = None  # the `[issue:N]` its subject names, read leniently


def _read_v1(subject: str) -> Checkpoint | CheckpointProblem:
    match = _V1_SUBJECT_RE.fullmatch(subject) if len(subject) <= _MAX_SUBJECT else None
    if match is None:
        return CheckpointProblem(
            kind="malformed",
            version="v1",
            message="a v1 checkpoint subject reads 'ai-context: <step> completed [issue:N] "
            f"[step:K]'; this one is '{subject[:80]}'",
        )
    step = match.group("step")
    issue = int(match.group("issue"))
    if issue == 0 or (step is not None and int(step) == 0):
        return CheckpointProblem(
            kind="malformed", version="v1", message="issue and step numbers start at 1"
        )
    return Checkpoint(
        version=1,
        issue=issue,
        step=int(step) if step is not None else None,
        text=match.group("text").strip(),
    )


def read_checkpoint(message: str) -> Checkpoint | CheckpointProblem | None:
    """The checkpoint a commit message records (read by its trailer's version); None for an
    ordinary commit. One that cannot be read keeps the issue its subject names, so its
    AIC505/AIC506 reaches that issue."""
    subject = message.split("\n", 1)[0].strip()
    result = _read(message, subject)
    if isinstance(result, CheckpointProblem) and result.issue is None:
        loose = _LOOSE_ISSUE_RE.search(subject[:_MAX_SUBJECT])
        if loose is not None and int(loose.group(1)) > 0:
            result = result.model_copy(update={"issue": int(loose.group(1))})
    return result


def _read(message: str, subject: str) -> Checkpoint | CheckpointProblem | None:
    versions = [m.group(1) for m in _CHECKPOINT_TRAILER_RE.finditer(message)]
    if not versions:
        if _CHECKPOINT_SHAPE_RE.match(subject[:_MAX_SUBJECT]):
            return CheckpointProblem(
                kind="unversioned",
                message=f"subject looks like a checkpoint but has no '{CHECKPOINT_TRAILER}: vN' "
                "trailer, so its format is unknown",
            )
        return None
    if len(set(versions)) > 1:
        return CheckpointProblem(
            kind="malformed",
            version=", ".join(versions),
            message=f"{CHECKPOINT_TRAILER} appears with different versions: " + ", ".join(versions),
        )
    raw = versions[0]
    version = _VERSION_RE.fullmatch(raw)
    if version is None:
        return CheckpointProblem(
            kind="malformed",
            version=raw[:20],
            message=f"{CHECKPOINT_TRAILER} is '{raw[:20]}', not a version such as v1",
        )
    if int(version.group(1)) != CHECKPOINT_VERSION:
        return CheckpointProblem(
            kind="unknown-version",
            version=f"v{int(version.group(1))}",
            message=f"unknown checkpoint format v{int(version.group(1))}; this tool reads "
            f"v{CHECKPOINT_VERSION}",
        )
    return _read_v1(subject)


def issues_of(commit: Commit, repo: str | None = None) -> list[int]:
    """The issues a commit names, including the one its checkpoint subject records (even a
    checkpoint that cannot be read: its problem is reported on that issue)."""
    numbers = issues_named(commit.message, repo)
    checkpoint = read_checkpoint(commit.message)
    issue = checkpoint.issue if checkpoint is not None else None
    if issue is not None and issue not in numbers:
        numbers.append(issue)
    return numbers


def group_by_issue(commits: Iterable[Commit], repo: str | None = None) -> dict[int, list[Commit]]:
    """Commits per issue they name (a commit naming two issues is under both), in input order."""
    groups: dict[int, list[Commit]] = {}
    for commit in commits:
        for number in issues_of(commit, repo):
            groups.setdefault(number, []).append(commit)
    return groups
