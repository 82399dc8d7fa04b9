"""The digest job: build the digest over the run's tasks and deliver it (imperative shell).

Targets (the `digest:` section's `targets`, any combination):
  issue-comment  one comment a day on the digest issue (`digest-issue`, else the open issue
                 labelled `ai-context:digest`, created if absent), edited in place when the job
                 runs again the same day; the hidden lines of the comments carry the state the
                 "since the last digest" changes are computed from (a rerun compares with the
                 same baseline as the day's first digest);
  slack          Block Kit messages to the incoming webhook (`slack-webhook-url`), mentioning
                 stuck tasks' owners when `mention-owners: true` and `actors.<id>.slack` is set;
  step-summary   always, in an Action run: the full digest and a delivery section.
A failed target does not stop the others; the run then exits 3 and says which failed.
The command line's `ai-context digest` reads the same repositories through `read_issues`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ai_context.adapters.config import Settings
from ai_context.adapters.github import GitHub, GitHubNotFound, IssuePage
from ai_context.core.durations import duration_value
from ai_context.core.errors import ConfigError
from ai_context.core.models import Comment, Issue
from ai_context.jobs.context import RunContext
from ai_context.jobs.digest_delivery import (
    Delivery,
    day_of,
    deliver_comment,
    deliver_slack,
    slack_wanted,
    todays_comment,
)
from ai_context.jobs.digest_facts import closed_since, gather, quiet, store
from ai_context.jobs.scan import DIGEST_LABEL, Scan
from ai_context.rules.actors import parse_actors
from ai_context.rules.checks import check_body
from ai_context.rules.digest import DigestConfig, digest_from_checked
from ai_context.rules.digest_model import Digest, StateRead
from ai_context.rules.digest_render import render_markdown
from ai_context.rules.digest_slack import slack_messages
from ai_context.rules.digest_state import find_baseline, find_state
from ai_context.rules.templating import make_env

Target = Literal["issue-comment", "slack", "step-summary"]
STEP_SUMMARY_LIMIT = 1_000_000  # GitHub takes 1 MiB of step summary: the full list fits
COMMENT_LIMIT = 60_000  # of the 65,536 a comment holds: room for the marker line


class DigestSection(BaseModel):
    """The `digest:` section of the config file."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    targets: tuple[Target, ...] | None = None
    window: timedelta = timedelta(hours=24)
    repositories: tuple[str, ...] = ()
    mention_owners: bool = Field(default=False, alias="mention-owners")

    @field_validator("window", mode="before")
    @classmethod
    def _window(cls, value: Any) -> Any:
        return duration_value(value)

    @field_validator("repositories")
    @classmethod
    def _repos(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for repo in value:
            if repo.count("/") != 1 or not all(repo.split("/")):
                raise ValueError(f"{repo!r} is not owner/name")
        return value


def digest_section(
    extras: dict[str, Any], settings: Settings, *, needs_webhook: bool = True
) -> DigestSection:
    """The `digest:` section (and the top-level `repositories:`), checked. NEEDS_WEBHOOK: a
    run that delivers the digest needs the Slack webhook when slack is a target; other runs
    check the section's values only (an issue-event workflow need not pass the webhook)."""
    raw = dict(extras.get("digest") or {})
    top_level = "repositories" in extras and "repositories" not in raw
    if top_level:
        raw["repositories"] = extras["repositories"]  # the issue's top-level spelling
    try:
        section = DigestSection.model_validate(raw)
    except ValidationError as exc:

        def where(loc: tuple[Any, ...]) -> str:
            name = ".".join(str(p) for p in loc)
            return name if top_level and name.startswith("repositories") else f"digest.{name}"

        problems = "; ".join(
            f"{where(e['loc'])}: {str(e['msg']).removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise ConfigError(f"{settings.config}: {problems}") from exc
    if not needs_webhook:
        return section
    if section.targets and "slack" in section.targets and settings.slack_webhook_url is None:
        raise ConfigError(
            f"{settings.config}: digest.targets names slack but slack-webhook-url is empty; "
            "pass the webhook from a secret or drop slack from the targets"
        )
    return section


def targets_of(section: DigestSection, settings: Settings) -> tuple[Target, ...]:
    if section.targets is not None:
        return tuple(dict.fromkeys((*section.targets, "step-summary")))
    wanted: list[Target] = ["issue-comment"]
    if settings.slack_webhook_url is not None:
        wanted.append("slack")
    return (*wanted, "step-summary")


def previous_state(comments: Sequence[Comment], today: str, bot_login: str) -> StateRead:
    """What this digest compares with: the baseline of today's comment when the job already ran
    today (so a rerun keeps the changes the first run showed), else the latest earlier digest."""
    current = todays_comment(comments, today, bot_login)
    if current is not None:
        return find_baseline(current.body)
    earlier = [c for c in comments if (day_of(c, bot_login) or "9999") < today]
    if not earlier:
        return find_state(None)
    latest = max(earlier, key=lambda c: (day_of(c, bot_login) or "", c.id))
    return find_state(latest.body)


def read_issues(
    github: GitHub, since: datetime, progress: Callable[[IssuePage], None] | None = None
) -> list[Issue]:
    """Every issue of one repository a report looks at: the open ones and those closed since
    `since` (as completed or not: a task closed as not planned is said to have left), a page
    of 100 at a time, each told to PROGRESS."""
    found: list[Issue] = []
    for state, after in (("open", None), ("closed", since)):
        for page in github.issue_pages(state, since=after):
            if progress is not None:
                progress(page)
            found += page.issues
    return found


def _since(now: datetime, window: timedelta, previous: StateRead) -> datetime:
    """Closed issues matter back to the window, or to the digest compared with if older (a
    Monday digest must see what was closed on Saturday to say it left)."""
    start = now - window
    before = previous.state.generated_at
    return min(start, before) if previous.status == "restored" and before else start


def mentions_of(
    extras: dict[str, Any], settings: Settings, section: DigestSection
) -> dict[str, str]:
    """Actor id (lower case) -> its owner's Slack id, when the digest mentions owners."""
    if not section.mention_owners:
        return {}
    actors = parse_actors(extras.get("actors"), settings.config)
    return {a.id.lower(): a.slack for a in actors.actors if a.slack}


def deliver_digest(
    digest: Digest,
    *,
    github: GitHub,
    settings: Settings,
    extras: dict[str, Any],
    section: DigestSection,
    comments: Sequence[Comment],
    digest_issue: int | None,
    workspace: Path,
    log: Callable[[str], None],
    full_url: str = "",
) -> Delivery:
    """Render DIGEST and deliver it to the section's targets: the day's comment on the
    digest issue (COMMENTS are that issue's), Slack, and the step summary's text."""
    targets = targets_of(section, settings)
    mentions = mentions_of(extras, settings, section)
    try:
        env = make_env(workspace / settings.templates if settings.templates else None)
    except ValueError as exc:
        raise ConfigError(f"setting templates: {exc}") from exc
    today = digest.generated_at.date().isoformat()
    full = render_markdown(digest, env, max_chars=STEP_SUMMARY_LIMIT)
    if len(full) > COMMENT_LIMIT:  # cut to fit a comment, linking the full list in the run
        comment = render_markdown(digest, env, max_chars=COMMENT_LIMIT, full_url=full_url)
    else:
        comment = full
    out = Delivery(digest, full, comment)
    existing = todays_comment(comments, today, settings.bot_login)
    if "issue-comment" in targets:
        deliver_comment(
            out,
            github=github,
            settings=settings,
            digest_issue=digest_issue,
            existing=existing,
            today=today,
            log=log,
        )
    if "slack" in targets and settings.slack_webhook_url is not None:
        if "issue-comment" in targets and not slack_wanted(existing, digest):
            out.report.append("Slack: not posted: the tasks are as this morning's digest left them")
            log("Slack: the digest did not change since today's post; not posted again")
        else:
            messages = slack_messages(digest, env, comment_url=out.url, mentions=mentions)
            deliver_slack(out, settings=settings, messages=messages, log=log)
    return out


def _find_digest_issue(settings: Settings, home: Scan, github: GitHub) -> int | None:
    """The digest issue: the setting, else the open issue labelled ai-context:digest (the
    scan's listing shows it when it read far enough; else one listing by the label)."""
    if settings.digest_issue is not None:
        return settings.digest_issue
    labelled = [i for i in home.ours if DIGEST_LABEL in i.labels]
    if not labelled and not home.listed_all:
        labelled = github.list_issues("open", labels=[DIGEST_LABEL])
    return min(i.number for i in labelled) if labelled else None


def _read_comments(github: GitHub, digest_issue: int | None) -> list[Comment]:
    if digest_issue is None:
        return []
    try:
        return github.list_comments(digest_issue)
    except GitHubNotFound as exc:
        raise ConfigError(
            f"setting digest-issue: #{digest_issue} does not exist in {github.repository}; "
            "name an open issue, or leave it empty to use (or create) the issue labelled "
            f"{DIGEST_LABEL}"
        ) from exc


def digest_job(ctx: RunContext) -> None:
    """Stuck / in review / in progress / shipped, to the digest issue, Slack and the summary.

    Each repository's tasks come from the run's scan: those that changed from the listing,
    the others from the facts the digest stored (jobs/digest_facts.py). When nothing changed
    in any repository since the last run and the day's comment is there, that comment stands:
    nothing is rendered or written."""
    if not ctx.route.scan_all:
        ctx.workflow.log("ai-context: the digest runs on schedule and workflow_dispatch only")
        return
    settings, log = ctx.settings, ctx.workflow.log
    section = digest_section(ctx.extras, settings)
    today = ctx.now.date().isoformat()
    digest_issue = _find_digest_issue(settings, ctx.scanned(), ctx.github)
    wants_comment = "issue-comment" in targets_of(section, settings)
    comments = _read_comments(ctx.github, digest_issue) if wants_comment else []
    names = [ctx.github.repository] + [
        r for r in section.repositories if r.lower() != ctx.github.repository.lower()
    ]
    scans = [ctx.scan_of(name) for name in names]
    closed = {s.repository: closed_since(s) for s in scans if quiet(s)}
    existing = todays_comment(comments, today, settings.bot_login)
    if existing is not None and len(closed) == len(scans) and not any(closed.values()):
        _unchanged(ctx, existing)
        return
    previous = previous_state(comments, today, settings.bot_login)
    since = _since(ctx.now, section.window, previous)
    config = DigestConfig(window=section.window, stale_after=settings.stale_after)
    sources = [
        gather(
            s,
            now=ctx.now,
            config=config,
            since=since,
            bot=settings.bot_login,
            closed=closed.get(s.repository),
        )
        for s in scans
    ]
    checked = [pair for source in sources for pair in source.checked]
    others = [(i, check_body(i.body)) for source in sources for i in source.scan.others]
    digest = digest_from_checked([*others, *checked], ctx.now, config, previous)
    outcome = deliver_digest(
        digest,
        github=ctx.github,
        settings=settings,
        extras=ctx.extras,
        section=section,
        comments=comments,
        digest_issue=digest_issue,
        workspace=Path(ctx.workflow_env.get("GITHUB_WORKSPACE") or "."),
        log=log,
        full_url=_run_url(ctx.workflow_env),
    )
    for source in sources:
        store(source, config, dry_run=settings.dry_run, log=log)
    _report(ctx, outcome)


def _run_url(env: Mapping[str, str]) -> str:
    if not (env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY")):
        return ""
    server = env.get("GITHUB_SERVER_URL") or "https://github.com"
    return f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"


def _unchanged(ctx: RunContext, existing: Comment) -> None:
    """Nothing changed since the day's comment: it stands, and the summary links it."""
    line = f"comment: [unchanged]({existing.html_url}): nothing changed since the last run"
    ctx.workflow.log("ai-context: digest: nothing changed since the last run; the comment stands")
    ctx.outputs["digest-url"] = existing.html_url
    ctx.summary.append(Delivery(None, "", report=[line]).section())
    ctx.summary.append(existing.body.split("\n", 1)[-1])


def _report(ctx: RunContext, outcome: Delivery) -> None:
    ctx.outputs["digest-url"] = outcome.url
    ctx.summary.append(outcome.section())
    ctx.summary.append(outcome.markdown)
    if outcome.slack is not None:
        slack_calls = outcome.slack.calls
        ctx.api_calls["Slack"] = lambda: slack_calls
    for error in outcome.errors:
        ctx.workflow.annotate("error", error, title="ai-context: digest delivery failed")
        ctx.exit_codes.append(3)
