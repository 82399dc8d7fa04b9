"""derive: what git can tell about one task, beside what its block says."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from ai_context.core.block.model import Block
from ai_context.core.block.parse import parse
from ai_context.core.events import Commit
from ai_context.core.findings import Finding
from ai_context.rules.gitlog.checkpoints import Checkpoint, CheckpointProblem, issues_of
from ai_context.rules.gitlog.compare import (
    GitRules,
    checkpoint_problem_finding,
    checkpoints_of,
    compare_block,
    path_covered,
)


class AuthorActivity(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    email: str
    commits: int
    first: datetime
    last: datetime


class FileActivity(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    commits: int
    last_sha: str
    last_at: datetime
    removed: bool
    covered: bool | None  # None when there is no block to compare with


class CheckpointEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    sha: str
    timestamp: datetime
    checkpoint: Checkpoint | None = None
    problem: CheckpointProblem | None = None


class Derivation(BaseModel):
    """What git says about one issue, beside what its block says."""

    model_config = ConfigDict(frozen=True)

    issue: int
    commits: tuple[Commit, ...]  # newest first
    authors: tuple[AuthorActivity, ...]
    files: tuple[FileActivity, ...]
    checkpoints: tuple[CheckpointEntry, ...]  # oldest first, as the plan ran
    first_activity: datetime | None
    last_activity: datetime | None
    block: Block | None
    block_findings: tuple[Finding, ...]  # what parsing the body found
    findings: tuple[Finding, ...]  # the git rules


def derive(
    issue: int,
    commits: Iterable[Commit],
    body: str | None,
    *,
    repo: str | None = None,
    rules: GitRules | None = None,
) -> Derivation:
    """Rebuild what git can tell about a task and compare it with the block in `body`."""
    naming = sorted(
        (c for c in commits if issue in issues_of(c, repo)), key=lambda c: c.timestamp, reverse=True
    )
    parsed = parse(body) if body is not None else None
    block = parsed.block if parsed is not None else None
    authors: dict[tuple[str, str], list[Commit]] = {}
    files: dict[str, list[Commit]] = {}
    for commit in naming:
        authors.setdefault((commit.author_name, commit.author_email.lower()), []).append(commit)
        for path in commit.files:
            files.setdefault(path, []).append(commit)
    entries = block.paths if block is not None else ()
    author_rows = sorted(
        (
            AuthorActivity(
                name=name,
                email=email,
                commits=len(group),
                first=group[-1].timestamp,
                last=group[0].timestamp,
            )
            for (name, email), group in authors.items()
        ),
        key=lambda a: (-a.commits, a.name),
    )
    file_rows = [
        FileActivity(
            path=path,
            commits=len(group),
            last_sha=group[0].sha,
            last_at=group[0].timestamp,
            removed=path in group[0].removed,
            covered=path_covered(path, entries) if block is not None else None,
        )
        for path, group in sorted(files.items())
    ]
    checkpoints = [
        CheckpointEntry(
            sha=commit.sha,
            timestamp=commit.timestamp,
            checkpoint=result if isinstance(result, Checkpoint) else None,
            problem=result if isinstance(result, CheckpointProblem) else None,
        )
        for commit, result in reversed(checkpoints_of(naming))
    ]
    findings = (
        compare_block(
            issue,
            block,
            naming,
            repo=repo,
            rules=rules,
            field_lines=parsed.field_lines if parsed else None,
        )
        if block is not None
        else [
            checkpoint_problem_finding(c, r)
            for c, r in checkpoints_of(naming)
            if isinstance(r, CheckpointProblem)
        ]
    )
    return Derivation(
        issue=issue,
        commits=tuple(naming),
        authors=tuple(author_rows),
        files=tuple(file_rows),
        checkpoints=tuple(checkpoints),
        first_activity=naming[-1].timestamp if naming else None,
        last_activity=naming[0].timestamp if naming else None,
        block=block,
        block_findings=tuple(parsed.findings) if parsed is not None else (),
        findings=tuple(findings),
    )
