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
The command line's `ai-context digest` reads the same repositories through `gather`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from ai_context.adapters import clients
from ai_context.adapters.config import Config
from ai_context.adapters.github import GitHub, GitHubNotFound
from ai_context.adapters.templates import Templates
from ai_context.core.errors import ConfigError
from ai_context.core.models import Comment, Issue
from ai_context.jobs.context import RunContext
from ai_context.jobs.digest_delivery import (
    DIGEST_LABEL,
    Delivery,
    day_of,
    deliver_comment,
    deliver_slack,
    rewrite_comment,
    slack_wanted,
    todays_comment,
)
from ai_context.rules.digest import DigestConfig, DigestSection, Target, build_digest
from ai_context.rules.digest_model import StateRead
from ai_context.rules.digest_render import render_markdown
from ai_context.rules.digest_slack import slack_messages
from ai_context.rules.digest_state import (
    find_baseline,
    find_state,
    merge_previous,
    slack_line,
    slack_posted,
)
from ai_context.rules.sticky import WriteBudget

STEP_SUMMARY_LIMIT = 1_000_000  # GitHub takes 1 MiB of step summary: the full list fits
COMMENT_LIMIT = 60_000  # of the 65,536 a comment holds: room for the marker line


def check_delivery(settings: Config) -> None:
    """A run that delivers the digest to Slack needs the webhook: refused before any write
    (an issue-event run checks the section's values only; it need not pass the webhook)."""
    targets = settings.digest.targets
    if targets and "slack" in targets and settings.slack_webhook_url is None:
        raise ConfigError(
            f"{settings.config}: digest.targets names slack but slack-webhook-url is empty; "
            "pass the webhook from a secret or drop slack from the targets"
        )


def posts_comment(ctx: RunContext) -> bool:
    """Whether this run posts the digest comment (and so may create the digest issue)."""
    if "digest" not in ctx.route.jobs or not ctx.route.scan_all:
        return False
    return "issue-comment" in targets_of(ctx.settings.digest, ctx.settings)


def targets_of(section: DigestSection, settings: Config) -> tuple[Target, ...]:
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


def read_issues(github: GitHub, since: datetime) -> list[Issue]:
    """Every issue of one repository a report without a baseline looks at (the MCP server's
    status): the open ones and those closed since SINCE (gather reads the same in two steps,
    its baseline between them)."""
    return github.list_issues("open") + github.list_issues("closed", since=since)


def _since(now: datetime, window: timedelta, previous: StateRead) -> datetime:
    """Closed issues matter back to the window, or to the digest compared with if older (a
    Monday digest must see what was closed on Saturday to say it left)."""
    start = now - window
    before = previous.state.generated_at
    return min(start, before) if previous.status == "restored" and before else start


def digest_config(
    settings: Config,
    *,
    window: timedelta | None = None,
    stale_after: timedelta | None = None,
) -> DigestConfig:
    """The one DigestConfig the Action, the command line and the MCP server build from the
    same settings, so all put a task in the same category: the window, stale-after,
    `required:` and owners."""
    owners = {
        key.lower(): actor.owner
        for actor in settings.actors.actors
        if actor.owner
        for key in (actor.id, *actor.aliases)
    }
    return DigestConfig(
        window=window or settings.digest.window,
        stale_after=stale_after or settings.stale_after,
        check=settings.check,
        owners=owners,
    )


def find_digest_issue(open_issues: Sequence[Issue], configured: int | None = None) -> int | None:
    """The digest issue: CONFIGURED (`digest-issue`), else the open one labelled for it."""
    if configured is not None:
        return configured
    labelled = [i.number for i in open_issues if DIGEST_LABEL in i.labels]
    return min(labelled) if labelled else None


@dataclass
class Gathered:
    """What a digest reads: every issue, the baseline, and each repository's digest comments
    (by repository; the first is the digest's own)."""

    issues: list[Issue]
    previous: StateRead
    comments: dict[str, list[Comment]] = field(default_factory=dict)
    digest_issue: int | None = None


def gather(
    repos: Sequence[GitHub],
    *,
    settings: Config,
    window: timedelta,
    now: datetime,
    open_issues: Sequence[Issue] | None = None,
) -> Gathered:
    """Read what a digest over REPOS needs (the first is the digest's own; OPEN_ISSUES its open
    issues, when the run has them): each repository's open issues, its digest issue's comments
    (each repository is compared with its own last digest, rules.digest_state.merge_previous),
    then the issues closed since the window or that digest, whichever is older. The command
    line and the Action both read through here, so they see the same."""
    today = now.date().isoformat()
    opened: list[list[Issue]] = []
    reads: list[tuple[str, StateRead]] = []
    out = Gathered(issues=[], previous=find_state(None))
    for index, github in enumerate(repos):
        listed = list(open_issues) if index == 0 and open_issues is not None else None
        opened.append(listed if listed is not None else github.list_issues("open"))
        number = find_digest_issue(opened[-1], settings.digest_issue if index == 0 else None)
        if index == 0:
            out.digest_issue = number
        if number is None:
            continue
        try:
            comments = github.list_comments(number)
        except GitHubNotFound as exc:
            raise ConfigError(
                f"setting digest-issue: #{number} does not exist in {github.repository}; name "
                f"an open issue, or leave it empty to use (or create) the issue labelled "
                f"{DIGEST_LABEL}"
            ) from exc
        out.comments[github.repository] = comments
        reads.append((github.repository, previous_state(comments, today, settings.bot_login)))
    out.previous = merge_previous(reads)
    since = _since(now, window, out.previous)
    # The open issues, not only the tasks: a task whose block was removed is said to have left.
    for github, listed in zip(repos, opened, strict=True):
        out.issues += listed + github.list_issues("closed", since=since)
    return out


def mentions_of(settings: Config) -> dict[str, str]:
    """Actor id (lower case) -> its owner's Slack id, when the digest mentions owners."""
    if not settings.digest.mention_owners:
        return {}
    return {a.id.lower(): a.slack for a in settings.actors.actors if a.slack}


def deliver_digest(
    *,
    github: GitHub,
    settings: Config,
    open_issues: Sequence[Issue],
    now: datetime,
    workspace: Path,
    other_repos: Callable[[str], GitHub],
    log: Callable[[str], None],
    budget: WriteBudget,
    full_url: str = "",
) -> Delivery:
    section = settings.digest
    targets = targets_of(section, settings)
    mentions = mentions_of(settings)
    try:
        templates = Templates(workspace / settings.templates if settings.templates else None)
    except ValueError as exc:
        raise ConfigError(f"setting templates: {exc}") from exc
    today = now.date().isoformat()
    repos = [github] + [
        other_repos(r) for r in section.repositories if r.lower() != github.repository.lower()
    ]
    got = gather(repos, settings=settings, window=section.window, now=now, open_issues=open_issues)
    digest = build_digest(got.issues, now, digest_config(settings), got.previous)
    full = templates.run(render_markdown, digest, max_chars=STEP_SUMMARY_LIMIT)
    if len(full) > COMMENT_LIMIT:  # cut to fit a comment, linking the full list in the run
        comment = templates.run(render_markdown, digest, max_chars=COMMENT_LIMIT, full_url=full_url)
    else:
        comment = full
    out = Delivery(digest, full, comment)
    on_issue = "issue-comment" in targets
    existing = todays_comment(got.comments.get(github.repository, []), today, settings.bot_login)
    slack = "slack" in targets and settings.slack_webhook_url is not None
    post = slack and (not on_issue or slack_wanted(existing, digest))
    if on_issue:
        before = slack_posted(existing.body if existing else None)
        # The comment says what Slack got today: this run's tasks when it posts them now.
        out.slack_mark = slack_line(digest.state()) if post else _mark(before)
        deliver_comment(
            out,
            github=github,
            settings=settings,
            digest_issue=got.digest_issue,
            existing=existing,
            today=today,
            log=log,
            budget=budget,
        )
    if slack and not post:
        out.report.append("Slack: not posted: it got these tasks earlier today")
        log("Slack: the digest did not change since today's post; not posted again")
    elif post:
        messages = templates.run(slack_messages, digest, comment_url=out.url, mentions=mentions)
        deliver_slack(out, settings=settings, messages=messages, log=log)
        if on_issue and out.slack is not None and not out.slack.ok:
            # Slack did not get them: the comment says what it had before, so a rerun posts.
            out.slack_mark = _mark(slack_posted(existing.body if existing else None))
            rewrite_comment(out, github=github, today=today, log=log, budget=budget)
    return out


def _mark(posted: str | None) -> str:
    return f"[//]: # (ai-context-digest-slack:{posted})" if posted else ""


def digest_job(ctx: RunContext) -> None:
    """Stuck / in review / in progress / shipped, to the digest issue, Slack and the summary."""
    if not ctx.route.scan_all:
        ctx.workflow.log("ai-context: the digest runs on schedule and workflow_dispatch only")
        return
    settings = ctx.settings

    def other(repo: str) -> GitHub:
        assert settings.github_token is not None
        return clients.github(
            settings.github_token,
            repo,
            api_url=ctx.github_api_url,
            http=settings.http,
            counter=ctx.github.counter,
        )

    env = ctx.workflow_env
    run_url = ""
    if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
        server = env.get("GITHUB_SERVER_URL") or "https://github.com"
        run_url = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    outcome = deliver_digest(
        github=ctx.github,
        settings=settings,
        open_issues=ctx.open_issues(),
        now=ctx.now,
        workspace=Path(env.get("GITHUB_WORKSPACE") or "."),
        other_repos=other,
        log=ctx.workflow.log,
        budget=ctx.writes,
        full_url=run_url,
    )
    ctx.outputs["digest-url"] = outcome.url
    ctx.summary.append(outcome.section())
    ctx.summary.append(outcome.markdown)
    if outcome.slack is not None:
        slack_calls = outcome.slack.calls
        ctx.api_calls["Slack"] = lambda: slack_calls
    for error in outcome.errors:
        ctx.workflow.annotate("error", error, title="ai-context: digest delivery failed")
        ctx.exit_codes.append(3)
