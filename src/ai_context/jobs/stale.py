"""The stale job's Action glue: the stale rules a run's comment plans judge, the leases they
read, and the job's summary. Stale findings share the check job's one comment per issue, so
every check judges them while the stale job is on; a `stale` run also reads the leases and
counts every actor's tasks."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from datetime import datetime

from ai_context.adapters.github import GitHub
from ai_context.core.block.parse import parse
from ai_context.core.markdown import escape_cell
from ai_context.jobs.comments import CheckReport
from ai_context.jobs.context import RunContext
from ai_context.rules.gitlog.refs import issues_named
from ai_context.rules.lease import LeaseConfig, LeaseError, LeaseRecord, parse_record
from ai_context.rules.stale import Evidence, StaleRules, active_tasks, push_commits


def read_leases(
    reader: GitHub, numbers: Iterable[int], config: LeaseConfig, log: Callable[[str], None]
) -> dict[int, Evidence]:
    """The lease (and the one it replaced) of every issue in NUMBERS: one listing call, then
    a read per lease and per lease it replaced. A ref without a lease record counts as none."""
    wanted = set(numbers)
    found: dict[int, Evidence] = {n: Evidence(leases_read=True) for n in wanted}
    for ref, sha in reader.matching_refs(config.prefix).items():
        number = config.issue_of(ref)
        if number not in wanted or number is None:
            continue
        commit = reader.get_commit(sha)
        try:
            record = parse_record(commit.message)
        except LeaseError as exc:
            log(f"ai-context: {ref} holds no lease record ({exc}); ignored")
            continue
        previous: LeaseRecord | None = None
        if commit.parents:
            with contextlib.suppress(LeaseError):  # history before leases were leases
                previous = parse_record(reader.get_commit(commit.parents[0]).message)
        found[number] = Evidence(lease=record, previous=previous, leases_read=True)
    return found


def stale_rules(ctx: RunContext, seen: datetime | None = None) -> StaleRules | None:
    """The stale rules for this run's comment plans, or None when the stale job is off. SEEN:
    when the scheduled runs first saw the repository's tasks (None: this run cannot tell)."""
    if ctx.settings.jobs != ("auto",) and "stale" not in ctx.settings.jobs:
        return None
    actors, config, leases = ctx.settings.actors, ctx.settings.stale, ctx.settings.lease
    issues = ctx.issues()
    fresh: dict[int, Evidence] = {}
    if "stale" in ctx.route.jobs:
        numbers = [issue.number for issue in issues]
        fresh.update(read_leases(ctx.github, numbers, leases, ctx.workflow.log))
        if ctx.route.scan_all and config.max_active_per_actor is not None:
            blocks = {issue.number: parse(issue.body).block for issue in issues}
            counts = active_tasks(blocks.items(), actors, config)
            for number, block in blocks.items():
                if block is not None and block.actor:
                    active = counts.get(actors.name(block.actor), ())
                    update = {"active": active, "active_actor": block.actor}
                    fresh[number] = fresh.get(number, Evidence()).model_copy(update=update)
    if ctx.event == "push":
        repository = ctx.github.repository
        commits = push_commits(ctx.route.commits, lambda message: issues_named(message, repository))
        for issue in issues:
            mine = tuple(c for c in commits if issue.number in c.issues)
            if mine:
                evidence = fresh.get(issue.number, Evidence())
                fresh[issue.number] = evidence.model_copy(update={"commits": mine})
    return StaleRules(
        config=config,
        actors=actors,
        now=ctx.now,
        fresh=fresh,
        mention=ctx.settings.mention_owners,
        seen=seen,
    )


def stale_summary(report: CheckReport, kept_stale: int = 0, kept_conflicts: int = 0) -> str:
    """The stale job's summary: this run's verdicts, plus the counts KEPT_* of the tasks
    unchanged since the last run."""
    lines = [
        f"Stale tasks: {report.stale + kept_stale}; conflicts: {report.conflicts + kept_conflicts}."
    ]
    for check in report.checks:
        if check.verdict is not None and check.verdict.findings:
            codes = ", ".join(sorted(check.verdict.codes))
            lines.append(f"- #{check.issue.number} {escape_cell(check.issue.title)}: {codes}")
    return "\n".join(lines)
