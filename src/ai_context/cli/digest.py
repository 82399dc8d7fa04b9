"""`digest`, `summary` and `status`: the seeds' /daily-summary and /status, live or offline.

They read GitHub (see `cli.reports` for which repositories) or, with `--issues-dir`, a folder
of issue files, and print for a terminal (plain text, colour on a TTY), for GitHub (`--format
md`) or for programs (`--format json`, one key vocabulary, see `rules.digest_json`). Delivery
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
from ai_context.cli.reports import (
    Source,
    add_source_options,
    colour_for,
    finish,
    now_of,
    open_source,
    read_all,
    read_one,
    service_errors,
    stale_after_of,
    window_of,
)

ErrorType = Callable[[str], Exception]
FORMATS = ("text", "md", "json", "slack-json", "slack")  # `slack` is short for `slack-json`


def register(sub: Any, *, usage_error: ErrorType, **_: Any) -> None:
    """Add the subcommands to `sub` (argparse subparsers); errors become `usage_error`."""
    digest = sub.add_parser(
        "digest", help="the daily digest: stuck, in review, in progress, shipped"
    )
    add_source_options(digest, FORMATS)
    digest.add_argument(
        "--previous",
        type=Path,
        metavar="FILE",
        help="a previous digest (its Markdown) to report changes against; live, the default "
        "is the digest issue's latest comment",
    )
    digest.set_defaults(handler=partial(_guarded, cmd_digest, usage_error))

    summary = sub.add_parser("summary", help="one task's progress summary (/daily-summary)")
    add_issue(summary)
    add_source_options(summary, ("text", "md", "json"))
    summary.set_defaults(handler=partial(_guarded, cmd_summary, usage_error))

    status = sub.add_parser("status", help="what is on an actor's plate, by urgency (/status)")
    status.add_argument(
        "actor",
        nargs="?",
        metavar="ACTOR",
        help="an actor id or a GitHub login (through the config's actors:); default "
        "AI_CONTEXT_ACTOR, else every actor",
    )
    status.add_argument("--actor", dest="actor_option", metavar="ACTOR", help="same as ACTOR")
    status.add_argument("--all", action="store_true", help="every actor, whatever is set")
    add_source_options(status, ("text", "md", "json"))
    status.set_defaults(handler=partial(_guarded, cmd_status, usage_error))


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


def _config(args: argparse.Namespace, source: Source) -> Any:
    from ai_context.rules.digest import DigestConfig  # noqa: PLC0415

    return DigestConfig(window=window_of(args, source), stale_after=stale_after_of(args, source))


def _templates(args: argparse.Namespace) -> Any:
    from ai_context.adapters.templates import Templates  # noqa: PLC0415
    from ai_context.core.errors import UsageError  # noqa: PLC0415

    try:
        return Templates(args.templates)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _previous(args: argparse.Namespace, source: Source, issues: list[Any]) -> Any:
    """The digest to compare with: `--previous FILE`, else (live) the one the digest issue of
    the first repository holds (found among the issues already listed: no extra listing)."""
    from ai_context.core.errors import UsageError  # noqa: PLC0415
    from ai_context.rules.digest_state import find_state  # noqa: PLC0415

    if args.previous is not None:
        try:
            return find_state(args.previous.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{args.previous}: cannot read the previous digest: {exc}") from exc
    if not source.live or source.github is None:
        return None
    from ai_context.jobs.digest import previous_state  # noqa: PLC0415
    from ai_context.jobs.digest_delivery import DIGEST_LABEL  # noqa: PLC0415

    first = source.repos[0]
    labelled = (
        i.number
        for i in issues
        if i.repository == first and i.state == "open" and DIGEST_LABEL in i.labels
    )
    number = source.config.digest_issue or min(labelled, default=None)
    if number is None:
        return None
    with service_errors(first):
        comments = source.github(first).list_comments(number)
    today = now_of(args, source).date().isoformat()
    return previous_state(comments, today, source.config.bot_login)


def _digest(args: argparse.Namespace, source: Source, *, compare: bool = False) -> Any:
    from ai_context.rules.digest import build_digest  # noqa: PLC0415

    now = now_of(args, source)
    config = _config(args, source)
    issues = read_all(source, now - config.window)
    previous = _previous(args, source, issues) if compare else None
    return build_digest(issues, now, config, previous)


def cmd_digest(args: argparse.Namespace, out: TextIO) -> int:
    source = open_source(args)
    templates = _templates(args)
    digest = _digest(args, source, compare=True)
    if args.format == "json":
        from ai_context.rules.digest_json import digest_json  # noqa: PLC0415

        finish(out, json.dumps(digest_json(digest), ensure_ascii=False, indent=2))
    elif args.format in ("slack", "slack-json"):
        from ai_context.rules.digest_slack import slack_messages  # noqa: PLC0415

        finish(out, json.dumps(templates.run(slack_messages, digest), ensure_ascii=False))
    elif args.format == "md":
        from ai_context.rules.digest_render import render_markdown  # noqa: PLC0415

        finish(out, templates.run(render_markdown, digest))
    else:
        from ai_context.rules.digest_text import digest_text  # noqa: PLC0415

        finish(out, digest_text(digest, colour=colour_for(out)))
    return 0


def cmd_summary(args: argparse.Namespace, out: TextIO) -> int:
    from ai_context.rules.digest import summarize_task  # noqa: PLC0415

    source = open_source(args)
    templates = _templates(args)
    issue = read_one(source, args.issue)
    summary = summarize_task(issue, now_of(args, source), _config(args, source))
    if args.format == "json":
        from ai_context.rules.digest_json import summary_json  # noqa: PLC0415

        finish(out, json.dumps(summary_json(summary), ensure_ascii=False, indent=2))
    elif args.format == "md":
        from ai_context.rules.digest_render import render_task  # noqa: PLC0415

        finish(out, templates.run(render_task, summary))
    else:
        from ai_context.rules.digest_text import task_text  # noqa: PLC0415

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
    from ai_context.rules.digest_plate import actors, plates_for  # noqa: PLC0415

    wanted = _wanted_actor(args)
    source = open_source(args)
    templates = _templates(args)
    digest = _digest(args, source)
    known = actors(digest)
    plates = plates_for(digest, wanted, source.config.actors)
    if args.format == "json":
        from ai_context.rules.digest_json import plate_json  # noqa: PLC0415

        finish(out, json.dumps([plate_json(p) for p in plates], ensure_ascii=False, indent=2))
    elif args.format == "md":
        from ai_context.rules.digest_render import render_status  # noqa: PLC0415

        finish(out, templates.run(render_status, plates, known_actors=known))
    else:
        from ai_context.rules.digest_text import status_text  # noqa: PLC0415

        finish(out, status_text(plates, known_actors=known, colour=colour_for(out)))
    return 0
