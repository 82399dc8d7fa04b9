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
The command line reads through `gather`; the Action's scheduled runs read only what changed
(jobs/scan.py) and take the unchanged tasks from the digest's facts (jobs/digest/facts.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from ai_context.adapters.config import Config
from ai_context.adapters.github import GitHub, GitHubNotFound, IssuePage
from ai_context.core.errors import ConfigError
from ai_context.core.models import Comment, Issue
from ai_context.jobs.context import RunContext
from ai_context.jobs.digest import facts
from ai_context.jobs.digest.delivery import (
    Delivery,
    day_of,
    deliver_comment,
    deliver_slack,
    rewrite_comment,
    todays_comment,
)
from ai_context.jobs.scan import DIGEST_LABEL, Scan
from ai_context.rules.checks import check_body
from ai_context.rules.digest.build import DigestConfig, DigestSection, Target, digest_from_checked
from ai_context.rules.digest.model import Digest, StateRead
from ai_context.rules.digest.state import (
    find_baseline,
    find_state,
    merge_previous,
    slack_line,
    slack_posted,
    tasks_digest,
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


Progress = Callable[[IssuePage], None]


def read_issues(github: GitHub, since: datetime, progress: Progress | None = None) -> list[Issue]:
    """Every issue of one repository a report without a baseline looks at (the MCP server's
    status): the open ones and those closed since SINCE (gather reads the same in two steps,
    its baseline between them)."""
    return _listed(github, "open", None, progress) + _listed(github, "closed", since, progress)


def _listed(
    github: GitHub, state: str, since: datetime | None, progress: Progress | None
) -> list[Issue]:
    """One listing, a page at a time, each told to PROGRESS (a terminal's progress line)."""
    found: list[Issue] = []
    for page in github.issue_pages(state, since=since):
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


@dataclass
class Gathered:
    """What a digest reads: every issue, the baseline, and each repository's digest comments
    (by repository; the first is the digest's own)."""

    issues: list[Issue]
    previous: StateRead
    comments: dict[str, list[Comment]] = field(default_factory=dict)


def gather(
    repos: Sequence[GitHub],
    *,
    settings: Config,
    window: timedelta,
    now: datetime,
    progress: Progress | None = None,
) -> Gathered:
    """Read what a digest over REPOS needs (the first is the digest's own): each repository's
    open issues, its digest issue's comments (each repository is compared with its own last
    digest, rules.digest.state.merge_previous), then the issues closed since the window or that
    digest, whichever is older. The command line reads through here, as the Action reads."""
    today = now.date().isoformat()
    opened = [_listed(github, "open", None, progress) for github in repos]
    reads: list[tuple[str, StateRead]] = []
    out = Gathered(issues=[], previous=find_state(None))
    for index, (github, listed) in enumerate(zip(repos, opened, strict=True)):
        labelled = [i.number for i in listed if DIGEST_LABEL in i.labels]
        configured = settings.digest_issue if index == 0 else None
        number = configured if configured is not None else min(labelled, default=None)
        if number is None:
            continue
        comments = out.comments[github.repository] = _read_comments(github, number)
        reads.append((github.repository, previous_state(comments, today, settings.bot_login)))
    out.previous = merge_previous(reads)
    since = _since(now, window, out.previous)
    # The open issues, not only the tasks: a task whose block was removed is said to have left.
    for github, listed in zip(repos, opened, strict=True):
        out.issues += listed + _listed(github, "closed", since, progress)
    return out


def mentions_of(settings: Config) -> dict[str, str]:
    """Actor id (lower case) -> its owner's Slack id, when the digest mentions owners."""
    if not settings.digest.mention_owners:
        return {}
    return {a.id.lower(): a.slack for a in settings.actors.actors if a.slack}


def deliver_digest(
    digest: Digest,
    *,
    github: GitHub,
    settings: Config,
    comments: Sequence[Comment],
    digest_issue: int | None,
    workspace: Path,
    log: Callable[[str], None],
    budget: WriteBudget,
    full_url: str = "",
) -> Delivery:
    """Render DIGEST and deliver it to the digest section's targets: the day's comment on the
    digest issue (COMMENTS are that issue's), Slack, and the step summary's text."""
    # Jinja and the renderers load here: a rerun where nothing changed renders nothing.
    from ai_context.adapters.templates import user_templates  # noqa: PLC0415
    from ai_context.rules.digest.render import hidden_lines, render_markdown  # noqa: PLC0415
    from ai_context.rules.digest.slack import slack_messages  # noqa: PLC0415

    targets = targets_of(settings.digest, settings)
    templates = user_templates(workspace, settings.templates)
    today = digest.generated_at.date().isoformat()
    lines = hidden_lines(digest)  # the same in both renders
    full = templates.run(render_markdown, digest, max_chars=STEP_SUMMARY_LIMIT, lines=lines)
    if len(full) > COMMENT_LIMIT:  # cut to fit a comment, linking the full list in the run
        comment = templates.run(
            render_markdown, digest, max_chars=COMMENT_LIMIT, full_url=full_url, lines=lines
        )
    else:
        comment = full
    out = Delivery(digest, full, comment)
    on_issue = "issue-comment" in targets
    existing = todays_comment(comments, today, settings.bot_login)
    posted = slack_posted(existing.body if existing else None)
    before = slack_line(posted) if posted else ""
    slack = "slack" in targets and settings.slack_webhook_url is not None
    tasks = tasks_digest(digest.state) if slack else None
    # Slack gets the digest unless a same-day rerun's tasks are the ones it already got.
    post = slack and (not on_issue or posted != tasks)
    if on_issue:
        # The comment says what Slack got today: this run's tasks when it posts them now.
        out.slack_mark = slack_line(tasks) if post and tasks else before
        deliver_comment(
            out,
            github=github,
            settings=settings,
            digest_issue=digest_issue,
            existing=existing,
            today=today,
            log=log,
            budget=budget,
        )
    if slack and not post:
        out.report.append("Slack: not posted: it got these tasks earlier today")
        log("Slack: the digest did not change since today's post; not posted again")
    elif post:
        mentions = mentions_of(settings)
        messages = templates.run(slack_messages, digest, comment_url=out.url, mentions=mentions)
        deliver_slack(out, settings=settings, messages=messages, log=log)
        if on_issue and out.slack is not None and not out.slack.ok:
            # Slack did not get them: the comment says what it had before, so a rerun posts.
            out.slack_mark = before
            rewrite_comment(out, github=github, today=today, log=log, budget=budget)
    return out


def digest_job(ctx: RunContext) -> None:
    """Stuck / in review / in progress / shipped, to the digest issue, Slack and the summary.

    Each repository's tasks come from the run's scan: those that changed from the listing,
    the others from the facts the digest stored (jobs/digest/facts.py). When nothing changed
    in any repository since the last run and the day's comment is there, that comment stands:
    nothing is rendered or written."""
    if not ctx.route.scan_all:
        ctx.workflow.log("ai-context: the digest runs on schedule and workflow_dispatch only")
        return
    settings, log, bot = ctx.settings, ctx.workflow.log, ctx.settings.bot_login
    section = settings.digest
    targets = targets_of(section, settings)
    today = ctx.now.date().isoformat()
    scans = [ctx.scan_of(name) for name in ctx.repositories()]
    digest_issue = _digest_issue(scans[0], settings.digest_issue)
    comments = _read_comments(ctx.github, digest_issue) if "issue-comment" in targets else []
    closed = {s.repository: facts.closed_since(s) for s in scans if facts.quiet(s)}
    existing = todays_comment(comments, today, bot)
    slack = "slack" in targets and settings.slack_webhook_url is not None
    if (
        existing is not None
        and len(closed) == len(scans)
        and not any(closed.values())
        and not (slack and _slack_behind(existing))
    ):
        _unchanged(ctx, existing, slack=slack)
        return
    # Each repository is compared with its own last digest (rules.digest.state.merge_previous).
    reads = [(ctx.github.repository, previous_state(comments, today, bot))]
    for other in scans[1:]:
        theirs = _read_comments(other.github, _digest_issue(other, None))
        reads.append((other.repository, previous_state(theirs, today, bot)))
    previous = merge_previous(reads)
    config = digest_config(settings)
    since = _since(ctx.now, section.window, previous)
    sources = [
        facts.gather(
            s, now=ctx.now, config=config, since=since, bot=bot, closed=closed.get(s.repository)
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
        comments=comments,
        digest_issue=digest_issue,
        workspace=Path(ctx.workflow_env.get("GITHUB_WORKSPACE") or "."),
        log=log,
        budget=ctx.writes,
        full_url=_run_url(ctx.workflow_env),
    )
    for source in sources:
        facts.store(source, config, dry_run=settings.dry_run, log=log, budget=ctx.writes)
    _report(ctx, outcome)


def _slack_behind(existing: Comment) -> bool:
    """Slack did not get the tasks the day's comment shows (its post failed, or Slack became
    a target since): a run where nothing changed still posts them."""
    posted = slack_posted(existing.body)
    own = find_state(existing.body)
    return posted is None or own.status != "restored" or posted != tasks_digest(own.state)


def _digest_issue(found: Scan, configured: int | None) -> int | None:
    """The digest issue of FOUND's repository: CONFIGURED, else the open issue labelled
    ai-context:digest (the scan's listing shows it when it read far enough; else one listing
    by the label)."""
    if configured is not None:
        return configured
    labelled = [i for i in found.ours if DIGEST_LABEL in i.labels and i.state == "open"]
    if not labelled and not found.listed_all:
        labelled = found.github.list_issues("open", labels=[DIGEST_LABEL])
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


def _run_url(env: Mapping[str, str]) -> str:
    if not (env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY")):
        return ""
    server = env.get("GITHUB_SERVER_URL") or "https://github.com"
    return f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"


def _unchanged(ctx: RunContext, existing: Comment, *, slack: bool) -> None:
    """Nothing changed since the day's comment: it stands, and the summary links it."""
    lines = [f"comment: [unchanged]({existing.html_url}): nothing changed since the last run"]
    if slack:
        lines.append("Slack: not posted: it got these tasks earlier today")
    ctx.workflow.log("ai-context: digest: nothing changed since the last run; the comment stands")
    ctx.outputs["digest-url"] = existing.html_url
    ctx.summary.append(Delivery(None, "", report=lines).section())
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
