"""The check job: each task's block checked, git's and the other jobs' findings merged, one
sticky comment and its labels per issue; its annotations, summary and exit code."""

from __future__ import annotations

from pathlib import Path

from ai_context.adapters.config import Config
from ai_context.adapters.github import GitHubNotFound
from ai_context.adapters.workflow import Workflow
from ai_context.core.block.parse import parse
from ai_context.core.findings import Finding
from ai_context.core.markdown import escape_cell, escape_text
from ai_context.core.models import Issue
from ai_context.jobs.comments import CheckReport, IssueCheck, run_check
from ai_context.jobs.context import RunContext, threshold_hit
from ai_context.jobs.scan import Judged
from ai_context.jobs.stale import stale_rules, stale_summary
from ai_context.rules.checks import CheckResult
from ai_context.rules.gitlog.compare import compare_block, session_files_changed
from ai_context.rules.runstate import CONFLICT, STALE, Mark, after_writes
from ai_context.rules.session.model import check_session_file
from ai_context.rules.sticky import WriteBudget


def check_job(ctx: RunContext) -> None:
    commits = ctx.route.commits
    repository = ctx.github.repository

    def git_findings(issue: Issue, result: CheckResult) -> list[Finding]:
        # What jobs that ran before check found (the mirror's), and what the pushed commits say.
        earlier = ctx.findings.get(issue.number, [])
        if not commits or result.block is None:
            return earlier
        lines = parse(issue.body).field_lines
        return earlier + compare_block(
            issue.number, result.block, commits, repo=repository, field_lines=lines
        )

    scan = ctx.route.scan_all
    tasks = stale_rules(ctx, ctx.scanned().first_seen if scan else None)
    budget = ctx.writes
    # Room for the run state and, with the digest, its carrier made first, comment and issue.
    budget.reserve = (1 + 3 * ("digest" in ctx.route.jobs)) if scan else 0
    report = run_check(
        _current(ctx),
        ctx.github,
        now=ctx.now,
        config=ctx.settings.check,
        bot_login=ctx.settings.bot_login,
        dry_run=ctx.settings.dry_run,
        log=ctx.workflow.log,
        extra_findings=git_findings,
        tasks=tasks,
        thorough=not ctx.route.scan_all,  # one issue from its event: read its comments
        wrote=ctx.progress.wrote if ctx.progress else None,
        budget=budget,
        started=ctx.scanned().started if scan else None,
    )
    budget.reserve = 0
    kept: dict[int, Mark] = {}
    if scan:  # what the run state remembers of each task (jobs/scan.py)
        scanned = ctx.scanned()
        for check in report.checks:
            after = after_writes(check.issue, check.ops)
            # A task whose writes were left (max-writes) or failed is due at once.
            due = ctx.now if check.deferred or check.failed else check.due
            scanned.judged[after.number] = Judged(after, due, bool(check.ops), _mark(check))
        kept = scanned.remembered()
    ctx.outputs["writes-left"] = str(budget.left)
    if budget.left:
        ctx.workflow.log(f"ai-context: {budget.describe()}")
    session = _session_files(ctx)
    _annotate(report, ctx.workflow)
    ctx.outputs["findings"] = str(report.findings + len(session) + sum(m[0] for m in kept.values()))
    ctx.outputs["errors"] = str(
        report.count("error")
        + sum(1 for f in session if f.severity == "error")
        + sum(m[1] for m in kept.values())
    )
    others = len(ctx.scanned().others) if scan and ctx.scanned().full else None
    ctx.summary.append(_check_summary(report, ctx.settings, others, budget, kept))
    if tasks is not None:
        stale = sum(1 for m in kept.values() if m[3] & STALE)
        ctx.outputs["stale"] = str(report.stale + stale)
        conflicts = sum(1 for m in kept.values() if m[3] & CONFLICT)
        ctx.summary.append(stale_summary(report, stale, conflicts))
    ctx.exit_codes.append(_exit_code(report, ctx.settings, kept))
    _report_failures(report, ctx)
    if session:
        ctx.exit_codes.append(threshold_hit(session, ctx.settings))


def _mark(check: IssueCheck) -> Mark | None:
    """What CHECK's findings add up to, for the run state (None: no findings)."""
    if not check.findings:
        return None
    stale = STALE if check.verdict and check.verdict.stale else 0
    conflict = CONFLICT if check.verdict and check.verdict.conflict else 0
    warnings = sum(1 for f in check.findings if f.severity == "warning")
    return (len(check.findings), check.result.errors, warnings, stale | conflict)


def _report_failures(report: CheckReport, ctx: RunContext) -> None:
    """The writes that failed, one annotation each and a summary list; the run ends in exit 3."""
    if not report.failed:
        return
    for line in report.failed:
        ctx.workflow.annotate("error", line, title="ai-context: GitHub failed")
    listed = "\n".join(f"- {escape_text(line)}" for line in report.failed)
    ctx.summary.append(
        f"**Writes failed on {len(report.failed)} issue(s)** (the next run finishes them):\n\n"
        + listed
    )
    ctx.exit_codes.append(3)


def _current(ctx: RunContext) -> list[Issue]:
    """The run's tasks as GitHub has them now: a payload's issue is a snapshot (a stale
    `comments: 0` would make a second sticky comment), so it is read again, conditionally on
    its updated_at (a 304 costs no rate limit)."""
    from_payload = {issue.number for issue in ctx.route.issues}
    current = []
    for issue in ctx.issues():
        if issue.number not in from_payload:
            current.append(issue)
            continue
        try:
            current.append(ctx.github.get_issue(issue.number, known=issue))
        except GitHubNotFound:
            ctx.workflow.log(f"ai-context: #{issue.number} no longer exists; skipped")
    return current


def _session_files(ctx: RunContext) -> list[Finding]:
    """Committed sp.json files of a push: valid, and free of secrets."""
    findings: list[Finding] = []
    workspace = Path(ctx.workflow_env.get("GITHUB_WORKSPACE") or ".")
    rows = []
    for path in session_files_changed(ctx.route.commits):
        local = workspace / path
        try:
            text = local.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            ctx.workflow.log(
                f"ai-context: {path} is not in the workspace; add actions/checkout to check it"
            )
            continue
        found = check_session_file(path, text)
        findings.extend(found)
        for f in found:
            if f.severity in ("error", "warning"):
                ctx.workflow.annotate(
                    f.severity,
                    f.message,
                    title=f"{f.code} in {path}",
                    file=path,
                    line=str(f.line or 1),
                )
            rows.append(f"| `{path}` | {f.line or ''} | `{f.code}` | {escape_cell(f.message)} |")
    if rows:
        ctx.summary.append(
            "Session files:\n\n| file | line | code | finding |\n|---|---|---|---|\n"
            + "\n".join(rows)
        )
    return findings


def _annotate(report: CheckReport, wf: Workflow) -> None:
    for check in report.checks:
        for finding in check.findings:
            if finding.severity != "error":
                continue
            where = check.issue.html_url or f"#{check.issue.number}"
            wf.annotate(
                "error",
                f"{finding.message} ({where}, line {finding.line or 1})",
                title=f"{finding.code} in #{check.issue.number}",
            )


def _check_summary(
    report: CheckReport,
    settings: Config,
    others: int | None,
    budget: WriteBudget,
    kept: dict[int, Mark],
) -> str:
    """The check's section of the step summary. OTHERS: open issues a full listing showed
    that are no tasks; KEPT: the tasks unchanged since the last run."""
    without = f" ({others} other open issue(s) have no AI Context block: not tasks, left alone)"
    lines = [
        f"Checked {len(report.checks)} task(s)"
        + (without if others else "")
        + f": {report.findings} finding(s), {report.count('error')} error(s)."
        + (" **Dry run: no writes were made.**" if settings.dry_run else "")
    ]
    if kept:
        lines.append(
            f"Unchanged since the last run, their comments as they stand: {len(kept)} task(s) "
            f"with {sum(m[0] for m in kept.values())} finding(s), "
            f"{sum(m[1] for m in kept.values())} error(s)."
        )
    with_findings = [c for c in report.checks if c.findings]
    if with_findings:
        lines += ["", "| issue | findings | worst |", "|---|---|---|"]
        for check in with_findings:
            worst = "error" if check.result.errors else check.findings[0].severity
            title = escape_cell(f"#{check.issue.number} {check.issue.title}")
            link = f"[{title}]({check.issue.html_url})" if check.issue.html_url else title
            lines.append(f"| {link} | {len(check.findings)} | {worst} |")
    if report.stats:
        ops = ", ".join(
            f"{kind.replace('_', ' ')}: {n}" for kind, n in sorted(report.stats.items())
        )
        lines += ["", f"Writes {'planned' if settings.dry_run else 'made'}: {ops}."]
    if budget.left:
        lines += ["", f"**Max-writes:** {budget.describe()}"]
    return "\n".join(lines)


def _exit_code(report: CheckReport, settings: Config, kept: dict[int, Mark]) -> int:
    """The fail-on threshold over this run's findings and those of the unchanged tasks."""
    if settings.fail_on == "error" and any(m[1] for m in kept.values()):
        return 1
    if settings.fail_on == "warning" and any(m[1] or m[2] for m in kept.values()):
        return 1
    return threshold_hit([f for c in report.checks for f in c.findings], settings)
