"""The jobs: pure planning over plain models, then one place that applies the writes.

A job takes its adapters as arguments, so tests and the offline demo pass a directory store
instead of GitHub.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from ai_context.block import find
from ai_context.checks import CheckConfig, CheckResult, check_body
from ai_context.findings import Finding
from ai_context.github import GitHubUnavailable
from ai_context.models import Comment, Issue
from ai_context.sticky import CHECK_LABELS, MARKER, Op, needs_comments, plan_comment, plan_labels


class IssueWriter(Protocol):
    """The writes the check job makes; github.GitHub provides them."""

    def list_comments(self, number: int) -> list[Comment]: ...

    def create_comment(self, number: int, body: str) -> Comment: ...

    def edit_comment(self, comment_id: int, body: str) -> Comment: ...

    def delete_comment(self, comment_id: int) -> None: ...

    def add_labels(self, number: int, labels: Sequence[str]) -> None: ...

    def remove_label(self, number: int, label: str) -> None: ...


@dataclass
class IssueCheck:
    issue: Issue
    result: CheckResult
    ops: list[Op] = field(default_factory=list)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.result.findings


@dataclass
class CheckReport:
    checks: list[IssueCheck]
    stats: Counter[str] = field(default_factory=Counter)

    @property
    def findings(self) -> int:
        return sum(len(c.findings) for c in self.checks)

    def count(self, severity: str) -> int:
        return sum(1 for c in self.checks for f in c.findings if f.severity == severity)


def is_task(issue: Issue) -> bool:
    """An issue is a task when its body has a block (or it still wears our labels)."""
    return bool(find(issue.body)) or any(label in CHECK_LABELS for label in issue.labels)


def task_findings(issue: Issue, now: datetime, config: CheckConfig) -> CheckResult:
    result = check_body(issue.body, now=now, config=config)
    if result.block is None:  # not a task (any more): nothing to report, only to clear
        return CheckResult(block=None, findings=(), complete=False)
    return result


ExtraFindings = Callable[[Issue, CheckResult], Sequence[Finding]]


def plan_check(
    issue: Issue,
    *,
    now: datetime,
    config: CheckConfig,
    bot_login: str,
    comments: Callable[[int], list[Comment]],
    extra_findings: ExtraFindings | None = None,
) -> IssueCheck:
    """What the check job would write for one issue; reads comments only when it must.

    `extra_findings` adds what other sources know about the task (git, staleness, the
    ClickUp mirror) to the block's own findings, so one comment carries them all; the labels
    speak of the block alone (a duplicate ClickUp field does not make the block invalid).
    """
    result = task_findings(issue, now, config)
    ops = plan_labels(issue, result.findings)
    if extra_findings is not None and result.block is not None:
        extra = extra_findings(issue, result)
        if extra:
            merged = sorted([*result.findings, *extra], key=lambda f: (f.line or 0, f.code))
            result = result.model_copy(update={"findings": tuple(merged)})
    if needs_comments(issue, result.findings):
        ops = plan_comment(issue.number, result.findings, comments(issue.number), bot_login) + ops
    elif result.findings:
        ops = plan_comment(issue.number, result.findings, [], bot_login) + ops
    return IssueCheck(issue, result, ops)


def run_check(
    issues: Sequence[Issue],
    writer: IssueWriter,
    *,
    now: datetime,
    config: CheckConfig,
    bot_login: str,
    dry_run: bool,
    log: Callable[[str], None],
    extra_findings: ExtraFindings | None = None,
) -> CheckReport:
    report = CheckReport([])
    for issue in issues:
        planned = plan_check(
            issue,
            now=now,
            config=config,
            bot_login=bot_login,
            comments=writer.list_comments,
            extra_findings=extra_findings,
        )
        report.checks.append(planned)
        for op in planned.ops:
            report.stats[op.kind] += 1
            if dry_run:
                log(f"[dry-run] would {op.describe()}")
            else:
                apply(op, writer, bot_login)
                log(f"{op.describe()}")
    return report


def apply(op: Op, writer: IssueWriter, bot_login: str) -> None:
    if op.kind == "create_comment":
        _create_once(op, writer, bot_login)
    elif op.kind == "edit_comment":
        assert op.comment_id is not None and op.body is not None
        writer.edit_comment(op.comment_id, op.body)
    elif op.kind == "delete_comment":
        assert op.comment_id is not None
        writer.delete_comment(op.comment_id)
    elif op.kind == "add_labels":
        writer.add_labels(op.issue, op.labels)
    else:
        writer.remove_label(op.issue, op.labels[0])


def _create_once(op: Op, writer: IssueWriter, bot_login: str) -> None:
    """A POST that failed may still have landed: look for our marker before trying again."""
    assert op.body is not None
    try:
        writer.create_comment(op.issue, op.body)
    except GitHubUnavailable:
        landed = any(
            c.author.lower() == bot_login.lower() and c.body.startswith(MARKER)
            for c in writer.list_comments(op.issue)
        )
        if not landed:
            writer.create_comment(op.issue, op.body)
