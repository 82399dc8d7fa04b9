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

from collections.abc import Mapping
from typing import Any

from ai_context.adapters.config import Settings
from ai_context.adapters.github import (
    issue_from_json,
)
from ai_context.core.block import find
from ai_context.core.errors import ConfigError
from ai_context.jobs.context import Route
from ai_context.jobs.registry import AUTO_JOBS, JOBS
from ai_context.rules.gitlog import (
    PushPayloadError,
    commits_from_push,
    group_by_issue,
    session_files_changed,
)
from ai_context.rules.mirror import find_link

ISSUE_ACTIONS = frozenset({"opened", "edited", "reopened", "labeled", "unlabeled"})


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
