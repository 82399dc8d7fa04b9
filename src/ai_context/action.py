"""GitHub Actions runtime: event -> issues and jobs, then outputs, summary and annotations.

Routing (`jobs: auto`):
  issues (opened, edited, reopened, labeled, unlabeled) -> check that issue, from the payload;
      skipped quietly when the bot itself sent it, when an edit left the block as it was, or
      when only one of our own labels changed;
  push -> check each issue the pushed commits name;
  schedule, workflow_dispatch -> check every open issue that is a task, and look for stale
      and conflicting actors (the `stale` job) in the same comment plan.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from ai_context.actors import parse_actors
from ai_context.block import find, parse
from ai_context.config import ConfigError, Settings, load_settings, mask_secrets
from ai_context.github import (
    DEFAULT_API_URL,
    GitHub,
    GitHubConfigError,
    GitHubError,
    GitHubNotFound,
    GitHubUnavailable,
    issue_from_json,
)
from ai_context.jobs import CheckReport, is_task, read_leases, run_check
from ai_context.lease import parse_lease_config
from ai_context.markdown import escape_cell
from ai_context.models import Issue
from ai_context.stale import (
    Evidence,
    StaleRules,
    active_tasks,
    parse_stale_config,
    push_commits,
)
from ai_context.workflow import Workflow

ISSUE_ACTIONS = frozenset({"opened", "edited", "reopened", "labeled", "unlabeled"})
_ISSUE_REF = re.compile(
    r"(?:^|[\s(\[,;])(?:(?:refs?|fix(?:e[sd])?|close[sd]?|resolve[sd]?)\s*:?\s+)?#(\d{1,9})\b",
    re.IGNORECASE,
)
_TRAILER = re.compile(r"^AI-Context-Issue:\s*#?(\d{1,9})\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass
class Route:
    """What one event asks for: the jobs, and either given issues or a full scan."""

    jobs: tuple[str, ...]
    issues: list[Issue] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    scan_all: bool = False
    skipped: str = ""


def block_text(body: str) -> str:
    regions = find(body)
    if not regions:
        return ""
    region = regions[0]
    return "\n".join(line.text.rstrip() for line in [region.heading, *region.lines]).strip()


def issues_named(message: str) -> list[int]:
    """`#N`, `Refs #N`, `Fixes #N` ... and the trailer `AI-Context-Issue: N`, in order."""
    seen: dict[int, None] = {}
    for match in _ISSUE_REF.finditer(message):
        seen.setdefault(int(match.group(1)), None)
    for match in _TRAILER.finditer(message):
        seen.setdefault(int(match.group(1)), None)
    return list(seen)


def route(event: str, payload: Mapping[str, Any], settings: Settings, repository: str) -> Route:
    jobs = _jobs_for(event, settings)
    if event == "issues":
        return _route_issue(payload, settings, repository, jobs)
    if event == "push":
        numbers: dict[int, None] = {}
        for commit in payload.get("commits") or ():
            for number in issues_named(str(commit.get("message") or "")):
                numbers.setdefault(number, None)
        if not numbers:
            return Route(jobs, skipped="no pushed commit names an issue")
        return Route(jobs, numbers=list(numbers))
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
        return tuple(j for j in settings.jobs if j != "auto")
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
        body_change = (payload.get("changes") or {}).get("body")
        if body_change is None:
            return Route(jobs, skipped="the edit did not touch the body")
        if block_text(str(body_change.get("from") or "")) == block_text(issue.body):
            return Route(jobs, skipped="the edit left the AI Context block as it was")
    return Route(jobs, issues=[issue])


@dataclass
class RunContext:
    """Everything a job needs in an Action run; jobs add to outputs, summary and stats."""

    settings: Settings
    extras: dict[str, Any]
    github: GitHub
    workflow: Workflow
    now: datetime
    route: Route
    outputs: dict[str, str] = field(default_factory=dict)
    summary: list[str] = field(default_factory=list)
    api_calls: dict[str, Callable[[], int]] = field(default_factory=dict)
    exit_codes: list[int] = field(default_factory=list)
    event: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    _issues: list[Issue] | None = None

    def issues(self) -> list[Issue]:
        """The tasks this run is about, fetched once and shared by every job."""
        if self._issues is None:
            self._issues = _issues_for(self.route, self.github, self.workflow)
        return self._issues


Job = Callable[[RunContext], None]


def check_job(ctx: RunContext) -> None:
    tasks = stale_rules(ctx)
    report = run_check(
        ctx.issues(),
        ctx.github,
        now=ctx.now,
        config=ctx.settings.check_config,
        bot_login=ctx.settings.bot_login,
        dry_run=ctx.settings.dry_run,
        log=ctx.workflow.log,
        tasks=tasks,
    )
    _annotate(report, ctx.workflow)
    ctx.outputs["findings"] = str(report.findings)
    ctx.outputs["errors"] = str(report.count("error"))
    ctx.summary.append(_check_summary(report, ctx.settings))
    if tasks is not None:
        ctx.outputs["stale"] = str(report.stale)
        ctx.summary.append(_stale_summary(report))
    ctx.exit_codes.append(_exit_code(report, ctx.settings))


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
        commits = push_commits(ctx.payload, issues_named)
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


# Jobs by name, and the ones `jobs: auto` runs for each event. Other jobs register here.
JOBS: dict[str, Job] = {"check": check_job, "stale": stale_job}
AUTO_JOBS: dict[str, tuple[str, ...]] = {
    "issues": ("check",),
    "push": ("check",),
    "schedule": ("check", "stale"),
    "workflow_dispatch": ("check", "stale"),
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
    except GitHubUnavailable as exc:
        wf.annotate("error", str(exc), title="ai-context: GitHub unavailable")
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
    )
    payload = _payload(env)
    ctx = RunContext(
        settings=settings,
        extras=extras,
        github=github,
        workflow=wf,
        now=datetime.now(UTC),
        route=route(event, payload, settings, repository),
        outputs={"findings": "0", "errors": "0", "stale": "0", "mirrored": "0", "digest-url": ""},
        event=event,
        payload=payload,
    )
    ctx.api_calls["GitHub"] = lambda: github.counter.total
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
    calls = {service: count() for service, count in ctx.api_calls.items()}
    ctx.outputs["api-calls"] = str(sum(calls.values()))
    wf.set_outputs(ctx.outputs)
    wf.summary("\n\n".join(["## ai-context", *ctx.summary]) + "\n")
    limit = github.rate_limit
    left = f"; GitHub rate limit {limit[0]}/{limit[1]} left" if limit else ""
    per_service = ", ".join(f"{service} {n}" for service, n in calls.items())
    wf.log(f"ai-context: API calls: {per_service} ({github.counter.retries} GitHub retries){left}")
    return max(ctx.exit_codes, default=0)


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
    if plan.scan_all:
        return [issue for issue in github.list_issues("open") if is_task(issue)]
    issues = list(plan.issues)
    for number in plan.numbers:
        try:
            issues.append(github.get_issue(number))
        except GitHubNotFound:
            wf.log(f"ai-context: #{number} named by a commit does not exist; skipped")
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
    if settings.fail_on == "error" and report.count("error"):
        return 1
    if settings.fail_on == "warning" and (report.count("error") or report.count("warning")):
        return 1
    return 0


__all__ = ["GitHubError", "issues_named", "route", "run_action"]
