"""`digest`, `summary` and `status`: the seeds' /daily-summary and /status, live or offline.

They read GitHub (see `cli.report_source` for which repositories) or, with `--issues-dir`, a folder
of issue files, and print for a terminal (plain text, colour on a TTY), for GitHub (`--format
md`) or for programs (`--format json`, one key vocabulary, see `rules.digest.json`). Delivery
to the digest issue and Slack belongs to the digest job, which calls the same `build_digest`,
`render_markdown` and `slack_messages`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from ai_context.cli.common import add_issue
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

ErrorType = Callable[[str], Exception]
FORMATS = ("text", "md", "json", "slack-json", "slack")  # `slack` is short for `slack-json`


def register(sub: Any, *, usage_error: ErrorType, **_: Any) -> None:
    """Add the subcommands to `sub` (argparse subparsers); errors become `usage_error`."""
    from ai_context.cli.common import duration_arg  # noqa: PLC0415

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
    digest.set_defaults(handler=partial(_guarded, cmd_digest, usage_error))

    summary = sub.add_parser("summary", help="one task's progress summary (/daily-summary)")
    add_issue(summary)
    add_source_options(summary, ("text", "md", "json"), filters=())
    summary.set_defaults(handler=partial(_guarded, cmd_summary, usage_error))

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
    status.set_defaults(handler=partial(_guarded, cmd_status, usage_error))

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
    test.set_defaults(handler=partial(_guarded, cmd_slack_test, usage_error))


def _guarded(
    command: Callable[[argparse.Namespace, TextIO], int],
    usage_error: ErrorType,
    args: argparse.Namespace,
    out: TextIO,
    stdin: TextIO,
) -> int:
    """Run a report; a template's error is a TemplateError (exit 2, core.errors)."""
    from jinja2 import TemplateError as JinjaError  # noqa: PLC0415

    from ai_context.core.errors import TemplateError  # noqa: PLC0415

    del stdin, usage_error  # errors are core.errors kinds; main maps them to exit codes
    try:
        return command(args, out)
    except JinjaError as exc:
        raise TemplateError(
            f"template error: {exc}; fix the template (or remove it from --templates to use "
            "the bundled one)"
        ) from exc


def _templates(args: argparse.Namespace) -> Any:
    from ai_context.adapters.templates import Templates  # noqa: PLC0415
    from ai_context.core.errors import UsageError  # noqa: PLC0415

    try:
        return Templates(args.templates)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _read_previous(path: Path) -> Any:
    """`--previous FILE`: the digest (its Markdown) to compare with."""
    from ai_context.core.errors import UsageError  # noqa: PLC0415
    from ai_context.rules.digest.state import find_state  # noqa: PLC0415

    try:
        return find_state(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the previous digest: {exc}") from exc


def _restricted(previous: Any, issues: list[Any]) -> Any:
    """The baseline of the issues a filter kept: the others are not news in a filtered view."""
    from ai_context.rules.digest.model import DigestState  # noqa: PLC0415

    keys = {(i.repository, i.number) for i in issues}
    state = previous.state
    tasks = {key: task for key, task in state.tasks.items() if key in keys}
    return previous.model_copy(
        update={"state": DigestState(generated_at=state.generated_at, tasks=tasks)}
    )


def _digest(args: argparse.Namespace, source: Source, *, compare: bool = False) -> Any:
    """The digest as the Action builds it (same settings, same reading), with the filters;
    with `--since`, also the period's trends (None otherwise)."""
    from ai_context.rules.digest.build import build_digest  # noqa: PLC0415

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
            previous = _restricted(previous, issues)
    digest = build_digest(issues, now, config, previous)
    if since is None:
        return digest, None
    from ai_context.rules.digest.trends import trends  # noqa: PLC0415

    return digest, trends(_history(got.comments, source), now - since, digest)


def _history(comments: dict[str, list[Any]], source: Source) -> list[Any]:
    """Every digest state the digest issues' comments carry (each repository's own tasks)."""
    from ai_context.jobs.digest.delivery import day_of  # noqa: PLC0415
    from ai_context.rules.digest.state import find_state  # noqa: PLC0415

    states = []
    for listed in comments.values():
        for comment in listed:
            read = find_state(comment.body) if day_of(comment, source.config.bot_login) else None
            if read is not None and read.status == "restored":
                states.append(read.state)
    return states


def _period_start(comments: dict[str, list[Any]], start: Any, source: Source) -> Any:
    """What a period's digest compares with: each repository's last digest at or before START."""
    from ai_context.jobs.digest.delivery import day_of  # noqa: PLC0415
    from ai_context.rules.digest.state import find_state, merge_previous  # noqa: PLC0415

    bot = source.config.bot_login
    reads = []
    for repo in source.repos:
        dated = [
            read
            for read in (find_state(c.body) for c in comments.get(repo, []) if day_of(c, bot))
            if read.status == "restored"
            and read.state.generated_at is not None
            and read.state.generated_at <= start
        ]
        if dated:
            reads.append((repo, max(dated, key=lambda r: r.state.generated_at or start)))
    return merge_previous(reads)


def cmd_digest(args: argparse.Namespace, out: TextIO) -> int:
    source = open_source(args)
    templates = _templates(args)
    digest, period = _digest(args, source, compare=True)
    if args.format == "json":
        from ai_context.rules.digest.json import digest_json, trends_json  # noqa: PLC0415

        data = digest_json(digest)
        if period is not None:
            data["trends"] = trends_json(period)
        finish(out, json.dumps(data, ensure_ascii=False, indent=2))
    elif args.format in ("slack", "slack-json"):
        from ai_context.rules.digest.slack import slack_messages  # noqa: PLC0415

        finish(out, json.dumps(templates.run(slack_messages, digest), ensure_ascii=False))
    elif args.format == "md":
        from ai_context.rules.digest.render import render_markdown, render_trends  # noqa: PLC0415

        head = render_trends(period, digest.multi_repo) if period is not None else ""
        finish(out, head + templates.run(render_markdown, digest))
    else:
        from ai_context.rules.digest.text import digest_text, trends_text  # noqa: PLC0415

        colour = colour_for(out)
        head = trends_text(period, digest.multi_repo, colour=colour) if period is not None else ""
        finish(out, head + digest_text(digest, colour=colour))
    return 0


def cmd_slack_test(args: argparse.Namespace, out: TextIO) -> int:
    """Post one short message to the webhook, to learn before the next digest whether it
    works; Slack's refusal comes with what to do about it."""
    import os  # noqa: PLC0415
    import socket  # noqa: PLC0415

    from ai_context.adapters import clients  # noqa: PLC0415
    from ai_context.adapters.slack import webhook_problem  # noqa: PLC0415
    from ai_context.core.errors import ServiceError, UsageError  # noqa: PLC0415
    from ai_context.core.secret import Secret  # noqa: PLC0415

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
    from ai_context.rules.digest.build import summarize_task  # noqa: PLC0415

    source = open_source(args)
    templates = _templates(args)
    issue = read_one(source, args.issue)
    summary = summarize_task(issue, now_of(args, source), digest_config(args, source))
    if args.format == "json":
        from ai_context.rules.digest.json import summary_json  # noqa: PLC0415

        finish(out, json.dumps(summary_json(summary), ensure_ascii=False, indent=2))
    elif args.format == "md":
        from ai_context.rules.digest.render import render_task  # noqa: PLC0415

        finish(out, templates.run(render_task, summary))
    else:
        from ai_context.rules.digest.text import task_text  # noqa: PLC0415

        finish(out, task_text(summary, colour=colour_for(out)))
    return 0


def _wanted_actor(args: argparse.Namespace) -> str | None:
    import os  # noqa: PLC0415

    from ai_context.core.errors import UsageError  # noqa: PLC0415

    if args.actor and args.actor_option and args.actor != args.actor_option:
        raise UsageError("give the actor once: either ACTOR or --actor")
    if args.all:
        return None
    return args.actor or args.actor_option or os.environ.get("AI_CONTEXT_ACTOR") or None


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    from ai_context.rules.digest.plate import actors, plates_for  # noqa: PLC0415

    wanted = _wanted_actor(args)
    source = open_source(args)
    templates = _templates(args)
    digest, _ = _digest(args, source)
    known = actors(digest)
    plates = plates_for(digest, wanted, source.config.actors)
    if args.format == "json":
        from ai_context.rules.digest.json import plate_json  # noqa: PLC0415

        finish(out, json.dumps([plate_json(p) for p in plates], ensure_ascii=False, indent=2))
    elif args.format == "md":
        from ai_context.rules.digest.render import render_status  # noqa: PLC0415

        finish(out, templates.run(render_status, plates, known_actors=known))
    else:
        from ai_context.rules.digest.text import status_text  # noqa: PLC0415

        finish(out, status_text(plates, known_actors=known, colour=colour_for(out)))
    return 0
