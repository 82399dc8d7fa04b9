"""The sticky comment and labels of each task: pure planning over plain models, then one place
that applies the writes (the check and stale jobs share it, so an issue gets one comment).

The writer is passed in, so tests and the offline demo pass a directory store instead of GitHub.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from ai_context.adapters.github import GitHubUnavailable
from ai_context.core.block import Block, find, format_timestamp
from ai_context.core.findings import Finding
from ai_context.core.models import Comment, Issue
from ai_context.rules.checks import CheckConfig, CheckResult, check_body
from ai_context.rules.stale import Verdict
from ai_context.rules.sticky import (
    CHECK_LABELS,
    Op,
    needs_comments,
    plan_comment,
    plan_labels,
    read_state,
    sticky_comment,
)

# Findings about the task beyond its block (stale.StaleRules): given the issue, its block
# check and what the sticky comment remembers, the verdict to merge into the one comment.
TaskRules = Callable[[Issue, CheckResult, Mapping[str, Any] | None], Verdict]


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
    verdict: Verdict | None = None  # the stale rules' verdict, when they ran

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

    @property
    def stale(self) -> int:
        return sum(1 for c in self.checks if c.verdict is not None and c.verdict.stale)

    @property
    def conflicts(self) -> int:
        return sum(1 for c in self.checks if c.verdict is not None and c.verdict.conflict)


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
    tasks: TaskRules | None = None,
    thorough: bool = False,
) -> IssueCheck:
    """What the check job would write for one issue; reads comments only when it must.

    With TASKS (the stale rules), their findings join the block's in the one comment and
    labels; their evidence is remembered in that comment for runs that cannot gather it.
    `extra_findings` adds what other sources know (git, the ClickUp mirror) to the comment
    only: the labels speak of the block and the task (a duplicate ClickUp field does not make
    the block invalid).
    """
    result = task_findings(issue, now, config)
    verdict = tasks(issue, result, None) if tasks and result.block is not None else None
    findings = _merge(result, verdict)
    extra: tuple[Finding, ...] = ()
    if extra_findings is not None and result.block is not None:
        extra = tuple(extra_findings(issue, result))
    shown = _by_line([*findings, *extra])
    listed: list[Comment] | None = None
    memory: dict[str, Any] | None = None
    if needs_comments(issue, shown, thorough=thorough):
        listed = comments(issue.number)
        memory = read_state(getattr(sticky_comment(listed, bot_login), "body", None))
        if tasks and result.block is not None and memory:
            verdict = tasks(issue, result, memory)
            findings = _merge(result, verdict)
            shown = _by_line([*findings, *extra])
    ops = plan_labels(issue, findings)
    if listed is not None or shown:
        notes, state, mention = plan_mention(
            issue.number,
            block=result.block,
            verdict=verdict,
            listed=listed or [],
            memory=memory,
            bot_login=bot_login,
        )
        planned = plan_comment(
            issue.number, shown, listed or [], bot_login, notes=notes, state=state
        )
        ops = planned + mention + ops
    return IssueCheck(issue, result.model_copy(update={"findings": shown}), ops, verdict)


def _by_line(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    return tuple(sorted(findings, key=lambda f: (f.line or 0, f.code)))


def _merge(result: CheckResult, verdict: Verdict | None) -> tuple[Finding, ...]:
    if verdict is None:
        return result.findings
    drop = verdict.supersedes
    return _by_line([f for f in result.findings if f.code not in drop] + list(verdict.findings))


def mention_note(login: str) -> str:
    """The one mention of a stale task's owner. Its text never changes while the task stays
    stale, so the comment is not re-edited for it and GitHub does not notify again; it leaves
    when the task is fresh, and comes back (one new notification) if it goes stale again."""
    return f"@{login}: this task looks stale (see above). Nudge its Active actor or hand it off."


MENTION_MARKER = "<!-- ai-context:mention "
MENTIONED = "mentioned"  # the sticky comment's memory of the episode its owner was told of


def plan_mention(
    number: int,
    *,
    block: Block | None,
    verdict: Verdict | None,
    listed: Sequence[Comment],
    memory: Mapping[str, Any] | None,
    bot_login: str,
) -> tuple[tuple[str, ...], dict[str, Any] | None, list[Op]]:
    """The sticky comment's notes and memory, and the comment that tells a stale task's owner.

    GitHub may not notify a mention added by editing a comment, so the owner is told in a
    newly created comment once per staleness episode (the owner and the block's Last updated):
    by the sticky comment itself when this run creates it, else by a short comment of its own,
    found again by its marker. The sticky comment remembers the episode, so neither is
    repeated while the task stays stale; a refreshed block that goes stale again is a new one.
    """
    state = verdict.state() if verdict else None
    if verdict is None or not verdict.mention or block is None:
        return (), state, []
    login = verdict.mention
    stamp = format_timestamp(block.last_updated) if block.last_updated else "never"
    episode = f"{login} {stamp}"
    state = {**(state or {}), MENTIONED: episode}
    notes = (mention_note(login),)
    head = f"{MENTION_MARKER}{episode} -->"
    told = (memory or {}).get(MENTIONED) == episode or any(
        c.author.lower() == bot_login.lower() and c.body.startswith(head) for c in listed
    )
    if told or sticky_comment(listed, bot_login) is None:  # a created comment notifies
        return notes, state, []
    body = (
        f"{head}\n@{login}: task #{number} looks stale (no update since {stamp}); see the "
        "ai-context comment above. Nudge its Active actor or hand it off."
    )
    return notes, state, [Op(kind="create_comment", issue=number, body=body)]


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
    tasks: TaskRules | None = None,
    thorough: bool = False,
) -> CheckReport:
    report = CheckReport([])
    for issue in issues:
        planned = plan_check(
            issue,
            now=now,
            config=config,
            bot_login=bot_login,
            comments=lambda number: read_comments(writer, number),
            extra_findings=extra_findings,
            tasks=tasks,
            thorough=thorough,
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


def read_comments(writer: IssueWriter, number: int) -> list[Comment]:
    """Issue NUMBER's comments, one listing: the one place the comment plans and writes read
    them from GitHub (a per-run cache of listings belongs here)."""
    return writer.list_comments(number)


def _ours(comments: Sequence[Comment], bot_login: str, head: str) -> list[Comment]:
    """Our comments whose first line is HEAD (a marker), oldest first, each once."""
    found = {
        c.id: c
        for c in comments
        if c.author.lower() == bot_login.lower() and c.body.split("\n", 1)[0] == head
    }
    latest = datetime.max.replace(tzinfo=UTC)
    return sorted(found.values(), key=lambda c: (c.created_at or latest, c.id))


def _create_once(op: Op, writer: IssueWriter, bot_login: str) -> None:
    """Create a marked comment (the sticky one, a mention), then list once: a POST that failed
    may still have landed, and a run racing this one (a push and an issue event, a re-run)
    may have created its own. The oldest stays, newer ones go, so racing runs end with one
    comment; the survivor gets this run's text when it was another run's."""
    assert op.body is not None
    head = op.body.split("\n", 1)[0]
    created: Comment | None = None
    try:
        created = writer.create_comment(op.issue, op.body)
    except GitHubUnavailable:
        ours = _ours(read_comments(writer, op.issue), bot_login, head)
        if not ours:  # it did not land: one more try
            writer.create_comment(op.issue, op.body)
            return
    else:
        ours = _ours([*read_comments(writer, op.issue), created], bot_login, head)
    keep = ours[0]
    for duplicate in ours[1:]:
        writer.delete_comment(duplicate.id)
    if created is not None and keep.id != created.id and keep.body.strip() != op.body.strip():
        writer.edit_comment(keep.id, op.body)
