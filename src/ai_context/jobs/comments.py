"""The sticky comment and labels of each task: pure planning over plain models, then one place
that applies the writes (the check and stale jobs share it, so an issue gets one comment)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from ai_context.adapters import github_graphql
from ai_context.adapters.github import GitHub, GitHubNoAnswer, GitHubNotFound, GitHubUnavailable
from ai_context.core.findings import Finding
from ai_context.core.hidden import find_hidden
from ai_context.core.models import Comment, Issue
from ai_context.jobs.mention import plan_mention
from ai_context.jobs.settle import Created, head, ours, settle, settle_all
from ai_context.rules.checks import CheckConfig, CheckResult, check_body, next_change
from ai_context.rules.stale import StaleRules, Verdict
from ai_context.rules.sticky import (
    Op,
    WriteBudget,
    dry_run_text,
    needs_comments,
    plan_comment,
    plan_labels,
    sticky_comment,
)

# Findings about the task beyond its block (stale.StaleRules): given the issue, its block
# check and what the sticky comment remembers, the verdict to merge into the one comment.
TaskRules = Callable[[Issue, CheckResult, Mapping[str, Any] | None], Verdict]
ExtraFindings = Callable[[Issue, CheckResult], Sequence[Finding]]


@dataclass
class IssueCheck:
    issue: Issue
    result: CheckResult
    ops: list[Op] = field(default_factory=list)
    verdict: Verdict | None = None  # the stale rules' verdict, when they ran
    sticky: Comment | None = None  # the sticky comment a read found (a dry run shows it)
    due: datetime | None = None  # when time alone next changes the findings (the run state)
    deferred: bool = False  # its writes were left for the next run (max-writes)
    failed: bool = False  # a write failed: the next run reads it and makes what is missing

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.result.findings


@dataclass
class CheckReport:
    checks: list[IssueCheck]
    stats: Counter[str] = field(default_factory=Counter)
    failed: list[str] = field(default_factory=list)  # one line per issue whose write failed

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


@dataclass
class Assessed:
    """plan_check's first half: an issue's findings, and whether its comments must be read
    (READ), so a run can read the comments of all its issues at once (read_many)."""

    issue: Issue
    result: CheckResult
    verdict: Verdict | None
    extra: tuple[Finding, ...]
    read: bool
    now: datetime


def assess(
    issue: Issue,
    *,
    now: datetime,
    config: CheckConfig,
    extra_findings: ExtraFindings | None = None,
    tasks: TaskRules | None = None,
    thorough: bool = False,
) -> Assessed:
    result = check_body(issue.body, now=now, config=config)
    if result.block is None:  # not a task (any more): nothing to report, only to clear
        result = CheckResult(block=None, findings=(), complete=False)
    task = result.block is not None
    verdict = tasks(issue, result, None) if tasks and task else None
    extra = tuple(extra_findings(issue, result)) if extra_findings and task else ()
    read = needs_comments(issue, _by_line([*_merge(result, verdict), *extra]), thorough=thorough)
    return Assessed(issue, result, verdict, extra, read, now)


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
    """What the check job would write for one issue; reads COMMENTS only when it must. With
    TASKS (the stale rules), their findings join the block's in the one comment and labels;
    EXTRA_FINDINGS (git, the ClickUp mirror) join the comment only: the labels speak of the
    block and the task."""
    found = assess(
        issue, now=now, config=config, extra_findings=extra_findings, tasks=tasks, thorough=thorough
    )
    listed = comments(issue.number) if found.read else None
    return finish(found, listed, bot_login=bot_login, config=config, tasks=tasks)


def finish(
    found: Assessed,
    listed: list[Comment] | None,
    *,
    bot_login: str,
    config: CheckConfig,
    tasks: TaskRules | None = None,
) -> IssueCheck:
    """plan_check's second half: the writes, given the comments LISTED (None: not read). The
    sticky comment's hidden state (what earlier runs gathered) feeds the stale rules."""
    issue, result, verdict = found.issue, found.result, found.verdict
    sticky = sticky_comment(listed or [], bot_login)
    remembered = find_hidden(sticky.body) if sticky else None
    if tasks and result.block is not None and remembered:
        verdict = tasks(issue, result, remembered)
    findings = _merge(result, verdict)
    shown = _by_line([*findings, *found.extra])
    ops = plan_labels(issue, findings)
    if listed is not None or shown:
        notes, state, mention = plan_mention(
            issue.number,
            block=result.block,
            verdict=verdict,
            listed=listed or [],
            remembered=remembered,
            bot_login=bot_login,
        )
        planned = plan_comment(
            issue.number, shown, listed or [], bot_login, notes=notes, state=state
        )
        # The mention before the sticky comment's edit: the edit's state says the owner was
        # told, so a run stopped between the two (max-writes) must not have made the edit alone.
        ops = mention + planned + ops
    checked = IssueCheck(issue, replace(result, findings=shown), ops, verdict, sticky=sticky)
    times = [next_change(result.block, found.now, config)]
    if isinstance(tasks, StaleRules):
        times.append(tasks.next_change(issue, result, remembered))
    checked.due = min((t for t in times if t is not None), default=None)
    return checked


def _by_line(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    return tuple(sorted(findings, key=lambda f: (f.line or 0, f.code)))


def _merge(result: CheckResult, verdict: Verdict | None) -> tuple[Finding, ...]:
    if verdict is None:
        return result.findings
    drop = verdict.supersedes
    return _by_line([f for f in result.findings if f.code not in drop] + list(verdict.findings))


def run_check(
    issues: Sequence[Issue],
    writer: GitHub,
    *,
    now: datetime,
    config: CheckConfig,
    bot_login: str,
    dry_run: bool,
    log: Callable[[str], None],
    extra_findings: ExtraFindings | None = None,
    tasks: TaskRules | None = None,
    thorough: bool = False,
    wrote: Callable[[], None] | None = None,
    budget: WriteBudget | None = None,
    started: datetime | None = None,
) -> CheckReport:
    """Plan and apply each issue's writes, the comments due a read read together first
    (read_many). A scan (not THOROUGH) settles its new comments' races at the end (settle_all,
    from STARTED); BUDGET (max-writes) defers the writes past it (IssueCheck.deferred)."""
    report = CheckReport([])
    started = started or datetime.now(UTC)
    deferred: list[Created] | None = None if thorough or dry_run else []
    kwargs: dict[str, Any] = dict(
        now=now, config=config, extra_findings=extra_findings, tasks=tasks, thorough=thorough
    )
    assessed = [assess(issue, **kwargs) for issue in issues]
    listings = read_many(writer, [found.issue.number for found in assessed if found.read], log)
    apply_kw: dict[str, Any] = dict(dry_run=dry_run, log=log, deferred=deferred, wrote=wrote)
    for found in assessed:
        issue = found.issue
        listed = listings.get(issue.number)
        planned = finish(found, listed, bot_login=bot_login, config=config, tasks=tasks)
        _within(planned, budget)
        try:
            try:
                _apply_all(planned, writer, bot_login, **apply_kw)
            except GitHubNotFound:
                # What the plan wrote against is gone: a comment the run read minutes ago (a
                # scan reads first), or the issue itself. Read again, once.
                log(f"ai-context: what #{issue.number} had when read is gone; reading it again")
                comments = writer.list_comments
                planned = plan_check(issue, bot_login=bot_login, comments=comments, **kwargs)
                _apply_all(planned, writer, bot_login, **apply_kw)
        except GitHubNotFound:
            log(f"ai-context: #{issue.number} is gone (deleted or moved); skipped")
            continue
        except GitHubUnavailable as exc:
            # One issue's write failed: say so and go on; the run ends in exit 3 with the list,
            # and the next run reads the issue and finishes it.
            message = f"#{issue.number}: {exc}"
            log(f"ai-context: a write failed on {message}; going on with the other issues")
            report.failed.append(message)
            planned.failed = True
        report.checks.append(planned)
        report.stats.update(op.kind for op in planned.ops)
        if budget is not None:
            budget.spend(len(planned.ops))
    if deferred:
        settle_all(writer, deferred, started, bot_login)
    return report


def _within(planned: IssueCheck, budget: WriteBudget | None) -> None:
    """Keep the writes of PLANNED that BUDGET still allows, in order, and leave the rest to the
    next run (which plans them again from what GitHub then holds). Once a task's writes are
    left, so are those of every task after it: the next run starts there."""
    if budget is None or not planned.ops:
        return
    room = 0 if budget.left else max(0, budget.room)
    if room >= len(planned.ops):
        return
    budget.left += len(planned.ops) - room
    budget.left_tasks += 1
    planned.ops = planned.ops[:room]
    planned.deferred = True


def _apply_all(
    planned: IssueCheck,
    writer: GitHub,
    bot_login: str,
    *,
    dry_run: bool,
    log: Callable[[str], None],
    deferred: list[Created] | None = None,
    wrote: Callable[[], None] | None = None,
) -> None:
    for op in planned.ops:
        if dry_run:
            now = planned.sticky.body if planned.sticky is not None else None
            log(dry_run_text(op, now if op.kind == "edit_comment" else None))
            continue
        apply(op, writer, bot_login, deferred, log)
        log(op.describe())
        if wrote is not None:
            wrote()


def apply(
    op: Op,
    writer: GitHub,
    bot_login: str,
    deferred: list[Created] | None = None,
    log: Callable[[str], None] | None = None,
) -> None:
    """Make one write. With DEFERRED, a creation's race is settled later (settle_all), not by
    a listing now."""
    if op.kind == "create_comment":
        _create_once(op, writer, bot_login, deferred, log)
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


def read_many(
    writer: GitHub, numbers: Sequence[int], log: Callable[[str], None]
) -> dict[int, list[Comment]]:
    """The comments of issues NUMBERS: one GraphQL query per 100 issues when two or more are
    due (one REST listing costs as much as one query), else one REST listing each. An issue
    the query could not answer whole is read by REST, with one log line a failure."""
    if len(numbers) < 2:
        return {number: writer.list_comments(number) for number in numbers}
    got = github_graphql.read_comments(writer, numbers)
    for problem in got.problems:
        log(f"ai-context: {problem}; reading those issues' comments one by one")
    return {**got.comments, **{number: writer.list_comments(number) for number in got.unread}}


def _create_once(
    op: Op,
    writer: GitHub,
    bot_login: str,
    deferred: list[Created] | None = None,
    log: Callable[[str], None] | None = None,
) -> None:
    """Create a marked comment, then list once (settle): a failed POST may have landed and a
    racing run may have made its own, so the oldest stays. A POST with no answer is not sent
    again (it may land after the listing). With DEFERRED, settled at the end of the run."""
    assert op.body is not None
    marker = head(op.body)
    try:
        created = writer.create_comment(op.issue, op.body)
    except GitHubUnavailable as exc:
        found = ours(writer.list_comments(op.issue), bot_login, marker)
        if found:  # it landed after all (or another run's did): one stays
            settle(found, None, op.body, writer)
        elif isinstance(exc, GitHubNoAnswer):
            raise  # still on its way, maybe: the next run's read finds it, or posts it
        else:  # it did not land: one more try
            writer.create_comment(op.issue, op.body)
        return
    if log is not None and created.author and created.author.lower() != bot_login.lower():
        log(
            f"ai-context: warning: comments are written as {created.author}, but bot-login "
            f"is {bot_login}; set `bot-login: {created.author}` so each run finds its "
            "comment instead of creating and then removing a new one"
        )
    if deferred is not None:
        deferred.append(Created(op.issue, op.body, created))
        return
    # The comment this run made is ours whoever the token is (a personal token writes as its
    # user, not as bot-login); earlier ones by that login are ours too.
    listed = [*writer.list_comments(op.issue), created]
    settle(ours(listed, bot_login, marker, also=created.author), created, op.body, writer)
