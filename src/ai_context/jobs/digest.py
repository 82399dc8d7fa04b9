"""The digest job: build the digest over the run's tasks and deliver it (imperative shell).

Targets (the `digest:` section's `targets`, any combination):
  issue-comment  one comment a day on the digest issue (`digest-issue`, else the open issue
                 labelled `ai-context:digest`, created if absent), edited in place when the job
                 runs again the same day; the previous day's comment carries the state the
                 "since the last digest" changes are computed from;
  slack          Block Kit messages to the incoming webhook (`slack-webhook-url`);
  step-summary   always, in an Action run.
A failed target does not stop the others; the run then exits 3 and says which failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ai_context.adapters.config import Settings
from ai_context.adapters.github import GitHub, GitHubNotFound
from ai_context.adapters.slack import SlackResult, post_messages
from ai_context.core.durations import duration_value
from ai_context.core.errors import ConfigError
from ai_context.core.models import Comment, Issue
from ai_context.jobs.context import RunContext
from ai_context.rules.digest import Digest, DigestConfig, StateRead, build_digest, find_state
from ai_context.rules.digest_render import render_markdown, slack_messages
from ai_context.rules.templating import make_env

DIGEST_LABEL = "ai-context:digest"
DIGEST_TITLE = "ai-context daily digest"
MARKER_PREFIX = "<!-- ai-context:digest "

Target = Literal["issue-comment", "slack", "step-summary"]


class DigestSection(BaseModel):
    """The `digest:` section of the config file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    targets: tuple[Target, ...] | None = None
    window: timedelta = timedelta(hours=24)
    repositories: tuple[str, ...] = ()

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


def digest_section(extras: dict[str, Any], settings: Settings) -> DigestSection:
    raw = dict(extras.get("digest") or {})
    if "repositories" in extras and "repositories" not in raw:
        raw["repositories"] = extras["repositories"]  # the issue's top-level spelling
    try:
        section = DigestSection.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"digest.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"{settings.config}: {problems}") from exc
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


def marker(day: str) -> str:
    return f"{MARKER_PREFIX}{day} -->"


def _day_of(comment: Comment, bot_login: str) -> str | None:
    if comment.author.lower() != bot_login.lower() or not comment.body.startswith(MARKER_PREFIX):
        return None
    head = comment.body[len(MARKER_PREFIX) :].split(" ", 1)[0]
    return head if len(head) == 10 else None


def previous_state(comments: Sequence[Comment], today: str, bot_login: str) -> StateRead:
    """The state the latest digest before today carried (a same-day rerun compares with it)."""
    earlier = [c for c in comments if (_day_of(c, bot_login) or "9999") < today]
    if not earlier:
        return find_state(None)
    latest = max(earlier, key=lambda c: (_day_of(c, bot_login) or "", c.id))
    return find_state(latest.body)


def todays_comment(comments: Sequence[Comment], today: str, bot_login: str) -> Comment | None:
    same_day = [c for c in comments if _day_of(c, bot_login) == today]
    return min(same_day, key=lambda c: c.id) if same_day else None


@dataclass
class DigestOutcome:
    digest: Digest
    markdown: str
    url: str = ""
    errors: list[str] = field(default_factory=list)
    slack: SlackResult | None = None
    writes: list[str] = field(default_factory=list)


def deliver_digest(
    *,
    github: GitHub,
    settings: Settings,
    extras: dict[str, Any],
    open_issues: Sequence[Issue],
    tasks: Sequence[Issue],
    now: datetime,
    workspace: Path,
    other_repos: Callable[[str], GitHub],
    log: Callable[[str], None],
) -> DigestOutcome:
    section = digest_section(extras, settings)
    targets = targets_of(section, settings)
    try:
        env = make_env(workspace / settings.templates if settings.templates else None)
    except ValueError as exc:
        raise ConfigError(f"setting templates: {exc}") from exc
    today = now.date().isoformat()
    closed = [
        i
        for i in github.list_issues("closed", since=now - section.window)
        if i.state_reason != "not_planned"
    ]
    issues: list[Issue] = [*tasks, *closed]
    for repo in section.repositories:
        if repo.lower() == github.repository.lower():
            continue
        other = other_repos(repo)
        issues += other.list_issues("open")
        issues += other.list_issues("closed", since=now - section.window)

    digest_issue = _find_digest_issue(settings, open_issues)
    comments: list[Comment] = []
    if "issue-comment" in targets and digest_issue is not None:
        try:
            comments = github.list_comments(digest_issue)
        except GitHubNotFound as exc:
            raise ConfigError(
                f"setting digest-issue: #{digest_issue} does not exist in {github.repository}; "
                "name an open issue, or leave it empty to use (or create) the issue labelled "
                f"{DIGEST_LABEL}"
            ) from exc
    previous = previous_state(comments, today, settings.bot_login)
    config = DigestConfig(window=section.window, stale_after=settings.stale_after)
    digest = build_digest(issues, now, config, previous)
    markdown = render_markdown(digest, env)
    outcome = DigestOutcome(digest, markdown)

    if "issue-comment" in targets:
        _deliver_comment(
            outcome,
            github=github,
            settings=settings,
            digest_issue=digest_issue,
            comments=comments,
            today=today,
            log=log,
        )
    if "slack" in targets and settings.slack_webhook_url is not None:
        messages = slack_messages(digest, env)
        if settings.dry_run:
            outcome.writes.append(f"post {len(messages)} Slack message(s)")
            log(f"[dry-run] would post {len(messages)} Slack message(s)")
        else:
            result = post_messages(settings.slack_webhook_url.get_secret_value(), messages)
            outcome.slack = result
            if not result.ok:
                outcome.errors.append(
                    f"Slack delivery failed after {result.sent} of {result.total} message(s): "
                    f"{result.error}"
                )
            else:
                log(f"posted {result.sent} Slack message(s)")
    return outcome


def _find_digest_issue(settings: Settings, open_issues: Sequence[Issue]) -> int | None:
    if settings.digest_issue is not None:
        return settings.digest_issue
    labelled = [i.number for i in open_issues if DIGEST_LABEL in i.labels]
    return min(labelled) if labelled else None


def _deliver_comment(
    outcome: DigestOutcome,
    *,
    github: GitHub,
    settings: Settings,
    digest_issue: int | None,
    comments: Sequence[Comment],
    today: str,
    log: Callable[[str], None],
) -> None:
    body = f"{marker(today)}\n{outcome.markdown}"
    if digest_issue is None:
        if settings.dry_run:
            log(f"[dry-run] would create the digest issue (label {DIGEST_LABEL}) and comment")
            outcome.writes.append("create digest issue")
            return
        created = github.create_issue(
            DIGEST_TITLE,
            "ai-context posts the daily digest of AI tasks here, one comment a day.",
            [DIGEST_LABEL],
        )
        digest_issue = created.number
        log(f"created digest issue #{digest_issue}")
    existing = todays_comment(comments, today, settings.bot_login)
    if existing is not None and existing.body.strip() == body.strip():
        outcome.url = existing.html_url
        log(f"digest comment on #{digest_issue} is already current")
        return
    if settings.dry_run:
        verb = "edit today's" if existing else "create a"
        log(f"[dry-run] would {verb} digest comment on #{digest_issue} ({len(body)} chars)")
        outcome.writes.append(f"{verb} digest comment")
        return
    if existing is not None:
        outcome.url = github.edit_comment(existing.id, body).html_url
        log(f"edited today's digest comment on #{digest_issue}")
    else:
        outcome.url = github.create_comment(digest_issue, body).html_url
        log(f"posted the digest comment on #{digest_issue}")
    outcome.writes.append("digest comment")


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
