"""GitHub Actions runtime: event -> issues and jobs, then outputs, summary and annotations.

Routing (`jobs: auto`):
  issues (opened, edited, reopened, labeled, unlabeled) -> check that issue, from the payload;
      skipped quietly when the bot itself sent it, when an edit left the block as it was, or
      when only one of our own labels changed;
  push -> check each issue the pushed commits name, with what the commits say about it
      (gitlog.compare_block), and every committed sp.json session file;
  schedule, workflow_dispatch -> check every open issue that is a task, and look for stale
      and conflicting actors (the `stale` job) in the same comment plan.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from ai_context.actors import parse_actors
from ai_context.block import find, parse
from ai_context.checks import CheckResult
from ai_context.clickup import ClickUpError
from ai_context.config import ConfigError, Settings, load_settings, mask_secrets
from ai_context.digest_job import deliver_digest
from ai_context.findings import Finding
from ai_context.github import (
    DEFAULT_API_URL,
    GitHub,
    GitHubConfigError,
    GitHubError,
    GitHubNotFound,
    issue_from_json,
)
from ai_context.gitlog import (
    Commit,
    PushPayloadError,
    commits_from_push,
    compare_block,
    group_by_issue,
    issues_named,
    session_files_changed,
)
from ai_context.jobs import CheckReport, is_task, read_leases, run_check
from ai_context.lease import parse_lease_config
from ai_context.markdown import escape_cell
from ai_context.mirror import find_link
from ai_context.mirror_job import mirror_job
from ai_context.models import Issue
from ai_context.session import check_session_file
from ai_context.stale import (
    Evidence,
    StaleRules,
    active_tasks,
    parse_stale_config,
    push_commits,
)
from ai_context.workflow import Workflow

ISSUE_ACTIONS = frozenset({"opened", "edited", "reopened", "labeled", "unlabeled"})


@dataclass
class Route:
    """What one event asks for: the jobs, and either given issues or a full scan."""

    jobs: tuple[str, ...]
    issues: list[Issue] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    scan_all: bool = False
    skipped: str = ""
    commits: list[Commit] = field(default_factory=list)  # a push's commits, oldest first


def block_text(body: str) -> str:
    regions = find(body)
    if not regions:
        return ""
    region = regions[0]
    return "\n".join(line.text.rstrip() for line in [region.heading, *region.lines]).strip()


def route(event: str, payload: Mapping[str, Any], settings: Settings, repository: str) -> Route:
    jobs = _jobs_for(event, settings)
    if event == "issues":
        return _route_issue(payload, settings, repository, jobs)
    if event == "push":
        try:
            commits = commits_from_push(payload)
        except PushPayloadError as exc:
            raise ConfigError(f"cannot read the push event: {exc}") from exc
        numbers = list(group_by_issue(commits, repository))
        if not numbers and not session_files_changed(commits):
            return Route(jobs, skipped="no pushed commit names an issue")
        return Route(jobs, numbers=numbers, commits=commits)
    if event in ("schedule", "workflow_dispatch"):
        return Route(jobs, scan_all=True)
    return Route(jobs, skipped=f"event {event!r} is not one ai-context acts on")


def _jobs_for(event: str, settings: Settings) -> tuple[str, ...]:
    if settings.jobs != ("auto",):
        unknown = [j for j in settings.jobs if j not in JOBS and j != "auto"]
        if unknown:
            raise ConfigError(
                f"setting jobs: {', '.join(unknown)} is not available in this version; "
                f"available: {', '.join(JOBS)}"
            )
        return tuple(j for j in JOBS if j in settings.jobs)  # in JOBS order
    return AUTO_JOBS.get(event, ())


def _route_issue(
    payload: Mapping[str, Any], settings: Settings, repository: str, jobs: tuple[str, ...]
) -> Route:
    action = str(payload.get("action") or "")
    sender = str((payload.get("sender") or {}).get("login") or "")
    if action not in ISSUE_ACTIONS:
        return Route(jobs, skipped=f"issues.{action} needs no check")
    if sender.lower() == settings.bot_login.lower():
        return Route(jobs, skipped="the bot's own change")
    data = payload.get("issue") or {}
    if "pull_request" in data:
        return Route(jobs, skipped="a pull request, not an issue")
    if action in ("labeled", "unlabeled"):
        name = str((payload.get("label") or {}).get("name") or "")
        if name.startswith("ai-context:"):
            return Route(jobs, skipped=f"only our own label {name} changed")
    issue = issue_from_json(dict(data), repository)
    if action == "edited":
        changes = payload.get("changes") or {}
        body_change = changes.get("body")
        old_body = str(body_change.get("from") or "") if body_change is not None else issue.body
        if block_text(old_body) == block_text(issue.body):
            # The block is as it was: nothing to check. The mirror still shows the title and
            # follows the ClickUp link, so a change to either is mirrored on its own.
            moved = "title" in changes or find_link(old_body) != find_link(issue.body)
            if moved and "mirror" in jobs and settings.clickup_token is not None:
                return Route(("mirror",), issues=[issue])
            what = "did not touch the body" if body_change is None else "left the block as it was"
            return Route(jobs, skipped=f"the edit {what}")
    return Route(jobs, issues=[issue])


@dataclass
class RunContext:
    """Everything a job needs in an Action run; jobs add to outputs, summary and stats."""

    settings: Settings
    extras: dict[str, Any] = field(repr=False)
    github: GitHub
    workflow: Workflow
    now: datetime
    route: Route
    outputs: dict[str, str] = field(default_factory=dict)
    summary: list[str] = field(default_factory=list)
    api_calls: dict[str, Callable[[], int]] = field(default_factory=dict)
    exit_codes: list[int] = field(default_factory=list)
    event: str = ""
    payload: dict[str, Any] = field(default_factory=dict, repr=False)
    # The environment holds the tokens: never in a repr, a log line or a traceback's locals.
    workflow_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    github_api_url: str = DEFAULT_API_URL
    # Findings jobs that run before check add to an issue's sticky comment (e.g. the mirror's).
    findings: dict[int, list[Finding]] = field(default_factory=dict)
    _issues: list[Issue] | None = None
    _open: list[Issue] | None = None

    def open_issues(self) -> list[Issue]:
        """Every open issue of the repository, listed once per run (100 a page)."""
        if self._open is None:
            self._open = self.github.list_issues("open")
        return self._open

    def issues(self) -> list[Issue]:
        """The tasks this run is about, fetched once and shared by every job."""
        if self._issues is None:
            if self.route.scan_all:
                self._issues = [issue for issue in self.open_issues() if is_task(issue)]
            else:
                self._issues = _issues_for(self.route, self.github, self.workflow)
        return self._issues


Job = Callable[[RunContext], None]


def check_job(ctx: RunContext) -> None:
    commits = ctx.route.commits
    repository = ctx.github.repository

    def git_findings(issue: Issue, result: CheckResult) -> list[Finding]:
        # What the pushed commits say about the task, beside what its block says (issue 8),
        # and what jobs that ran before check found (the mirror's, issue 4).
        earlier = ctx.findings.get(issue.number, [])
        if not commits or result.block is None:
            return earlier
        parsed = parse(issue.body)
        return earlier + compare_block(
            issue.number, result.block, commits, repo=repository, field_lines=parsed.field_lines
        )

    tasks = stale_rules(ctx)
    report = run_check(
        ctx.issues(),
        ctx.github,
        now=ctx.now,
        config=ctx.settings.check_config,
        bot_login=ctx.settings.bot_login,
        dry_run=ctx.settings.dry_run,
        log=ctx.workflow.log,
        extra_findings=git_findings,
        tasks=tasks,
        thorough=not ctx.route.scan_all,  # one issue from its event: read its comments
    )
    session = _session_files(ctx)
    _annotate(report, ctx.workflow)
    ctx.outputs["findings"] = str(report.findings + len(session))
    ctx.outputs["errors"] = str(
        report.count("error") + sum(1 for f in session if f.severity == "error")
    )
    ctx.summary.append(_check_summary(report, ctx.settings))
    if tasks is not None:
        ctx.outputs["stale"] = str(report.stale)
        ctx.summary.append(_stale_summary(report))
    ctx.exit_codes.append(_exit_code(report, ctx.settings))
    if session:
        ctx.exit_codes.append(_threshold_hit(session, ctx.settings))


def _session_files(ctx: RunContext) -> list[Finding]:
    """Committed sp.json files of a push: valid, and free of secrets (issue 8, item 5)."""
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


def digest_job(ctx: RunContext) -> None:
    """Shipped / in review / in progress / stuck, to the digest issue, Slack and the summary."""
    if not ctx.route.scan_all:
        ctx.workflow.log("ai-context: the digest runs on schedule and workflow_dispatch only")
        return
    settings = ctx.settings

    def other(repo: str) -> GitHub:
        assert settings.github_token is not None
        adapter = GitHub(
            settings.github_token,
            repo,
            api_url=ctx.github_api_url,
            write_interval=settings.write_interval,
            retries=settings.http_retries,
            backoff=settings.http_backoff,
            counter=ctx.github.counter,
        )
        return adapter

    outcome = deliver_digest(
        github=ctx.github,
        settings=settings,
        extras=ctx.extras,
        open_issues=ctx.open_issues(),
        tasks=ctx.issues(),
        now=ctx.now,
        workspace=Path(ctx.workflow_env.get("GITHUB_WORKSPACE") or "."),
        other_repos=other,
        log=ctx.workflow.log,
    )
    ctx.outputs["digest-url"] = outcome.url
    ctx.summary.append(outcome.markdown)
    if outcome.slack is not None:
        slack_calls = outcome.slack.calls
        ctx.api_calls["Slack"] = lambda: slack_calls
    for error in outcome.errors:
        ctx.workflow.annotate("error", error, title="ai-context: digest delivery failed")
        ctx.exit_codes.append(3)


# Jobs by name, in the order they run, and the ones `jobs: auto` runs for each event. Other
# jobs register here. Jobs that add findings to the sticky comment come before check.
# --- the stale job ---------------------------------------------------------------------------
# Stale and conflict findings share the check job's one comment and label plan per issue:
# whenever the stale job is enabled, every check judges the stale rules too (so the comment
# never flips between runs), with the evidence this run can gather; a `stale` run (schedule,
# on demand) is the one that reads the leases and counts every actor's tasks.


def stale_enabled(settings: Settings) -> bool:
    return settings.jobs == ("auto",) or "stale" in settings.jobs


def stale_rules(ctx: RunContext) -> StaleRules | None:
    """The stale rules for this run's comment plans, or None when the stale job is off."""
    if not stale_enabled(ctx.settings):
        return None
    source, extras = ctx.settings.config, ctx.extras
    actors = parse_actors(extras.get("actors"), source)
    config = parse_stale_config(extras.get("stale"), source, ctx.settings.stale_after)
    leases = parse_lease_config(extras.get("lease"), source)
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
        commits = push_commits(ctx.payload, lambda message: issues_named(message, repository))
        for issue in issues:
            mine = tuple(c for c in commits if issue.number in c.issues)
            if mine:
                evidence = fresh.get(issue.number, Evidence())
                fresh[issue.number] = evidence.model_copy(update={"commits": mine})
    return StaleRules(config=config, actors=actors, now=ctx.now, fresh=fresh)


def stale_job(ctx: RunContext) -> None:
    if "check" in ctx.route.jobs:
        return  # the check job's plan already carries the stale findings: one comment
    check_job(ctx)


def _stale_summary(report: CheckReport) -> str:
    flagged = [c for c in report.checks if c.verdict is not None and c.verdict.findings]
    lines = [f"Stale tasks: {report.stale}; conflicts: {report.conflicts}."]
    for check in flagged:
        assert check.verdict is not None
        codes = ", ".join(sorted(check.verdict.codes))
        lines.append(f"- #{check.issue.number} {escape_cell(check.issue.title)}: {codes}")
    return "\n".join(lines)


JOBS: dict[str, Job] = {
    "mirror": mirror_job,
    "check": check_job,
    "stale": stale_job,
    "digest": digest_job,
}
AUTO_JOBS: dict[str, tuple[str, ...]] = {
    "issues": ("mirror", "check"),
    "push": ("mirror", "check"),
    "schedule": ("mirror", "check", "stale", "digest"),
    "workflow_dispatch": ("mirror", "check", "stale", "digest"),
}


def run_action(env: Mapping[str, str] | None = None, stream: TextIO | None = None) -> int:
    """The Action's main: every failure ends in an exit code and a message that says why."""
    env = os.environ if env is None else env
    wf = Workflow(env, stream)
    try:
        return _run(env, wf)
    except ConfigError as exc:
        wf.annotate("error", str(exc), title="ai-context: bad configuration")
        return 2
    except GitHubConfigError as exc:
        wf.annotate("error", str(exc), title="ai-context: GitHub refused")
        return 2
    except (GitHubError, ClickUpError) as exc:
        service = "ClickUp" if isinstance(exc, ClickUpError) else "GitHub"
        wf.annotate("error", str(exc), title=f"ai-context: {service} failed")
        return 3
    except Exception as exc:  # a bug of ours: say so plainly, never as a findings exit (1)
        traceback.print_exc(file=sys.stderr)
        wf.annotate(
            "error",
            f"ai-context stopped on an unexpected {type(exc).__name__}: {exc}. Please report it "
            "with this log.",
            title="ai-context: internal error",
        )
        return 3


def _run(env: Mapping[str, str], wf: Workflow) -> int:
    workspace = Path(env.get("GITHUB_WORKSPACE") or ".")
    settings, extras = load_settings(env, workspace)
    for command in mask_secrets(settings):
        wf.stream.write(command + "\n")
    event = env.get("GITHUB_EVENT_NAME", "")
    repository = env.get("GITHUB_REPOSITORY", "")
    if settings.github_token is None:
        raise ConfigError(
            "setting github-token is empty: pass `github-token: ${{ github.token }}` "
            "(or a PAT) to the action"
        )
    if not event or not repository:
        raise ConfigError(
            "GITHUB_EVENT_NAME and GITHUB_REPOSITORY are not set: run this inside GitHub "
            "Actions, or use the CLI commands locally"
        )
    github = GitHub(
        settings.github_token,
        repository,
        api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL,
        write_interval=settings.write_interval,
        retries=settings.http_retries,
        backoff=settings.http_backoff,
    )
    payload = _payload(env)
    ctx = RunContext(
        settings=settings,
        extras=extras,
        github=github,
        workflow=wf,
        now=settings.now or datetime.now(UTC),
        route=route(event, payload, settings, repository),
        outputs={"findings": "0", "errors": "0", "stale": "0", "mirrored": "0", "digest-url": ""},
        workflow_env=env,
        event=event,
        payload=payload,
        github_api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL,
    )
    ctx.api_calls["GitHub"] = lambda: github.counter.total
    try:
        if ctx.route.skipped:
            wf.log(f"ai-context: nothing to do ({ctx.route.skipped})")
            ctx.summary.append(f"Nothing to do: {ctx.route.skipped}.")
        else:
            if settings.dry_run:
                wf.log("ai-context: dry run: no writes will be made")
            for name in ctx.route.jobs:
                wf.group(f"ai-context {name}")
                try:
                    JOBS[name](ctx)
                finally:
                    wf.endgroup()
    except Exception as exc:
        ctx.summary.append(f"**Stopped:** {escape_cell(str(exc))}")
        raise
    finally:
        _finish(ctx, github, wf)
    return max(ctx.exit_codes, default=0)


def _finish(ctx: RunContext, github: GitHub, wf: Workflow) -> None:
    """Outputs, summary and the calls line: written whether the jobs finished or not."""
    calls = {service: count() for service, count in ctx.api_calls.items()}
    ctx.outputs["api-calls"] = str(sum(calls.values()))
    wf.set_outputs(ctx.outputs)
    wf.summary("\n\n".join(["## ai-context", *ctx.summary]) + "\n")
    limit = github.rate_limit
    left = f"; GitHub rate limit {limit[0]}/{limit[1]} left" if limit else ""
    per_service = ", ".join(f"{service} {n}" for service, n in calls.items())
    wf.log(f"ai-context: API calls: {per_service} ({github.counter.retries} GitHub retries){left}")


def _payload(env: Mapping[str, str]) -> dict[str, Any]:
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the event payload {path}: {exc}") from exc
    return data if isinstance(data, dict) else {}


def _issues_for(plan: Route, github: GitHub, wf: Workflow) -> list[Issue]:
    issues = list(plan.issues)
    for number in plan.numbers:
        try:
            issue = github.get_issue(number)
        except GitHubNotFound:
            wf.log(f"ai-context: #{number} named by a commit does not exist; skipped")
            continue
        if issue.is_pull_request:  # "Merge pull request #7" names a PR, not a task
            wf.log(f"ai-context: #{number} named by a commit is a pull request; skipped")
            continue
        issues.append(issue)
    return [issue for issue in issues if is_task(issue)]


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


def _check_summary(report: CheckReport, settings: Settings) -> str:
    lines = [
        f"Checked {len(report.checks)} issue(s): {report.findings} finding(s), "
        f"{report.count('error')} error(s)."
        + (" **Dry run: no writes were made.**" if settings.dry_run else "")
    ]
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
    return "\n".join(lines)


def _exit_code(report: CheckReport, settings: Settings) -> int:
    return _threshold_hit([f for c in report.checks for f in c.findings], settings)


def _threshold_hit(findings: Sequence[Finding], settings: Settings) -> int:
    """1 when a finding reaches the user's fail-on threshold, else 0."""
    levels = {"error": ("error",), "warning": ("error", "warning")}.get(settings.fail_on, ())
    return 1 if any(f.severity in levels for f in findings) else 0


__all__ = ["GitHubError", "route", "run_action"]
