"""Routing: which jobs an event asks for, and on which issues (`jobs: auto`).

issues (opened, edited, reopened, labeled, unlabeled) -> check that issue, from the payload;
    skipped quietly when the bot itself sent it, when an edit left the block as it was, or
    when only one of our own labels changed;
push -> check each issue the pushed commits name, with what the commits say about it
    (gitlog.compare_block), and every committed sp.json session file;
schedule, workflow_dispatch -> check every open issue that is a task, and look for stale
    and conflicting actors (the `stale` job) in the same comment plan.
"""

from __future__ import annotations

from ai_context.adapters.config import Config
from ai_context.core.block.locate import find
from ai_context.core.events import ISSUE_ACTIONS, Event, IssuesEvent, PushEvent, ScanEvent
from ai_context.jobs.context import Route
from ai_context.jobs.registry import AUTO_JOBS, JOBS
from ai_context.rules.mirror.link import find_link


def _block_text(body: str) -> str:
    """The first block's lines, trailing spaces aside ('' without one)."""
    regions = find(body)
    if not regions:
        return ""
    region = regions[0]
    return "\n".join(line.text.rstrip() for line in [region.heading, *region.lines]).strip()


def route(event: Event, settings: Config, repository: str) -> Route:
    """The jobs EVENT asks for (read once by core.events), and on which issues."""
    jobs = _jobs_for(event.name, settings)
    if isinstance(event, IssuesEvent):
        return _route_issue(event, settings, jobs)
    if isinstance(event, PushEvent):
        return _route_push(event, jobs, repository)
    if isinstance(event, ScanEvent):
        return Route(jobs, scan_all=True)
    return Route(jobs, skipped=f"event {event.name!r} is not one ai-context acts on")


def _jobs_for(event: str, settings: Config) -> tuple[str, ...]:
    """The jobs `jobs:` names (Config refuses any other), in JOBS order; `auto`: the event's."""
    if settings.jobs != ("auto",):
        return tuple(j for j in JOBS if j in settings.jobs)
    return AUTO_JOBS.get(event, ())


def _route_push(event: PushEvent, jobs: tuple[str, ...], repository: str) -> Route:
    """The issues the pushed commits name; the git rules load here, as only a push reads them."""
    from ai_context.rules.gitlog.checkpoints import group_by_issue  # noqa: PLC0415
    from ai_context.rules.gitlog.compare import session_files_changed  # noqa: PLC0415

    commits = list(event.commits)
    numbers = list(group_by_issue(commits, repository))
    if not numbers and not session_files_changed(commits):
        return Route(jobs, skipped="no pushed commit names an issue")
    return Route(jobs, numbers=numbers, commits=commits)


def _route_issue(event: IssuesEvent, settings: Config, jobs: tuple[str, ...]) -> Route:
    action = event.action
    if action not in ISSUE_ACTIONS or event.issue is None:
        return Route(jobs, skipped=f"issues.{action} needs no check")
    if event.sender.lower() == settings.bot_login.lower():
        return Route(jobs, skipped="the bot's own change")
    issue = event.issue
    if issue.is_pull_request:
        return Route(jobs, skipped="a pull request, not an issue")
    name = event.label or ""
    if action in ("labeled", "unlabeled") and name.startswith("ai-context:"):
        return Route(jobs, skipped=f"only our own label {name} changed")
    if action == "edited":
        old_body = event.body_before if event.body_changed else issue.body
        if _block_text(old_body) == _block_text(issue.body):
            # The block is as it was: nothing to check. The mirror still shows the title and
            # follows the ClickUp link, so a change to either is mirrored on its own.
            moved = event.title_changed or find_link(old_body) != find_link(issue.body)
            if moved and "mirror" in jobs and settings.clickup_token is not None:
                return Route(("mirror",), issues=[issue])
            what = "left the block as it was" if event.body_changed else "did not touch the body"
            return Route(jobs, skipped=f"the edit {what}")
    return Route(jobs, issues=[issue])
