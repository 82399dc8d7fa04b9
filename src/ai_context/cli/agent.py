"""`ai-context save | resume | handoff | done`: the agent commands, run by jobs/agent/.

Agents run these at every checkpoint, so start-up stays lean: nothing heavy is imported at the
top, and the GitHub adapter only when a command runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ai_context.adapters.clients import TOKEN_ENVS
from ai_context.adapters.config_file import DEFAULT_CONFIG, check_config, config_path
from ai_context.cli.common import (
    add_actor,
    add_format,
    add_issue,
    add_repo,
    read_input,
    resolve_actor,
    resolve_repository,
    stderr_note,
    timestamp_arg,
)
from ai_context.core.block.parse import parse
from ai_context.core.errors import UsageError
from ai_context.jobs.agent.mirror import agent_mirror_hook
from ai_context.jobs.agent.output import EXIT_BY_STATUS, outcome_json, outcome_text

if TYPE_CHECKING:
    from ai_context.adapters.github import GitHub
    from ai_context.core.block.model import Block
    from ai_context.jobs.agent.model import Outcome


def add_agent_commands(sub: Any) -> None:
    """Register save, resume, handoff and done on the `ai-context` subcommand parser."""

    def common(p: argparse.ArgumentParser) -> None:
        add_repo(p)
        p.add_argument(
            "--token-env", metavar="NAME", help="read the token from $NAME (default GITHUB_TOKEN)"
        )
        p.add_argument(
            "--cache",
            metavar="PATH",
            help="cache directory, or a .json file for one active task "
            "(default $AI_CONTEXT_CACHE or .ai-context/cache)",
        )
        add_actor(p)
        p.add_argument(
            "--config",
            metavar="FILE",
            help=f"the config file: required:, actors, lease:, the mirror's settings (default "
            f"$AI_CONTEXT_CONFIG or {DEFAULT_CONFIG})",
        )
        p.add_argument("--now", type=timestamp_arg, help="fix the clock (ISO 8601) for timestamps")
        add_format(p)

    def writes(p: argparse.ArgumentParser) -> None:
        p.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
        p.add_argument(
            "--take",
            choices=("local",),
            help="write even though the write guard refuses (another actor's block, or one "
            "this machine has not read); logged with both copies",
        )
        common(p)

    def command(name: str, about: str, handler: Any) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, help=about)
        add_issue(p, nargs="?" if name == "resume" else None)
        p.set_defaults(handler=handler)
        return p

    save = command("save", "write an AI Context block into its issue", cmd_save)
    save.add_argument(
        "--from",
        dest="source",
        metavar="FILE",
        help="the block (or a body holding it); default stdin",
    )
    writes(save)

    resume = command("resume", "reconcile the local copy with the issue and go on", cmd_resume)
    resume.add_argument(
        "--take", choices=("local", "remote"), help="resolve a conflict with this copy"
    )
    resume.add_argument("--assignee", metavar="LOGIN", help="your GitHub login (finds your task)")
    common(resume)

    handoff = command("handoff", "hand the task to another actor", cmd_handoff)
    handoff.add_argument("--to", required=True, metavar="ACTOR", help="the next actor's id")
    handoff.add_argument("--description", metavar="TEXT", help="who the next actor is")
    handoff.add_argument("--next-step", metavar="TEXT", help="replace Next step")
    writes(handoff)

    done = command("done", "write the final block: what shipped, the PR, follow-ups", cmd_done)
    done.add_argument("--pr", metavar="URL", help="the pull request that shipped it")
    done.add_argument(
        "--followup",
        action="extend",
        nargs="+",
        default=[],
        metavar="TEXT",
        help="follow-up work, one argument each",
    )
    done.add_argument("--shipped", metavar="TEXT", help="default: the plan's done steps")
    done.add_argument(
        "--done-step",
        dest="done_steps",
        action="append",
        type=_step_number,
        default=[],
        metavar="N",
        help="plan step N is done with the finish (e.g. the Open PR step, with --pr); a step "
        "still pending that is not named is marked skipped (repeatable)",
    )
    writes(done)


def _github(args: argparse.Namespace, env: Mapping[str, str]) -> GitHub:
    names = [args.token_env] if args.token_env else list(TOKEN_ENVS)
    repository = resolve_repository(args, env)
    from ai_context.adapters.clients import github_from_env  # noqa: PLC0415

    return github_from_env(repository, env, token_names=names)


def _step_number(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a plan step number (1, 2, ...)")
    return int(text)


def _read_block(args: argparse.Namespace, stdin: TextIO) -> Block:
    source = args.source or "-"
    if source == "-" and stdin.isatty():
        raise UsageError("pipe the block on stdin or pass --from FILE")
    name, text = read_input(source, stdin)
    parsed = parse(text)
    fatal = [f for f in parsed.findings if f.code in ("AIC101", "AIC102")]
    if parsed.block is None or fatal:
        raise UsageError(
            "\n".join(f"{name}:{f.line or 1}: {f.code} {f.message}; {f.hint}" for f in fatal)
        )
    for f in parsed.findings:
        if f.code != "AIC301":  # save stamps Last updated itself
            sys.stderr.write(f"{name}:{f.line or 1}: {f.code} {f.severity} {f.message}\n")
    return parsed.block


def _run(
    args: argparse.Namespace, out: TextIO, work: Callable[..., Outcome], *, release: bool = False
) -> int:
    """WORK (a job, its own options bound) with the settings, `--take` and `--dry-run` the
    agent commands share; RELEASE: the writer's lease is released once the block has landed.
    `--config FILE` is the config file of every step: required:, the mirror and the lease."""
    env: Mapping[str, str] = os.environ
    if args.config:
        env = {**env, "AI_CONTEXT_CONFIG": str(args.config)}
    # The fields a complete block needs, as the Action reads them (no file, no YAML).
    required = check_config(config_path(env), env).required
    gh = _github(args, env)
    from ai_context.adapters.cache import open_cache  # noqa: PLC0415
    from ai_context.adapters.github import GitHubNotFound  # noqa: PLC0415

    cache = open_cache(args.cache, dict(env))
    common: dict[str, Any] = {"required": required, "take": args.take}
    common["now"] = args.now or datetime.now(UTC)
    if "dry_run" in args:  # resume has no dry run
        common["dry_run"] = args.dry_run
    if release:
        from ai_context.jobs.agent.finishing import lease_release  # noqa: PLC0415

        common["release_lease"] = lease_release(gh, env, Path.cwd(), stderr_note)
    mirror = agent_mirror_hook(env, Path.cwd(), stderr_note)
    try:
        outcome = work(gh, cache, mirror=mirror, **common)
    except GitHubNotFound as exc:
        raise UsageError(
            f"{exc}; check the issue number and the repository ({gh.repository})"
        ) from exc
    calls = gh.counter.total
    if args.format == "json":
        out.write(json.dumps(outcome_json(outcome, calls), ensure_ascii=False) + "\n")
    else:
        out.write(outcome_text(outcome, calls))
    return int(EXIT_BY_STATUS[outcome.status])


def cmd_save(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    block = _read_block(args, stdin)
    actor = resolve_actor(args, os.environ)
    from ai_context.jobs.agent.saving import save  # noqa: PLC0415

    return _run(args, out, partial(save, number=args.issue.number, block=block, writer=actor))


def cmd_resume(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    del stdin
    actor = resolve_actor(args, os.environ)
    from ai_context.jobs.agent.resuming import resume  # noqa: PLC0415

    def login() -> str | None:
        from ai_context.adapters.config import owner_of  # noqa: PLC0415 - resume step 1 only

        return args.assignee or owner_of(actor, config_path(os.environ, args.config))

    number = args.issue.number if args.issue else None
    return _run(args, out, partial(resume, number=number, actor=actor, login=login))


def cmd_handoff(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    del stdin
    actor = resolve_actor(args, os.environ)
    from ai_context.jobs.agent.finishing import handoff  # noqa: PLC0415

    options = {"description": args.description, "next_step": args.next_step}
    work = partial(handoff, number=args.issue.number, to=args.to, writer=actor, **options)
    return _run(args, out, work, release=True)


def cmd_done(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    del stdin
    actor = resolve_actor(args, os.environ)
    from ai_context.jobs.agent.finishing import done  # noqa: PLC0415

    options = {"followups": args.followup, "shipped": args.shipped, "done_steps": args.done_steps}
    work = partial(done, number=args.issue.number, pr=args.pr, writer=actor, **options)
    return _run(args, out, work, release=True)
