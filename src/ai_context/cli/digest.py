"""`digest`, `summary` and `status`: the seeds' /daily-summary and /status, live or offline,
built and rendered by the same rules/digest/ functions the digest job delivers with.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from jinja2 import TemplateError as JinjaError

from ai_context.adapters import clients
from ai_context.adapters.templates import Templates
from ai_context.cli.common import add_issue, duration_arg
from ai_context.cli.report_source import (
    Source,
    add_source_options,
    colour_for,
    digest_config,
    finish,
    now_of,
    open_source,
    read_all,
    read_one,
    select,
)
from ai_context.core.errors import ServiceError, TemplateError, UsageError
from ai_context.core.models import Comment
from ai_context.core.secret import Secret
from ai_context.rules.digest.build import build_digest, summarize_task
from ai_context.rules.digest.json import digest_json, plate_json, summary_json, trends_json
from ai_context.rules.digest.model import Digest, DigestState, StateRead
from ai_context.rules.digest.plate import actors, plates_for
from ai_context.rules.digest.render import (
    render_markdown,
    render_status,
    render_task,
    render_trends,
)
from ai_context.rules.digest.slack import slack_messages
from ai_context.rules.digest.state import find_state, merge_previous
from ai_context.rules.digest.text import digest_text, status_text, task_text, trends_text
from ai_context.rules.digest.trends import Trends, trends

FORMATS = ("text", "md", "json", "slack-json", "slack")  # `slack` is short for `slack-json`
Command = Callable[[argparse.Namespace, TextIO], int]


def register(sub: Any) -> None:
    """Add the subcommands to `sub` (argparse subparsers)."""
    digest = sub.add_parser(
        "digest", help="the daily digest: stuck, in review, in progress, shipped"
    )
    add_source_options(digest, FORMATS)
    digest.add_argument(
        "--previous",
        type=Path,
        metavar="FILE",
        help="a previous digest (its Markdown) to report changes against; live, the default "
        "is each repository's digest issue's latest comment",
    )
    digest.add_argument(
        "--since",
        type=duration_arg,
        metavar="DURATION",
        help="the trends of a period, e.g. 7d: shipped, time from the first block to done, "
        "time stuck, tasks stuck all along (from the digests of that period); the digest "
        "then covers the period and compares with the digest at its start",
    )
    digest.set_defaults(handler=partial(_guarded, cmd_digest))

    summary = sub.add_parser("summary", help="one task's progress summary (/daily-summary)")
    add_issue(summary)
    add_source_options(summary, ("text", "md", "json"), filters=())
    summary.set_defaults(handler=partial(_guarded, cmd_summary))

    status = sub.add_parser("status", help="what is on an actor's plate, by urgency (/status)")
    status.add_argument(
        "actor",
        nargs="?",
        metavar="ACTOR",
        help="an actor id or a GitHub login (the tasks it is assigned, or owns through the "
        "config's actors:); default AI_CONTEXT_ACTOR, else every actor",
    )
    status.add_argument("--actor", dest="actor_option", metavar="ACTOR", help="same as ACTOR")
    status.add_argument("--all", action="store_true", help="every actor, whatever is set")
    add_source_options(status, ("text", "md", "json"), filters=("owner", "label"))
    status.set_defaults(handler=partial(_guarded, cmd_status))

    slack = sub.add_parser("slack", help="Slack: send a test message to the digest's webhook")
    slack_sub = slack.add_subparsers(dest="slack_command", metavar="COMMAND", required=True)
    test = slack_sub.add_parser(
        "test",
        help="post one short message to SLACK_WEBHOOK_URL (or --webhook-url): exit 0 when "
        "Slack took it, 2 with what to fix when Slack refused it, 3 when it could not be reached",
    )
    test.add_argument(
        "--webhook-url",
        metavar="URL",
        help="the incoming webhook (default $SLACK_WEBHOOK_URL; prefer the variable: a URL on "
        "the command line stays in your shell's history)",
    )
    test.set_defaults(handler=partial(_guarded, cmd_slack_test))


def _guarded(command: Command, args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    """Run a report; a template's error is a TemplateError (exit 2, core.errors)."""
    del stdin
    try:
        return command(args, out)
    except JinjaError as exc:
        raise TemplateError(
            f"template error: {exc}; fix the template (or remove it from --templates to use "
            "the bundled one)"
        ) from exc


def _templates(args: argparse.Namespace) -> Templates:
    try:
        return Templates(args.templates)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _read_previous(path: Path) -> StateRead:
    """`--previous FILE`: the digest (its Markdown) to compare with."""
    try:
        return find_state(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the previous digest: {exc}") from exc


def _restricted(previous: StateRead, keys: set[tuple[str, int]]) -> StateRead:
    """The baseline of the issues a filter kept: the others are not news in a filtered view."""
    state = previous.state
    tasks = {key: task for key, task in state.tasks.items() if key in keys}
    return previous.model_copy(
        update={"state": DigestState(generated_at=state.generated_at, tasks=tasks)}
    )


def _digest(
    args: argparse.Namespace, source: Source, *, compare: bool = False
) -> tuple[Digest, Trends | None]:
    """The digest as the Action builds it (same settings, same reading), with the filters;
    with `--since`, also the period's trends (None otherwise)."""
    now = now_of(args, source)
    since = getattr(args, "since", None)
    if since is not None:
        args.window = args.window or since
    config = digest_config(args, source)
    got = read_all(source, now, config.window)
    issues = select(got.issues, args, config)
    previous = None
    if compare:
        previous = got.previous
        if since is not None:
            previous = _period_start(got.comments, now - since, source)
        if args.previous is not None:
            previous = _read_previous(args.previous)
        if len(issues) != len(got.issues):
            previous = _restricted(previous, {(i.repository, i.number) for i in issues})
    digest = build_digest(issues, now, config, previous)
    if since is None:
        return digest, None
    history = [read.state for listed in got.comments.values() for read in _reads(listed, source)]
    return digest, trends(history, now - since, digest)


def _reads(comments: list[Comment], source: Source) -> list[StateRead]:
    """The digest states the digest comments among COMMENTS carry."""
    from ai_context.jobs.digest.delivery import day_of  # noqa: PLC0415 - loads requests

    reads = (find_state(c.body) for c in comments if day_of(c, source.config.bot_login))
    return [read for read in reads if read.status == "restored"]


def _period_start(comments: dict[str, list[Comment]], start: datetime, source: Source) -> StateRead:
    """What a period's digest compares with: each repository's last digest at or before START."""
    reads = []
    for repo in source.repos:
        dated = [
            read
            for read in _reads(comments.get(repo, []), source)
            if read.state.generated_at is not None and read.state.generated_at <= start
        ]
        if dated:
            reads.append((repo, max(dated, key=lambda r: r.state.generated_at or start)))
    return merge_previous(reads)


def cmd_digest(args: argparse.Namespace, out: TextIO) -> int:
    source = open_source(args)
    templates = _templates(args)
    digest, period = _digest(args, source, compare=True)
    if args.format == "json":
        data = digest_json(digest)
        if period is not None:
            data["trends"] = trends_json(period)
        finish(out, json.dumps(data, ensure_ascii=False, indent=2))
    elif args.format in ("slack", "slack-json"):
        finish(out, json.dumps(templates.run(slack_messages, digest), ensure_ascii=False))
    elif args.format == "md":
        head = render_trends(period, digest.multi_repo) if period is not None else ""
        finish(out, head + templates.run(render_markdown, digest))
    else:
        colour = colour_for(out)
        head = trends_text(period, digest.multi_repo, colour=colour) if period is not None else ""
        finish(out, head + digest_text(digest, colour=colour))
    return 0


def cmd_slack_test(args: argparse.Namespace, out: TextIO) -> int:
    """Post one short message to the webhook, to learn before the next digest whether it
    works; Slack's refusal comes with what to do about it."""
    from ai_context.adapters.slack import webhook_problem  # noqa: PLC0415 - loads requests

    url = (args.webhook_url or os.environ.get("SLACK_WEBHOOK_URL", "")).strip()
    if not url:
        raise UsageError(
            "no webhook: set SLACK_WEBHOOK_URL to the incoming webhook's URL (or pass "
            "--webhook-url)"
        )
    problem = webhook_problem(url)
    if problem is not None:
        raise UsageError(f"the Slack webhook URL {problem}")
    text = f"ai-context: a test message from `ai-context slack test` on {socket.gethostname()}."
    result = clients.slack(Secret(url), attempts=2).post([{"text": text}])
    if result.ok:
        finish(out, "Slack took the test message: the webhook works.")
        return 0
    if result.status is not None and 400 <= result.status < 500 and result.status != 429:
        raise UsageError(f"Slack refused the test message: {result.error}")
    raise ServiceError(f"Slack did not take the test message: {result.error}")


def cmd_summary(args: argparse.Namespace, out: TextIO) -> int:
    source = open_source(args)
    templates = _templates(args)
    issue = read_one(source, args.issue)
    summary = summarize_task(issue, now_of(args, source), digest_config(args, source))
    if args.format == "json":
        finish(out, json.dumps(summary_json(summary), ensure_ascii=False, indent=2))
    elif args.format == "md":
        finish(out, templates.run(render_task, summary))
    else:
        finish(out, task_text(summary, colour=colour_for(out)))
    return 0


def _wanted_actor(args: argparse.Namespace) -> str | None:
    if args.actor and args.actor_option and args.actor != args.actor_option:
        raise UsageError("give the actor once: either ACTOR or --actor")
    if args.all:
        return None
    return args.actor or args.actor_option or os.environ.get("AI_CONTEXT_ACTOR") or None


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    wanted = _wanted_actor(args)
    source = open_source(args)
    templates = _templates(args)
    digest, _ = _digest(args, source)
    known = actors(digest)
    plates = plates_for(digest, wanted, source.config.actors)
    if args.format == "json":
        finish(out, json.dumps([plate_json(p) for p in plates], ensure_ascii=False, indent=2))
    elif args.format == "md":
        finish(out, templates.run(render_status, plates, known_actors=known))
    else:
        finish(out, status_text(plates, known_actors=known, colour=colour_for(out)))
    return 0
