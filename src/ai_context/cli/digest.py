"""The `digest`, `summary` and `status` subcommands: offline reports over a directory of issues.

They read issues from a directory store (as `examples/` holds them) and print; delivery to
GitHub and Slack belongs to the digest job, which calls the same `build_digest`,
`render_markdown` and `slack_messages`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from jinja2 import Environment, TemplateError

from ai_context.adapters.store import DirectoryStore, StoreError
from ai_context.core.errors import TemplateError as BoundedTemplateError
from ai_context.rules.digest import (
    DigestConfig,
    StateRead,
    actors,
    build_digest,
    digest_json,
    find_state,
    plate,
    summarize_task,
)
from ai_context.rules.digest_render import (
    render_markdown,
    render_status,
    render_task,
    slack_messages,
)
from ai_context.rules.templating import make_env

FORMATS = ("md", "json", "slack-json", "slack")  # `slack` is short for `slack-json`

ErrorType = Callable[[str], Exception]


def register(
    sub: Any,
    *,
    timestamp: Callable[[str], Any],
    duration: Callable[[str], Any],
    usage_error: ErrorType,
) -> None:
    """Add the subcommands to `sub` (argparse subparsers); errors become `usage_error`."""

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--issues-dir",
            "--source",
            dest="issues_dir",
            type=Path,
            required=True,
            metavar="DIR",
            help="a directory of issue files (Markdown with a front-matter header)",
        )
        p.add_argument(
            "--repository",
            default="local/examples",
            metavar="OWNER/NAME",
            help="the repository files without one belong to (default local/examples)",
        )
        p.add_argument("--now", type=timestamp, help="fix the clock (ISO 8601)")
        p.add_argument(
            "--window",
            type=duration,
            default=None,
            help="how far back closed issues count as shipped, e.g. 24h (default 24h)",
        )
        p.add_argument(
            "--stale-after", type=duration, default=None, help="e.g. 90m, 24h, 3d (default 24h)"
        )
        p.add_argument(
            "--templates", type=Path, metavar="DIR", help="your templates, tried before ours"
        )

    digest = sub.add_parser(
        "digest", help="the daily digest: shipped, in review, in progress, stuck"
    )
    common(digest)
    digest.add_argument("--format", choices=FORMATS, default="md")
    digest.add_argument(
        "--previous",
        type=Path,
        metavar="FILE",
        help="a previous digest (its Markdown) to report changes against",
    )
    digest.set_defaults(handler=partial(cmd_digest, usage_error=usage_error))

    summary = sub.add_parser("summary", help="one task's progress summary")
    summary.add_argument("issue", metavar="ISSUE", help="issue number, e.g. 104 or #104")
    common(summary)
    summary.add_argument("--format", choices=("md", "json"), default="md")
    summary.set_defaults(handler=partial(cmd_summary, usage_error=usage_error))

    status = sub.add_parser("status", help="what is on an actor's plate, by urgency")
    status.add_argument("actor", nargs="?", metavar="ACTOR", help="actor id (default: every actor)")
    status.add_argument("--actor", dest="actor_option", metavar="ACTOR", help="same as ACTOR")
    common(status)
    status.add_argument("--format", choices=("md", "json"), default="md")
    status.set_defaults(handler=partial(cmd_status, usage_error=usage_error))


def _config(args: argparse.Namespace) -> DigestConfig:
    values: dict[str, Any] = {}
    if args.window is not None:
        values["window"] = args.window
    if args.stale_after is not None:
        values["stale_after"] = args.stale_after
    return DigestConfig(**values)


def _store(args: argparse.Namespace, usage_error: ErrorType) -> DirectoryStore:
    try:
        return DirectoryStore(args.issues_dir, args.repository)
    except StoreError as exc:
        raise usage_error(str(exc)) from exc


def _env(args: argparse.Namespace, usage_error: ErrorType) -> Environment:
    try:
        return make_env(args.templates)
    except ValueError as exc:
        raise usage_error(str(exc)) from exc


def _previous(path: Path | None, usage_error: ErrorType) -> StateRead | None:
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise usage_error(f"{path}: cannot read the previous digest: {exc}") from exc
    return find_state(text)


def _rendering(usage_error: ErrorType, action: Callable[[], str]) -> str:
    """The rendered text, ending in one newline; a template's error is a usage error."""
    try:
        text = action()
    except BoundedTemplateError as exc:  # templating.render's: it says "template error: ..."
        raise usage_error(f"{exc}; fix the template (or remove it from --templates)") from exc
    except TemplateError as exc:
        raise usage_error(
            f"template error: {exc}; fix the template (or remove it from --templates to use "
            "the bundled one)"
        ) from exc
    return text if text.endswith("\n") else text + "\n"


def cmd_digest(
    args: argparse.Namespace, out: TextIO, stdin: TextIO, *, usage_error: ErrorType
) -> int:
    del stdin
    store = _store(args, usage_error)
    env = _env(args, usage_error)
    now = args.now or datetime.now(UTC)
    previous = _previous(args.previous, usage_error)
    digest = build_digest(store.list_issues("all"), now, _config(args), previous)
    if args.format == "json":
        out.write(json.dumps(digest_json(digest), ensure_ascii=False, indent=2) + "\n")
    elif args.format in ("slack", "slack-json"):
        messages = _rendering(
            usage_error, lambda: json.dumps(slack_messages(digest, env), ensure_ascii=False)
        )
        out.write(messages)
    else:
        out.write(_rendering(usage_error, lambda: render_markdown(digest, env)))
    return 0


def _issue_number(text: str, usage_error: ErrorType) -> int:
    raw = text.strip().rsplit("#", 1)[-1]
    if not raw.isdigit() or int(raw) < 1:
        raise usage_error(f"{text!r} is not an issue number; write it like 104 or #104")
    return int(raw)


def cmd_summary(
    args: argparse.Namespace, out: TextIO, stdin: TextIO, *, usage_error: ErrorType
) -> int:
    del stdin
    number = _issue_number(args.issue, usage_error)
    store = _store(args, usage_error)
    env = _env(args, usage_error)
    try:
        issue = store.get_issue(number)
    except StoreError as exc:
        raise usage_error(str(exc)) from exc
    summary = summarize_task(issue, args.now or datetime.now(UTC), _config(args))
    if args.format == "json":
        out.write(summary.model_dump_json(indent=2) + "\n")
    else:
        out.write(_rendering(usage_error, lambda: render_task(summary, env)))
    return 0


def cmd_status(
    args: argparse.Namespace, out: TextIO, stdin: TextIO, *, usage_error: ErrorType
) -> int:
    del stdin
    if args.actor and args.actor_option and args.actor != args.actor_option:
        raise usage_error("give the actor once: either ACTOR or --actor")
    wanted = args.actor or args.actor_option
    store = _store(args, usage_error)
    env = _env(args, usage_error)
    digest = build_digest(store.list_issues("all"), args.now or datetime.now(UTC), _config(args))
    known = actors(digest)
    plates = [plate(digest, wanted)] if wanted else [plate(digest, a) for a in known]
    if args.format == "json":
        data = [json.loads(p.model_dump_json()) for p in plates]
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(_rendering(usage_error, lambda: render_status(plates, env, known_actors=known)))
    return 0
