"""The Action's main: settings, the route, the jobs, then outputs, summary and the calls line."""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ai_context.action.route import route
from ai_context.adapters import clients
from ai_context.adapters.config import Config, load_config
from ai_context.adapters.github import GitHub, GitHubNotFound, url_problem
from ai_context.adapters.workflow import Progress, Workflow
from ai_context.core.errors import AIContextError, ConfigError, Exit, ServiceError
from ai_context.core.events import Event, bad, parse_event, read_payload
from ai_context.core.markdown import escape_cell
from ai_context.jobs.context import Route, RunContext
from ai_context.jobs.digest.job import check_delivery
from ai_context.jobs.registry import JOBS

if TYPE_CHECKING:
    from ai_context.adapters.templates import Templates


def run_action(env: Mapping[str, str] | None = None, stream: TextIO | None = None) -> int:
    """The Action's main: every failure ends in an exit code and a message that says why."""
    env = os.environ if env is None else env
    wf = Workflow(env, stream)
    try:
        return _run(env, wf)
    except AIContextError as exc:
        title = exc.failure_title if isinstance(exc, ServiceError) else exc.title
        wf.annotate("error", str(exc), title=f"ai-context: {title}")
        return int(exc.exit_code)
    except Exception as exc:  # a bug of ours: say so plainly, never as a findings exit (1)
        wf.trace(traceback.format_exc())
        wf.annotate(
            "error",
            f"ai-context stopped on an unexpected {type(exc).__name__}: {exc}. Please report it "
            "with this log.",
            title="ai-context: internal error",
        )
        return int(Exit.SERVICE)


def _run(env: Mapping[str, str], wf: Workflow) -> int:
    wf.check_files()
    workspace = Path(env.get("GITHUB_WORKSPACE") or ".")
    settings = load_config(env, workspace)
    for secret in settings.secrets():
        wf.add_mask(secret)
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
    api_url = clients.github_api_url(env)
    problem = url_problem(api_url)  # a bad configuration (its title), before any client
    if problem is not None:
        raise ConfigError(f"environment variable GITHUB_API_URL: {problem}")
    progress = Progress(wf.log)
    github = clients.github(
        settings.github_token,
        repository,
        api_url=api_url,
        http=settings.http,
        on_wait=progress.waiting,
    )
    ctx = RunContext(
        settings=settings,
        github=github,
        workflow=wf,
        now=settings.now or datetime.now(UTC),
        route=_route(env, event, repository, settings),
        workflow_env=env,
        event=event,
        progress=progress,
    )
    ctx.api_calls["GitHub"] = lambda: github.counter.total
    try:
        if ctx.route.skipped:
            wf.log(f"ai-context: nothing to do ({ctx.route.skipped})")
            ctx.summary.append(f"Nothing to do: {ctx.route.skipped}.")
        else:
            check_settings(ctx)
            if settings.dry_run:
                wf.log("ai-context: dry run: no writes will be made")
            if ctx.route.scan_all:  # what changed since the last run, or every open issue
                _grouped(wf, "ai-context scan", ctx.scanned)
            others = "digest" in ctx.route.jobs and settings.digest.repositories
            if ctx.route.scan_all and others:  # an owner or a repository GitHub does not know
                # stops the run before any write; the digest reuses these scans
                _grouped(
                    wf,
                    "ai-context repositories",
                    lambda: [ctx.scan_of(name) for name in ctx.repositories()],
                )
            for name in ctx.route.jobs:
                _grouped(wf, f"ai-context {name}", partial(JOBS[name], ctx))
            if ctx.route.scan_all:  # after every job's writes, so the state tells of them
                _grouped(wf, "ai-context run state", ctx.save_scans)
    except Exception as exc:
        ctx.summary.append(f"**Stopped:** {escape_cell(str(exc))}")
        _finish(ctx, github, wf, stopped=True)
        raise
    _finish(ctx, github, wf, stopped=False)
    return max(ctx.exit_codes, default=0)


def _grouped(wf: Workflow, title: str, step: Callable[[], object]) -> None:
    """STEP's log lines in a collapsible group of the run's log."""
    wf.group(title)
    try:
        step()
    finally:
        wf.endgroup()


def check_settings(ctx: RunContext) -> None:
    """Every setting and section the run's jobs read, checked before any job runs: a bad value
    is exit 2 with nothing written."""
    settings = ctx.settings
    settings.check_sections()
    delivers = "digest" in ctx.route.jobs and ctx.route.scan_all
    if settings.templates:  # Jinja is loaded only when a run renders, or checks, templates
        from ai_context.adapters.templates import user_templates  # noqa: PLC0415
        from ai_context.rules.templating import compile_all  # noqa: PLC0415

        workspace = Path(ctx.workflow_env.get("GITHUB_WORKSPACE") or ".")
        templates = user_templates(workspace, settings.templates, settings.source("templates"))
        templates.run(compile_all)
        if delivers:
            _rehearse_digest(ctx, templates)
    if delivers:  # only then the Slack webhook and the digest issue (one call) matter
        check_delivery(settings)
        if settings.digest_issue is not None:
            _check_digest_issue(ctx.github, settings)


def _rehearse_digest(ctx: RunContext, templates: Templates) -> None:
    """Render the digest's templates once over this run's tasks before any write: a user
    template that fails only when it runs stops the run with nothing written."""
    from ai_context.rules.digest.build import build_digest  # noqa: PLC0415 - digest runs only
    from ai_context.rules.digest.render import render_markdown  # noqa: PLC0415
    from ai_context.rules.digest.slack import slack_messages  # noqa: PLC0415

    digest = build_digest(ctx.issues(), ctx.now)
    templates.run(render_markdown, digest)
    templates.run(slack_messages, digest)


def _check_digest_issue(github: GitHub, settings: Config) -> None:
    number = settings.digest_issue
    try:
        what = "is a pull request in" if github.get_issue(number or 0).is_pull_request else ""
    except GitHubNotFound:
        what = "does not exist in"
    if what:
        raise ConfigError(
            f"setting digest-issue: #{number} {what} {github.repository} "
            f"({settings.source('digest-issue')}); name an open issue, or leave it empty to "
            "use (or create) the issue labelled ai-context:digest"
        )


# The counts a finished run reports when no job set them (nothing found, nothing written).
DEFAULT_OUTPUTS = {
    "findings": "0",
    "errors": "0",
    "stale": "0",
    "mirrored": "0",
    "digest-url": "",
    "writes-left": "0",
}


def _finish(ctx: RunContext, github: GitHub, wf: Workflow, *, stopped: bool) -> None:
    """Outputs, summary and the calls line, whether the jobs finished or not. A run that
    STOPPED leaves the counts it did not reach empty (`findings=0` would say it looked)."""
    for name, value in DEFAULT_OUTPUTS.items():
        ctx.outputs.setdefault(name, "" if stopped else value)
    calls = {service: count() for service, count in ctx.api_calls.items()}
    ctx.outputs["api-calls"] = str(sum(calls.values()))
    wf.set_outputs(ctx.outputs)
    wf.summary("\n\n".join(["## ai-context", *ctx.summary]) + "\n")
    limit = github.rate_limit
    left = f"; GitHub rate limit {limit[0]}/{limit[1]} left" if limit else ""
    per_service = ", ".join(f"{service} {n}" for service, n in calls.items())
    wf.log(f"ai-context: API calls: {per_service} ({github.counter.retries} GitHub retries){left}")


def _route(env: Mapping[str, str], event: str, repository: str, settings: Config) -> Route:
    """The event's route, without the digest when the config file says `digest: false`."""
    found = route(_event(env, event, repository), settings, repository)
    if not settings.digest_on:
        found.jobs = tuple(job for job in found.jobs if job != "digest")
    return found


def _event(env: Mapping[str, str], name: str, repository: str) -> Event:
    """The event, read once from GITHUB_EVENT_PATH (no file: an empty payload)."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return parse_event(name, {}, repository)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise bad(path, str(exc.strerror)) from exc
    return parse_event(name, read_payload(raw, path), repository)
