"""The `mirror` job of an Action run, and its section of the step summary."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ai_context.adapters import clients
from ai_context.adapters.clickup import ClickUpCounter
from ai_context.adapters.templates import user_templates
from ai_context.core.markdown import escape_cell
from ai_context.jobs.mirror.run import MirrorReport, run_mirror
from ai_context.rules.mirror.link import find_link

if TYPE_CHECKING:
    from ai_context.adapters.clients import OnWait
    from ai_context.adapters.config import Config
    from ai_context.core.models import Issue
    from ai_context.jobs.context import RunContext

SUMMARY_ROWS = 50


def mirror_job(ctx: RunContext) -> None:
    """The `mirror` job of an Action run (jobs/registry.py). Runs before `check`, which writes
    its per-issue findings into each sticky comment; a ClickUp failure is an exit code, not an
    exception, so the check job still runs."""
    settings = ctx.settings
    issues = ctx.issues()
    if settings.clickup_token is None:
        linked = sum(1 for i in issues if find_link(i.body, settings.clickup_team_id))
        if linked:
            line = (
                f"{linked} issue(s) link a ClickUp task, but the clickup-token input is empty: "
                "nothing was mirrored"
            )
            ctx.workflow.log(f"ai-context mirror: {line}")
            ctx.summary.append(f"### ClickUp mirror\n\n{line}.")
        return
    workspace = Path(ctx.workflow_env.get("GITHUB_WORKSPACE") or ".")
    report, counter = mirror_issues(
        ctx.issues,
        settings,
        workspace,
        # Pages of current values when the run listed every open issue (no usable run state,
        # a week since the last full listing, or `full: true`): the bounded full rebuild that
        # heals values changed by hand in ClickUp. Else only the tasks that changed.
        full=ctx.route.scan_all and bool(ctx.scanned().full),
        dry_run=settings.dry_run,
        log=ctx.workflow.log,
        on_wait=ctx.progress.waiting if ctx.progress else None,
        calls=ctx.api_calls,
    )
    for number, findings in report.findings.items():
        ctx.findings.setdefault(number, []).extend(findings)
    _annotate(ctx, report)
    ctx.outputs["mirrored"] = str(report.count("written"))
    ctx.summary.append(summary(report, counter, dry_run=settings.dry_run))
    ctx.exit_codes.append(report.exit_code)


def mirror_issues(
    issues: Callable[[], Sequence[Issue]],
    settings: Config,
    workspace: Path,
    *,
    log: Callable[[str], None],
    full: bool = False,
    dry_run: bool = False,
    on_wait: OnWait | None = None,
    calls: dict[str, Callable[[], int]] | None = None,
) -> tuple[MirrorReport, ClickUpCounter]:
    """Mirror the ISSUES (asked for once the templates under WORKSPACE are known good) with the
    SETTINGS' ClickUp client (its token set), section and actors, for the Action, the CLI and an
    agent's write.
    CALLS, when given, counts the ClickUp calls as they happen (a stopped run still says them)."""
    templates = user_templates(workspace, settings.templates)
    assert settings.clickup_token is not None  # every caller says first how to set it
    store = clients.clickup(
        settings.clickup_token,
        api_url=settings.clickup_api_url,
        http=settings.http,
        on_wait=on_wait,
    )
    if calls is not None:
        calls["ClickUp"] = lambda: store.counter.total
    report = run_mirror(
        issues(),
        store,
        config=settings.mirror,
        templates=templates,
        team_id=settings.clickup_team_id,
        full=full,
        dry_run=dry_run,
        log=log,
        actors=settings.actors,
    )
    return report, store.counter


def _annotate(ctx: RunContext, report: MirrorReport) -> None:
    wf = ctx.workflow
    for message in report.errors:
        wf.annotate("error", message, title="ai-context mirror: ClickUp")
    for message in report.notes:
        wf.annotate("notice", message, title="ai-context mirror")
    # The check job annotates the errors of every sticky comment; say the rest here.
    check_runs = "check" in ctx.route.jobs
    for number, findings in sorted(report.findings.items()):
        for finding in findings:
            if check_runs and finding.severity == "error":
                continue
            level = "error" if finding.severity == "error" else "warning"
            wf.annotate(
                level, f"{finding.message} (#{number})", title=f"{finding.code} in #{number}"
            )


def summary(report: MirrorReport, counter: ClickUpCounter, *, dry_run: bool) -> str:
    """The job's section of the step summary."""
    n = report.count
    written = f"{n('would_write')} would be written" if dry_run else f"{n('written')} written"
    lines = [
        "### ClickUp mirror",
        "",
        f"{len(report.items)} linked issue(s): {written}, {n('unchanged')} unchanged, "
        f"{n('not_found')} task(s) not found, {n('no_field')} without the field, "
        f"{n('skipped')} skipped. ClickUp calls: {counter.reads} reads, {counter.writes} "
        f"writes ({counter.retries} retries, {counter.waited:.0f}s waited for rate limits)."
        + (" **Dry run: no writes were made.**" if dry_run else ""),
    ]
    lines += [""] + [f"- {note}" for note in report.notes] if report.notes else []
    lines += [""] + [f"- **error:** {err}" for err in report.errors] if report.errors else []
    rows = [i for i in report.items if i.result not in ("unchanged", "skipped")]
    if rows:
        lines += ["", "| issue | ClickUp task | result |", "|---|---|---|"]
        for item in rows[:SUMMARY_ROWS]:
            issue = item.target.issue
            title = escape_cell(f"#{issue.number} {issue.title}")
            link = f"[{title}]({issue.html_url})" if issue.html_url else title
            task = escape_cell(item.task_id)
            lines.append(f"| {link} | {task} | {item.result.replace('_', ' ')} |")
        if len(rows) > SUMMARY_ROWS:
            lines.append(f"\n… and {len(rows) - SUMMARY_ROWS} more.")
    return "\n".join(lines)
